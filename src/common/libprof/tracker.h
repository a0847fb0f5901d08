/* tracker.h - which tasks belong to a step, from proc connector events
 *
 * Starts from a set of root processes; a process is in the step if its
 * parent (the fork event's parent tgid) is, a thread if its process is.
 * Fed every event of the machine in the order received, it answers for
 * each one "in the step or not" and keeps, per task, its command (the
 * parent's at fork, the caller's reading at exec, the new one at a comm
 * event) and its start time.  No I/O: pure bookkeeping.
 */
#ifndef PIN_TRACKER_H
#define PIN_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cnproc.h"

struct tracker;

/* NULL with errno ENOMEM.  Destroy accepts NULL and keeps errno. */
struct tracker *tracker_create (void);
void tracker_destroy (struct tracker *t);

/* Add a root process (tgid; its threads are added as they are created,
 * the ones it has already are not known) with its command (may be NULL),
 * started at `ts_ns`.  -1 ENOMEM, EINVAL for pid <= 0. */
int tracker_add_root (struct tracker *t,
                      int32_t tgid,
                      const char *comm,
                      uint64_t ts_ns);

/* Feed one event.  Returns 1 if it concerns a task of the step, 0 if
 * not, -1 (ENOMEM) if the table could not grow (the event is then not
 * tracked: the caller counts it as lost).  For events of the step, fills
 * ev->comm with the command known for the task (EXIT: at its end) and
 * *start_ns (may be NULL) with the task's start (fork) time for EXIT.
 * An exited task is forgotten, so a reused pid is judged afresh; an
 * event older than the task's start (its fork, or when a root was added)
 * is an earlier holder's of the pid, read late, and not the step's. */
int tracker_feed (struct tracker *t,
                  struct cnproc_event *ev,
                  uint64_t *start_ns);

/* Set the command of a task of the step.  0, or -1 ENOENT if the task
 * is not in the step. */
int tracker_set_comm (struct tracker *t, int32_t pid, const char *comm);

/* The command of an exec.  The proc connector does not carry it: the
 * caller reads /proc/PID/comm after the exec event, and the task may
 * have ended by then and its pid be another program's.  The read is the
 * task's when the task still held its pid after the read, which the
 * events that come later say: the kernel sends a task's exit event
 * before it frees the pid, so
 *   - the task's exit, or any other event of it or a fork by it, sent
 *     after read_ns: the read was its (its command from then on);
 *   - its exit sent at or before read_ns, a new fork of its pid (its
 *     exit was lost), or a second exec before read_ns: not proven, the
 *     exec keeps the command known before it;
 *   - the caller read the event socket empty after the read (any exit
 *     sent before the read would have been read): the read was its
 *     (tracker_exec_settle (t, true)).
 * Each settled exec is handed to the callback, at the latest just
 * before the next event of its task is applied, so that the caller
 * writes it in its task's order. */
struct tracker_exec {
    int32_t pid, tgid;
    uint32_t cpu;   /* of the exec event */
    uint64_t ts_ns; /* of the exec event */
    char comm[17];  /* the command to say for it */
    bool read;      /* comm is the one read (else the one before) */
};
typedef void (*tracker_exec_fn) (const struct tracker_exec *x, void *arg);
void tracker_on_exec (struct tracker *t, tracker_exec_fn fn, void *arg);

/* An exec event `ev` of a task of the step (tracker_feed said 1), whose
 * command the caller read as `comm` ending at `read_ns` (CLOCK_MONOTONIC,
 * taken after the read).  0, or -1: ENOENT (not in the step), ENOMEM
 * (the caller says the exec now, with the command before it). */
int tracker_exec_read (struct tracker *t,
                       const struct cnproc_event *ev,
                       const char *comm,
                       uint64_t read_ns);

/* Settle every exec still pending: read = true when the event socket was
 * just read empty (the reads are proven), false otherwise (at the end,
 * without that proof: the execs keep the command before them). */
void tracker_exec_settle (struct tracker *t, bool read);

/* Tasks of the step alive now. */
struct tracker_counts {
    uint64_t processes; /* alive processes (thread-group leaders) */
    uint64_t threads;   /* alive tasks that are not leaders */
};
void tracker_counts (const struct tracker *t, struct tracker_counts *c);

/* Call fn(tgid, arg) for every alive process of the step; stops at and
 * returns fn's first non-zero result. */
int tracker_foreach_process (const struct tracker *t,
                             int (*fn) (int32_t tgid, void *arg),
                             void *arg);

#endif /* !PIN_TRACKER_H */
