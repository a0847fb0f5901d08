/* burst.c - the C fork workloads of bench-profile.sh and
 * bench-profile-slurm.sh.
 *
 *   burst N          N fork()s whose children _exit(0) at once, reaped
 *                    after the last (a fork storm: as fast as it goes,
 *                    ~12,000-15,000/s on the 2-CPU machine of the bench)
 *   burst --rate R N the same N fork()s on a clock-driven schedule: fork i
 *                    is due at start + i / R seconds (R per second); the
 *                    program sleeps until each is due (a late fork goes at
 *                    once, the schedule does not slip), and reaps the
 *                    children while it is ahead of the schedule
 *   burst N SPIN     N rounds of SPIN iterations of CPU work, each
 *                    followed by a child that execs /bin/true, reaped
 *                    as it ends (a CPU-bound job starting short-lived
 *                    programs, ALICE's ~10 Hz with the SPIN the script
 *                    calibrates)
 *
 * Prints one JSON line, as t/profile/workload.py burst does:
 *   burst_s      the time the forks (or the rounds) took
 *   cpu_s        user + system CPU time of the program and its reaped
 *                children (getrusage: the kernel's work for a child's
 *                exit, taskstats and proc connector messages included)
 *   rate         forks per second achieved (N over the time from the
 *                first fork to the last fork's return)
 *   target       R (0 unpaced)
 *   kept         paced: whether the rate achieved is within 1 % of R
 *                (null unpaced)
 *   fork_us_p50, fork_us_p99   how long one fork() call took, in the
 *                parent (the per-fork latency)
 *   late_us_p99, late_us_max   paced: how late a fork started against
 *                its schedule */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static void spin (unsigned long n)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    sink = x;
}

static int cmp (const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static double pct (float *v, int n, double p)
{
    if (n <= 0)
        return 0;
    qsort (v, n, sizeof (*v), cmp);
    return v[(int)(p * (n - 1) + 0.5)];
}

static double tv (struct timeval t)
{
    return t.tv_sec + t.tv_usec / 1e6;
}

int main (int argc, char **argv)
{
    double rate = 0;
    if (argc > 2 && strcmp (argv[1], "--rate") == 0) {
        rate = strtod (argv[2], NULL);
        if (!(rate > 0)) {
            fprintf (stderr, "burst: rate '%s': give forks per second > 0\n",
                     argv[2]);
            return 2;
        }
        argv += 2;
        argc -= 2;
    }
    int n = argc > 1 ? atoi (argv[1]) : 2000;
    unsigned long work = argc > 2 ? strtoul (argv[2], NULL, 10) : 0;
    float *lat = calloc (n > 0 ? n : 1, sizeof (*lat));
    float *late = calloc (n > 0 ? n : 1, sizeof (*late));
    double lmax = 0;
    if (!lat || !late)
        return 1;
    if (rate > 0)
        (void)prctl (PR_SET_TIMERSLACK, 1ul); /* wake on time, not 50 us late */

    struct timespec start;
    clock_gettime (CLOCK_MONOTONIC, &start);
    double t0 = start.tv_sec + start.tv_nsec / 1e9, t1 = t0, took;

    for (int i = 0; i < n; i++) {
        pid_t pid;
        double a;
        if (work)
            spin (work);
        if (rate > 0) {
            double due = i / rate;
            struct timespec ts = start;
            long long ns = ts.tv_nsec + (long long)(due * 1e9);
            ts.tv_sec += ns / 1000000000;
            ts.tv_nsec = ns % 1000000000;
            /* reap while ahead of the schedule, not when late; sleep
             * only when ahead (a sleep that ends at once is a timer
             * armed: costly in a virtual machine) */
            while (now () - t0 < due && waitpid (-1, NULL, WNOHANG) > 0)
                ;
            if (now () - t0 < due)
                while (clock_nanosleep (CLOCK_MONOTONIC,
                                        TIMER_ABSTIME,
                                        &ts,
                                        NULL)
                       == EINTR)
                    ;
            a = now ();
            late[i] = (a - t0 - due) * 1e6;
            if (late[i] > lmax)
                lmax = late[i];
        } else
            a = now ();
        pid = fork ();
        if (pid == 0) {
            if (work)
                execl ("/bin/true", "true", (char *)NULL);
            _exit (0);
        }
        if (pid < 0)
            return 1;
        t1 = now ();
        lat[i] = (t1 - a) * 1e6;
        if (work)
            while (waitpid (-1, NULL, WNOHANG) > 0)
                ;
    }
    took = now () - t0;
    while (wait (NULL) > 0)
        ;
    struct rusage self, kids;
    getrusage (RUSAGE_SELF, &self);
    getrusage (RUSAGE_CHILDREN, &kids);
    double cpu = tv (self.ru_utime) + tv (self.ru_stime) + tv (kids.ru_utime)
                 + tv (kids.ru_stime);
    double got = t1 > t0 ? n / (t1 - t0) : 0;
    printf ("{\"burst_s\": %.6f, \"cpu_s\": %.6f, \"rate\": %.1f, "
            "\"target\": %.1f, \"kept\": %s, \"fork_us_p50\": %.1f, "
            "\"fork_us_p99\": %.1f, \"late_us_p99\": %.1f, "
            "\"late_us_max\": %.1f}\n",
            took, cpu, got, rate,
            rate <= 0 ? "null" : got >= 0.99 * rate ? "true" : "false",
            pct (lat, n, 0.5), pct (lat, n, 0.99),
            rate > 0 ? pct (late, n, 0.99) : 0.0, lmax);
    return 0;
}
