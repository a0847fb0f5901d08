/* test/test_stepwatch.c - the step's watcher: clients, poll, stop */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "libstep/stepwatch.h"
#include "libtest/tap.h"

/* A client that polls a pipe and counts what it read; done after `limit`
 * bytes (0: never). */
struct pipe_client {
    int fds[2];
    int got;
    int limit;
    int prepares;
    int finished; /* times finish ran */
    int status;   /* what finish got */
};

static int pc_prepare (void *arg, struct pollfd *fds, int max, int *timeout_ms)
{
    struct pipe_client *pc = arg;

    (void)timeout_ms;
    pc->prepares++;
    if (pc->limit && pc->got >= pc->limit)
        return -1;
    ck_assert_int_ge (max, 1);
    fds[0].fd = pc->fds[0];
    fds[0].events = POLLIN;
    return 1;
}

static int pc_process (void *arg, const struct pollfd *fds, int nfds)
{
    struct pipe_client *pc = arg;
    char buf[64];

    ck_assert_int_eq (nfds, 1);
    if (fds[0].revents & POLLIN) {
        ssize_t n = read (pc->fds[0], buf, sizeof (buf));
        if (n > 0)
            pc->got += (int)n;
    }
    return 0;
}

static void pc_finish (void *arg, int status)
{
    struct pipe_client *pc = arg;

    pc->finished++;
    pc->status = status;
}

static void pc_init (struct pipe_client *pc,
                     int limit,
                     struct stepwatch_client *c)
{
    memset (pc, 0, sizeof (*pc));
    ck_assert_int_eq (pipe (pc->fds), 0);
    pc->limit = limit;
    pc->status = -42;
    c->arg = pc;
    c->prepare = pc_prepare;
    c->process = pc_process;
    c->finish = pc_finish;
}

static void pc_close (struct pipe_client *pc)
{
    close (pc->fds[0]);
    close (pc->fds[1]);
}

/* Two clients, each served; stop passes the status to both, once. */
START_TEST (test_two_clients)
{
    struct pipe_client a, b;
    struct stepwatch_client ca, cb;
    stepwatch_t *sw = stepwatch_create ();
    pin_error_t e = {""};
    int64_t cpu = -1, wall = -1;

    pc_init (&a, 0, &ca);
    pc_init (&b, 0, &cb);
    ck_assert_ptr_nonnull (sw);
    ck_assert_int_eq (stepwatch_add (sw, &ca, &e), 0);
    ck_assert_int_eq (stepwatch_add (sw, &cb, &e), 0);
    ck_assert (!stepwatch_running (sw));
    ck_assert_msg (stepwatch_start (sw, &e) == 0, "%s", e.text);
    ck_assert (stepwatch_running (sw));
    /* no client after the start */
    ck_assert_int_lt (stepwatch_add (sw, &ca, &e), 0);
    ck_assert_int_eq (errno, EBUSY);
    ck_assert_int_eq (write (a.fds[1], "abc", 3), 3);
    ck_assert_int_eq (write (b.fds[1], "de", 2), 2);
    for (int i = 0; i < 200 && (a.got < 3 || b.got < 2); i++)
        usleep (10000);
    stepwatch_stop (sw, 256, &cpu, &wall);
    ck_assert (!stepwatch_running (sw));
    ck_assert_int_eq (a.got, 3);
    ck_assert_int_eq (b.got, 2);
    ck_assert_int_eq (a.finished, 1);
    ck_assert_int_eq (b.finished, 1);
    ck_assert_int_eq (a.status, 256);
    ck_assert_int_eq (b.status, 256);
    ck_assert_int_ge (cpu, 0);
    ck_assert_int_gt (wall, 0);
    /* idempotent: nothing runs again */
    stepwatch_stop (sw, 0, NULL, NULL);
    ck_assert_int_eq (a.finished, 1);
    ck_assert_int_eq (a.status, 256);
    stepwatch_destroy (sw);
    ck_assert_int_eq (a.finished, 1);
    pc_close (&a);
    pc_close (&b);
}
END_TEST

