/* ident.c - the node name of a slurmstepd (ident.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ident.h"

/* Is inode `ino` one of this process' sockets? */
static bool own_socket (unsigned long ino)
{
    char want[64], link[64], path[300];
    struct dirent *e;
    bool found = false;
    DIR *d;

    snprintf (want, sizeof (want), "socket:[%lu]", ino);
    if (!(d = opendir ("/proc/self/fd")))
        return false;
    while (!found && (e = readdir (d))) {
        ssize_t len;
        if (e->d_name[0] == '.')
            continue;
        snprintf (path, sizeof (path), "/proc/self/fd/%s", e->d_name);
        len = readlink (path, link, sizeof (link) - 1);
        if (len <= 0)
            continue;
        link[len] = '\0';
        found = strcmp (link, want) == 0;
    }
    closedir (d);
    return found;
}

/* The NODE of a socket path ".../NODE_JOB.STEP[.COMP]" into buf, or
 * false. */
bool step_ident_node_of_socket (const char *path,
                                uint32_t job,
                                uint32_t step,
                                char *buf,
                                size_t n)
{
    const char *base = strrchr (path, '/'), *p, *hit = NULL;
    char needle[48];
    size_t nlen;

    base = base ? base + 1 : path;
    nlen = (size_t)snprintf (needle, sizeof (needle), "_%u.%u", job, step);
    for (p = base; (p = strstr (p, needle)); p++) {
        const char *rest = p + nlen;
        if (*rest == '\0'
            || (rest[0] == '.' && rest[1]
                && strspn (rest + 1, "0123456789") == strlen (rest + 1)))
            hit = p;
    }
    if (!hit || hit == base)
        return false;
    acct_utf8_copy (buf, n, base, (size_t)(hit - base));
    return true;
}

/* slurmstepd's listening socket, from /proc/self/net/unix. */
static bool node_from_socket (uint32_t job, uint32_t step, char *buf, size_t n)
{
    char line[PATH_MAX + 128];
    bool ok = false;
    FILE *f;

    if (!(f = fopen ("/proc/self/net/unix", "re")))
        return false;
    while (!ok && fgets (line, sizeof (line), f)) {
        char path[PATH_MAX + 1];
        unsigned long ino;
        line[strcspn (line, "\n")] = '\0';
        /* Num RefCount Protocol Flags Type St Inode Path */
        if (sscanf (line, "%*s %*s %*s %*s %*s %*s %lu %4096s", &ino, path)
                != 2
            || path[0] != '/')
            continue;
        if (!strstr (path, "_") || !own_socket (ino))
            continue;
        ok = step_ident_node_of_socket (path, job, step, buf, n);
    }
    fclose (f);
    return ok;
}

void step_ident_node (uint32_t job, uint32_t step, char *buf, size_t n)
{
    char host[256] = "";
    const char *env;

    if (job && node_from_socket (job, step, buf, n) && buf[0])
        return;
    /* slurmstepd's own environment (not the job's): slurmd sets it for
     * the prolog and epilog */
    if ((env = getenv ("SLURMD_NODENAME")) && *env) {
        acct_utf8_copy (buf, n, env, strlen (env));
        return;
    }
    if (gethostname (host, sizeof (host) - 1) < 0)
        snprintf (host, sizeof (host), "unknown");
    host[sizeof (host) - 1] = '\0';
    host[strcspn (host, ".")] = '\0';
    acct_utf8_copy (buf, n, host, strlen (host));
}
