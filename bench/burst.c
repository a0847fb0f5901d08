/* burst.c - the C fork workloads of bench-profile.sh and
 * bench-profile-slurm.sh.
 *
 *   burst N          N fork()s whose children _exit(0) at once, reaped
 *                    after the last (a fork storm: ~12,000/s here)
 *   burst N SPIN     N rounds of SPIN iterations of CPU work, each
 *                    followed by a child that execs /bin/true, reaped
 *                    as it ends (a CPU-bound job starting short-lived
 *                    programs, ALICE's ~10 Hz with the SPIN the script
 *                    calibrates)
 *
 * Prints the time the forks (or the rounds) took as {"burst_s":
 * SECONDS}, as t/profile/workload.py burst does. */
#include <stdio.h>
#include <stdlib.h>
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

int main (int argc, char **argv)
{
    int n = argc > 1 ? atoi (argv[1]) : 2000;
    unsigned long work = argc > 2 ? strtoul (argv[2], NULL, 10) : 0;
    double t0 = now (), took;

    for (int i = 0; i < n; i++) {
        pid_t pid;
        if (work)
            spin (work);
        pid = fork ();
        if (pid == 0) {
            if (work)
                execl ("/bin/true", "true", (char *)NULL);
            _exit (0);
        }
        if (pid < 0)
            return 1;
        if (work)
            while (waitpid (-1, NULL, WNOHANG) > 0)
                ;
    }
    took = now () - t0;
    while (wait (NULL) > 0)
        ;
    printf ("{\"burst_s\": %.6f}\n", took);
    return 0;
}
