/* pidstorm.c - reuse pids as fast as possible, beside a profiled step
 *
 *   pidstorm STOPFILE PIDSFILE [MAXSECONDS]
 *
 * Until STOPFILE exists (or MAXSECONDS, default 120, passed), creates
 * and ends one task after another, alternately a process (vfork, _exit)
 * and a thread (pthread_create, join), each living microseconds.  Root
 * only: before each one it writes into /proc/sys/kernel/ns_last_pid
 * the next of WINDOW (64) consecutive values, so that the kernel gives it
 * the lowest free pid from there: every pid of that window (where the
 * other processes of the machine, the profiled step's included, then get
 * theirs too) is taken again within a few milliseconds of being freed,
 * in the same second.  It changes no setting (pid_max is untouched; the value
 * written is only where the search for the next free pid starts), so
 * nothing needs restoring.  At the end it writes the pids it used, one a
 * line, to PIDSFILE, and "processes N threads M" on stdout.  Without
 * ns_last_pid it cycles through the pids at its natural rate. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 64

static unsigned char *used;
static long pid_max;

static void mark (long pid)
{
    if (pid > 0 && pid < pid_max)
        used[pid / 8] |= (unsigned char)(1u << (pid % 8));
}

static void *thread_main (void *arg)
{
    *(long *)arg = (long)syscall (SYS_gettid);
    return NULL;
}

int main (int argc, char **argv)
{
    static long procs, threads;
    long base;
    double limit = argc > 3 ? atof (argv[3]) : 120;
    struct timespec t0, t;
    char val[32];
    int fd;
    FILE *f;

    if (argc < 3) {
        fprintf (stderr, "usage: pidstorm STOPFILE PIDSFILE [MAXSECONDS]\n");
        return 2;
    }
    if (!(f = fopen ("/proc/sys/kernel/pid_max", "r"))
        || fscanf (f, "%ld", &pid_max) != 1) {
        perror ("pidstorm: /proc/sys/kernel/pid_max");
        return 1;
    }
    fclose (f);
    if (!(used = calloc ((size_t)pid_max / 8 + 1, 1)))
        return 1;
    /* the middle of the range, where nothing long-lived usually sits */
    base = pid_max / 2;
    fd = open ("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
    clock_gettime (CLOCK_MONOTONIC, &t0);
    for (long n = 0;; n++) {
        int len = snprintf (val, sizeof (val), "%ld", base + n % WINDOW);
        if (fd >= 0 && pwrite (fd, val, (size_t)len, 0) != len) {
            close (fd);
            fd = -1;
        }
        if (n % 2 == 0) {
            pid_t p = vfork ();
            if (p == 0)
                _exit (0);
            if (p > 0) {
                mark (p);
                while (waitpid (p, NULL, 0) < 0 && errno == EINTR)
                    ;
                procs++;
            }
        } else {
            pthread_t th;
            long tid = 0;
            if (pthread_create (&th, NULL, thread_main, &tid) == 0) {
                pthread_join (th, NULL);
                mark (tid);
                threads++;
            }
        }
        if (n % 512 == 0) {
            clock_gettime (CLOCK_MONOTONIC, &t);
            if (access (argv[1], F_OK) == 0
                || (double)(t.tv_sec - t0.tv_sec) > limit)
                break;
        }
    }
    if (!(f = fopen (argv[2], "w")))
        return 1;
    for (long p = 1; p < pid_max; p++)
        if (used[p / 8] & (1u << (p % 8)))
            fprintf (f, "%ld\n", p);
    fclose (f);
    printf ("processes %ld threads %ld ns_last_pid %s\n",
            procs,
            threads,
            fd >= 0 ? "yes" : "no");
    return 0;
}
