/* t/vm/expload.c - the workload of t/vm/tests/t70-experiment.sh: a job
 * like seed 001's ALICE payloads, small enough for the emulated guest.
 *
 *   expload WORKERS MB SECS HZ
 *       WORKERS processes each touch MB MiB of their own memory, pass after
 *       pass (a write and a read every 64 bytes; fresh pages every 8th
 *       pass), for SECS seconds; the
 *       parent meanwhile forks short-lived children at HZ per second (each
 *       touches 1 MiB, computes a moment and exits) and reaps them.
 *       Prints one line:
 *       expload: workers=W mb=M forks=F passes=P wall_us=T user_us=U sys_us=S
 *       (user and system time of every process it waited for).
 *   expload --memwalk NODE MB
 *       Binds itself to CPU 0 and its memory to NUMA node NODE
 *       (set_mempolicy, MPOL_BIND), chases a random cyclic pointer chain
 *       through MB MiB and prints "memwalk: node=N mb=M ns_per_load=X".
 *       Run with NODE 0 and 1 it shows what the machine's memory distance
 *       costs a load (on real hardware remote is slower; in the TCG guest
 *       both are the host's same memory).
 *
 * Only the C library and system calls: the guest has the host's gcc and
 * nothing from libnuma.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MPOL_BIND_ 2 /* <linux/mempolicy.h> MPOL_BIND */

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long tv_us (struct timeval tv)
{
    return tv.tv_sec * 1000000L + tv.tv_usec;
}

/* touch: one pass over buf, a write and a read every 64 bytes */
static unsigned long touch (volatile unsigned char *buf, size_t len, int pass)
{
    unsigned long sum = 0;
    for (size_t i = 0; i < len; i += 64) {
        buf[i] = (unsigned char)(i + pass);
        sum += buf[i];
    }
    return sum;
}

static int worker (size_t len, double end, int fd)
{
    unsigned char *buf = malloc (len);
    unsigned long sum = 0;
    long passes = 0;
    if (!buf)
        return 1;
    do {
        sum += touch (buf, len, (int)passes++);
        /* every 8th pass on fresh pages: page faults, as a payload that
         * allocates and frees its event buffers (system time) */
        if (passes % 8 == 0) {
            free (buf);
            if (!(buf = malloc (len)))
                return 1;
        }
    } while (now () < end);
    if (write (fd, &passes, sizeof (passes)) != sizeof (passes))
        return 1;
    free (buf);
    return sum == 1; /* keep the loop */
}

static int child (void)
{
    size_t len = 1 << 20;
    unsigned char *buf = malloc (len);
    volatile double x = 1;
    if (!buf)
        _exit (1);
    touch (buf, len, 1);
    for (int i = 0; i < 20000; i++)
        x = x * 1.000001 + 1e-9;
    _exit (0);
}

static int run (int workers, long mb, double secs, double hz)
{
    double start = now (), end = start + secs, next = start;
    size_t len = (size_t)mb << 20;
    long forks = 0, passes = 0;
    int fds[2], st, bad = 0;
    struct rusage ru;
    pid_t pid;

    if (pipe (fds) < 0)
        return perror ("expload: pipe"), 1;
    for (int i = 0; i < workers; i++) {
        pid = fork ();
        if (pid < 0)
            return perror ("expload: fork"), 1;
        if (pid == 0) {
            close (fds[0]);
            _exit (worker (len, end, fds[1]));
        }
    }
    close (fds[1]);
    while (now () < end) {
        double t = now ();
        if (t >= next) {
            pid = fork ();
            if (pid == 0)
                child ();
            if (pid > 0)
                forks++;
            next += 1 / hz;
            if (next < t)
                next = t + 1 / hz;
        }
        /* reap the short-lived children as they end */
        while ((pid = waitpid (-1, &st, WNOHANG)) > 0)
            bad |= !WIFEXITED (st) || WEXITSTATUS (st) != 0;
        t = now ();
        if (next > t)
            usleep ((useconds_t)((next - t) * 1e6));
    }
    while ((pid = wait (&st)) > 0)
        bad |= !WIFEXITED (st) || WEXITSTATUS (st) != 0;
    for (long p; read (fds[0], &p, sizeof (p)) == sizeof (p);)
        passes += p;
    getrusage (RUSAGE_CHILDREN, &ru);
    printf ("expload: workers=%d mb=%ld forks=%ld passes=%ld wall_us=%ld "
            "user_us=%ld sys_us=%ld\n",
            workers,
            mb,
            forks,
            passes,
            (long)((now () - start) * 1e6),
            tv_us (ru.ru_utime),
            tv_us (ru.ru_stime));
    if (bad)
        fprintf (stderr, "expload: a worker or child failed\n");
    return bad;
}

static int memwalk (int node, long mb)
{
    size_t n = ((size_t)mb << 20) / sizeof (size_t), steps = 1000000, p = 0;
    unsigned long mask = 1UL << node;
    cpu_set_t cpus;
    size_t *next;
    double t0;

    CPU_ZERO (&cpus);
    CPU_SET (0, &cpus);
    if (sched_setaffinity (0, sizeof (cpus), &cpus) < 0)
        return perror ("memwalk: sched_setaffinity"), 1;
    if (syscall (SYS_set_mempolicy, MPOL_BIND_, &mask, 8 * sizeof (mask)) < 0)
        return fprintf (stderr, "memwalk: set_mempolicy node %d: %s\n", node,
                        strerror (errno)),
               1;
    next = malloc (n * sizeof (*next));
    if (!next)
        return perror ("memwalk: malloc"), 1;
    /* one random cycle through every element (Sattolo), so that each load
     * depends on the one before and no prefetcher guesses it */
    for (size_t i = 0; i < n; i++)
        next[i] = i;
    srand (42);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (((size_t)rand () << 31) ^ (size_t)rand ()) % i;
        size_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
    t0 = now ();
    for (size_t i = 0; i < steps; i++)
        p = next[p];
    printf ("memwalk: node=%d mb=%ld ns_per_load=%.1f end=%zu\n",
            node,
            mb,
            (now () - t0) * 1e9 / steps,
            p % 2);
    free (next);
    return 0;
}

int main (int argc, char **argv)
{
    if (argc == 4 && strcmp (argv[1], "--memwalk") == 0)
        return memwalk (atoi (argv[2]), atol (argv[3]));
    if (argc != 5 || atoi (argv[1]) < 1 || atol (argv[2]) < 1
        || atof (argv[3]) <= 0 || atof (argv[4]) <= 0) {
        fprintf (stderr,
                 "usage: expload WORKERS MB SECS HZ | expload --memwalk NODE "
                 "MB\n");
        return 2;
    }
    return run (atoi (argv[1]), atol (argv[2]), atof (argv[3]),
                atof (argv[4]));
}
