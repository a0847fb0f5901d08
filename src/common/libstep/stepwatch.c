/* stepwatch.c - the step's watcher thread (stepwatch.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "stepwatch.h"

struct stepwatch {
    pthread_mutex_t lock;
    int stop_fd; /* eventfd: written once to stop */
    pthread_t thread;
    bool started, joined;
    int status; /* for the clients' finish() */
    struct stepwatch_client clients[STEPWATCH_MAX_CLIENTS];
    unsigned nclients;
    int64_t cpu_us, wall_us;
};

int64_t stepwatch_clock_us (int id)
{
    struct timespec ts;

    if (clock_gettime ((clockid_t)id, &ts) < 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

stepwatch_t *stepwatch_create (void)
{
    stepwatch_t *sw = calloc (1, sizeof (*sw));

    if (!sw)
        return NULL;
    pthread_mutex_init (&sw->lock, NULL);
    sw->stop_fd = -1;
    sw->status = -1;
    return sw;
}

int stepwatch_add (stepwatch_t *sw,
                   const struct stepwatch_client *c,
                   pin_error_t *errp)
{
    if (!sw || !c || !c->prepare) {
        errno = EINVAL;
        return errprintf (errp, "watcher: invalid client");
    }
    if (sw->started) {
        errno = EBUSY;
        return errprintf (errp, "watcher already started");
    }
    if (sw->nclients >= STEPWATCH_MAX_CLIENTS) {
        errno = ENOSPC;
        return errprintf (errp,
                          "watcher: more than %d clients",
                          STEPWATCH_MAX_CLIENTS);
    }
    sw->clients[sw->nclients++] = *c;
    return 0;
}

static void *watcher (void *arg)
{
    stepwatch_t *sw = arg;
    bool active[STEPWATCH_MAX_CLIENTS];
    int64_t wall0 = stepwatch_clock_us (CLOCK_MONOTONIC);
    unsigned nactive = sw->nclients;
    int status;

    for (unsigned i = 0; i < sw->nclients; i++)
        active[i] = true;
    for (;;) {
        struct pollfd fds[1 + STEPWATCH_MAX_FDS];
        int first[STEPWATCH_MAX_CLIENTS], count[STEPWATCH_MAX_CLIENTS];
        int nfds = 1, timeout = -1;

        for (unsigned i = 0; i < sw->nclients; i++) {
            struct stepwatch_client *c = &sw->clients[i];
            int n;

            first[i] = nfds;
            count[i] = 0;
            if (!active[i])
                continue;
            n = c->prepare (c->arg,
                            fds + nfds,
                            1 + STEPWATCH_MAX_FDS - nfds,
                            &timeout);
            if (n < 0) {
                active[i] = false;
                nactive--;
                continue;
            }
            count[i] = n;
            nfds += n;
        }
        if (nactive == 0)
            break;
        fds[0].fd = sw->stop_fd;
        fds[0].events = POLLIN;
        for (int i = 0; i < nfds; i++)
            fds[i].revents = 0;
        if (poll (fds, (nfds_t)nfds, timeout) < 0 && errno != EINTR)
            break;
        if (fds[0].revents)
            break;
        for (unsigned i = 0; i < sw->nclients; i++) {
            struct stepwatch_client *c = &sw->clients[i];

            if (!active[i] || !c->process)
                continue;
            if (c->process (c->arg, fds + first[i], count[i]) < 0) {
                active[i] = false;
                nactive--;
            }
        }
    }
    pthread_mutex_lock (&sw->lock);
    status = sw->status;
    pthread_mutex_unlock (&sw->lock);
    for (unsigned i = 0; i < sw->nclients; i++)
        if (sw->clients[i].finish)
            sw->clients[i].finish (sw->clients[i].arg, status);
    pthread_mutex_lock (&sw->lock);
    sw->cpu_us = stepwatch_clock_us (CLOCK_THREAD_CPUTIME_ID);
    sw->wall_us = stepwatch_clock_us (CLOCK_MONOTONIC) - wall0;
    pthread_mutex_unlock (&sw->lock);
    return NULL;
}

int stepwatch_start (stepwatch_t *sw, pin_error_t *errp)
{
    pthread_attr_t attr;
    sigset_t all, old;
    int rc;

    if (!sw) {
        errno = EINVAL;
        return errprintf (errp, "watcher: invalid argument");
    }
    if (sw->started) {
        errno = EBUSY;
        return errprintf (errp, "watcher already started");
    }
    if (sw->nclients == 0) {
        errno = EINVAL;
        return errprintf (errp, "watcher: nothing to watch");
    }
    if ((sw->stop_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
        return errprintf (errp,
                          "cannot make the watcher's eventfd: %s",
                          strerror (errno));
    pthread_attr_init (&attr);
    pthread_attr_setstacksize (&attr, 256 * 1024);
    /* slurmstepd handles its signals in its own threads: the watcher
     * takes none */
    sigfillset (&all);
    pthread_sigmask (SIG_SETMASK, &all, &old);
    rc = pthread_create (&sw->thread, &attr, watcher, sw);
    pthread_sigmask (SIG_SETMASK, &old, NULL);
    pthread_attr_destroy (&attr);
    if (rc != 0) {
        close (sw->stop_fd);
        sw->stop_fd = -1;
        errno = rc;
        return errprintf (errp,
                          "cannot start the watcher thread: %s",
                          strerror (rc));
    }
    sw->started = true;
    return 0;
}

bool stepwatch_running (const stepwatch_t *sw)
{
    return sw && sw->started && !sw->joined;
}

void stepwatch_stop (stepwatch_t *sw,
                     int status,
                     int64_t *cpu_us,
                     int64_t *wall_us)
{
    if (!sw)
        return;
    if (sw->started && !sw->joined) {
        uint64_t one = 1;
        pthread_mutex_lock (&sw->lock);
        sw->status = status;
        pthread_mutex_unlock (&sw->lock);
        while (write (sw->stop_fd, &one, sizeof (one)) < 0 && errno == EINTR)
            ;
        pthread_join (sw->thread, NULL);
        sw->joined = true;
        close (sw->stop_fd);
        sw->stop_fd = -1;
    }
    pthread_mutex_lock (&sw->lock);
    if (cpu_us)
        *cpu_us = sw->cpu_us;
    if (wall_us)
        *wall_us = sw->wall_us;
    pthread_mutex_unlock (&sw->lock);
}

void stepwatch_destroy (stepwatch_t *sw)
{
    int saved = errno;

    if (sw) {
        stepwatch_stop (sw, -1, NULL, NULL);
        pthread_mutex_destroy (&sw->lock);
        free (sw);
    }
    errno = saved;
}
