/* stepwatch.h - one thread per step that watches it for its clients
 *
 * A step of slurmstepd has at most one watcher: a thread (it dies with
 * slurmstepd, even on SIGKILL, and takes no signals), one poll(2) loop,
 * an eventfd that stops it.  Its clients register before it starts:
 * confinement of policy dynamic (confine.h) and the profile recorder
 * (profclient.h).  Each loop turn asks every client that is still active
 * for its file descriptors and timeout (prepare), polls, and lets every
 * client process what came (process).  A client says when it is done; the
 * loop ends when every client is done or when stopped.  At the end, in
 * the thread, each client's finish() gets the step's wait status the
 * caller gave stepwatch_stop() (-1: unknown).
 *
 * The watcher itself never logs; clients log through their own sink.
 */
#ifndef PIN_STEPWATCH_H
#define PIN_STEPWATCH_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "libutil/errprintf.h"

#define STEPWATCH_MAX_CLIENTS 4
#define STEPWATCH_MAX_FDS 16

struct stepwatch_client {
    void *arg;
    /* Before each poll: do what is due now, then fill up to `max` fds and
     * lower *timeout_ms (-1: none) to when the client wants to be called
     * next.  Returns the fds filled, or -1: this client is done. */
    int (*prepare) (void *arg, struct pollfd *fds, int max, int *timeout_ms);
    /* After each poll (its fds' revents set).  -1: this client is done. */
    int (*process) (void *arg, const struct pollfd *fds, int nfds);
    /* Once, in the thread, when the loop ends (stopped or every client
     * done); status: the step's wait status given to stepwatch_stop, -1
     * if the loop ended by itself before. */
    void (*finish) (void *arg, int status);
};

typedef struct stepwatch stepwatch_t;

/* A watcher with no client, not started.  NULL, errno ENOMEM. */
stepwatch_t *stepwatch_create (void);

/* Register a client (copied) before stepwatch_start.  -1 with errp when
 * full or already started. */
int stepwatch_add (stepwatch_t *sw,
                   const struct stepwatch_client *c,
                   pin_error_t *errp);

/* Start the thread.  -1 with errp (no client, no eventfd, no thread);
 * then no client's finish() has run: the caller still owns what it
 * registered. */
int stepwatch_start (stepwatch_t *sw, pin_error_t *errp);

/* Started and not yet stopped? */
bool stepwatch_running (const stepwatch_t *sw);

/* Stop and join the thread (nothing if not running); status is passed to
 * the clients' finish().  The watcher's own CPU time and wall time, in
 * us, are returned (0 if it never ran).  Idempotent. */
void stepwatch_stop (stepwatch_t *sw,
                     int status,
                     int64_t *cpu_us,
                     int64_t *wall_us);

/* Stops it (status -1) and frees it.  NULL is fine; keeps errno. */
void stepwatch_destroy (stepwatch_t *sw);

/* Microseconds of clock `id` (CLOCK_MONOTONIC, CLOCK_REALTIME, ...). */
int64_t stepwatch_clock_us (int id);

#endif /* !PIN_STEPWATCH_H */
