/* burst.c - the C fork workload of bench-profile.sh and
 * bench-profile-slurm.sh: N fork()s whose children _exit(0) at once,
 * reaped after the last; prints the time the forks took as
 * {"burst_s": SECONDS}, as t/profile/workload.py burst does. */
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

int main (int argc, char **argv)
{
    int n = argc > 1 ? atoi (argv[1]) : 2000;
    double t0 = now ();
    for (int i = 0; i < n; i++) {
        pid_t pid = fork ();
        if (pid == 0)
            _exit (0);
        if (pid < 0)
            return 1;
    }
    double took = now () - t0;
    while (wait (NULL) > 0)
        ;
    printf ("{\"burst_s\": %.6f}\n", took);
    return 0;
}
