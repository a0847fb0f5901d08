/* profclient.c - the profile recorder in the step's watcher
 * (profclient.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libprof/record.h"
#include "profclient.h"

struct profclient {
    struct prof_rec *prof; /* NULL once finished */
    char stepname[32];
    struct steplog log;
};

static int prof_prepare (void *arg,
                         struct pollfd *fds,
                         int max,
                         int *timeout_ms)
{
    profclient_t *p = arg;
    int t;

    if (!p->prof)
        return -1;
    t = prof_rec_timeout_ms (p->prof);
    if (t >= 0 && (*timeout_ms < 0 || t < *timeout_ms))
        *timeout_ms = t;
    return prof_rec_pollfds (p->prof, fds, max);
}

static int prof_process (void *arg, const struct pollfd *fds, int nfds)
{
    profclient_t *p = arg;
    pin_error_t err = {""};

    (void)fds;
    (void)nfds;
    if (p->prof && prof_rec_process (p->prof, &err) < 0) {
        steplog (&p->log,
                 STEPLOG_ERROR,
                 "pin: step %s: profile: %s; "
                 "recording stops",
                 p->stepname,
                 err.text);
        (void)prof_rec_finish (p->prof, -1, NULL);
        p->prof = NULL;
        return -1;
    }
    return 0;
}

static void prof_finish (void *arg, int status)
{
    profclient_t *p = arg;
    pin_error_t e = {""};

    if (!p->prof)
        return;
    if (prof_rec_finish (p->prof, status, &e) < 0)
        steplog (&p->log,
                 STEPLOG_ERROR,
                 "pin: step %s: profile: %s",
                 p->stepname,
                 e.text);
    p->prof = NULL;
}

profclient_t *profclient_create (struct prof_rec *prof,
                                 const char *stepname,
                                 const struct steplog *log,
                                 pin_error_t *errp)
{
    profclient_t *p = calloc (1, sizeof (*p));

    if (!p) {
        errprintf (errp, "out of memory");
        return NULL;
    }
    p->prof = prof;
    snprintf (p->stepname,
              sizeof (p->stepname),
              "%s",
              stepname ? stepname : "?");
    if (log)
        p->log = *log;
    return p;
}

void profclient_client (profclient_t *p, struct stepwatch_client *client)
{
    memset (client, 0, sizeof (*client));
    client->arg = p;
    client->prepare = prof_prepare;
    client->process = prof_process;
    client->finish = prof_finish;
}

int profclient_mark (profclient_t *p, struct json_object *o, pin_error_t *errp)
{
    if (!p || !p->prof)
        return 0;
    return prof_rec_mark (p->prof, o, errp);
}

void profclient_destroy (profclient_t *p)
{
    int saved = errno;

    if (p) {
        if (p->prof)
            (void)prof_rec_finish (p->prof, -1, NULL);
        free (p);
    }
    errno = saved;
}