/* A client that is done leaves the loop to the others; when every client
 * is done the thread ends by itself and finish() gets -1. */
START_TEST (test_done_clients)
{
    struct pipe_client a, b;
    struct stepwatch_client ca, cb;
    stepwatch_t *sw = stepwatch_create ();
    pin_error_t e = {""};

    pc_init (&a, 1, &ca);
    pc_init (&b, 2, &cb);
    ck_assert_int_eq (stepwatch_add (sw, &ca, &e), 0);
    ck_assert_int_eq (stepwatch_add (sw, &cb, &e), 0);
    ck_assert_int_eq (stepwatch_start (sw, &e), 0);
    ck_assert_int_eq (write (a.fds[1], "x", 1), 1);
    for (int i = 0; i < 200 && a.got < 1; i++)
        usleep (10000);
    usleep (50000);
    int before = a.prepares;
    ck_assert_int_eq (write (b.fds[1], "y", 1), 1);
    for (int i = 0; i < 200 && b.got < 1; i++)
        usleep (10000);
    usleep (50000);
    /* a is no longer asked */
    ck_assert_int_eq (a.prepares, before);
    ck_assert_int_eq (write (b.fds[1], "z", 1), 1);
    for (int i = 0; i < 200 && b.finished == 0; i++)
        usleep (10000);
    ck_assert_int_eq (b.finished, 1);
    ck_assert_int_eq (a.finished, 1);
    ck_assert_int_eq (a.status, -1);
    stepwatch_stop (sw, 9, NULL, NULL);
    ck_assert_int_eq (b.finished, 1);
    ck_assert_int_eq (b.status, -1);
    stepwatch_destroy (sw);
    pc_close (&a);
    pc_close (&b);
}
END_TEST

/* The timeout a client asks for wakes the loop without any fd. */
static int ticks;
static int tick_prepare (void *arg,
                         struct pollfd *fds,
                         int max,
                         int *timeout_ms)
{
    (void)arg;
    (void)fds;
    (void)max;
    if (++ticks >= 5)
        return -1;
    if (*timeout_ms < 0 || *timeout_ms > 5)
        *timeout_ms = 5;
    return 0;
}

START_TEST (test_timeout)
{
    struct stepwatch_client c = {.prepare = tick_prepare};
    stepwatch_t *sw = stepwatch_create ();
    pin_error_t e = {""};

    ticks = 0;
    ck_assert_int_eq (stepwatch_add (sw, &c, &e), 0);
    ck_assert_int_eq (stepwatch_start (sw, &e), 0);
    for (int i = 0; i < 300 && ticks < 5; i++)
        usleep (10000);
    ck_assert_int_eq (ticks, 5);
    stepwatch_destroy (sw);
}
END_TEST

START_TEST (test_errors)
{
    struct stepwatch_client c = {.prepare = tick_prepare};
    stepwatch_t *sw = stepwatch_create ();
    pin_error_t e = {""};

    /* nothing to watch */
    ck_assert_int_lt (stepwatch_start (sw, &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_str_eq (e.text, "watcher: nothing to watch");
    for (int i = 0; i < STEPWATCH_MAX_CLIENTS; i++)
        ck_assert_int_eq (stepwatch_add (sw, &c, &e), 0);
    ck_assert_int_lt (stepwatch_add (sw, &c, &e), 0);
    ck_assert_int_eq (errno, ENOSPC);
    struct stepwatch_client bad = {0};
    ck_assert_int_lt (stepwatch_add (sw, &bad, &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    /* never started: stop and destroy are fine, NULL too */
    stepwatch_stop (sw, 0, NULL, NULL);
    errno = 1234;
    stepwatch_destroy (sw);
    stepwatch_destroy (NULL);
    ck_assert_int_eq (errno, 1234);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("stepwatch");
    TCase *tc = tcase_create ("stepwatch");

    tcase_set_timeout (tc, 30);
    tcase_add_test (tc, test_two_clients);
    tcase_add_test (tc, test_done_clients);
    tcase_add_test (tc, test_timeout);
    tcase_add_test (tc, test_errors);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
