/* deliver.c - start 'slurm-pin deliver --job N' at job end (deliver.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deliver.h"

int acct_deliver_spawn (const char *cmd,
                        uint32_t job,
                        const char *journal,
                        unsigned timeout,
                        pin_error_t *errp)
{
    struct stat st;
    char jobarg[16], tmo[16];
    pid_t pid;
    int status;

    if (!journal || journal[0] != '/')
        return errprintf (errp,
                          "JournalDir=%s: not an absolute path",
                          journal ? journal : "");
    if (!cmd || cmd[0] != '/')
        return errprintf (errp,
                          "DeliverCommand=%s: not an absolute path",
                          cmd ? cmd : "");
    if (stat (cmd, &st) < 0)
        return errprintf (errp,
                          "DeliverCommand=%s: %s",
                          cmd,
                          strerror (errno));
    if (!S_ISREG (st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)
        || !(st.st_mode & S_IXUSR))
        return errprintf (errp,
                          "DeliverCommand=%s: not a root-owned executable "
                          "that only root can write",
                          cmd);
    snprintf (jobarg, sizeof (jobarg), "%u", (unsigned)job);
    snprintf (tmo, sizeof (tmo), "%u", timeout);
    if ((pid = fork ()) < 0)
        return errprintf (errp, "fork: %s", strerror (errno));
    if (pid == 0) {
        /* intermediate child: new session, fork the worker, exit */
        struct rlimit rl;
        int fd;
        setsid ();
        if (fork () != 0)
            _exit (0);
        if ((fd = open ("/dev/null", O_RDWR)) >= 0) {
            dup2 (fd, 0);
            dup2 (fd, 1);
            dup2 (fd, 2);
        }
        if (getrlimit (RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 65536)
            rl.rlim_cur = 65536;
        for (int i = 3; i < (int)rl.rlim_cur; i++)
            close (i);
        signal (SIGHUP, SIG_IGN);
        alarm (timeout + 10); /* survives exec: SIGALRM ends a hang */
        execl (cmd,
               cmd,
               "deliver",
               "--job",
               jobarg,
               "--journal",
               journal,
               "--timeout",
               tmo,
               (char *)NULL);
        _exit (127);
    }
    while (waitpid (pid, &status, 0) < 0) {
        if (errno != EINTR)
            return errprintf (errp, "waitpid: %s", strerror (errno));
    }
    return 0;
}
