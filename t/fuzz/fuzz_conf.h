/* fuzz_conf.h - what fuzz_conf.c and fuzz_confargs.c check of a pin.conf
 *
 * A pin.conf lives in a private directory made under $TMPDIR (or /tmp),
 * mode 0600, owned by the harness's user: the loader checks a pin.conf's
 * owner, mode and path (pin.conf(5), "Ownership"), which a memfd behind
 * /proc/self/fd/N cannot pass.  Removed at exit.
 */
#ifndef PIN_FUZZ_CONF_H
#define PIN_FUZZ_CONF_H

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "libconf/conf.h"
#include "libplace/place.h"

struct memconf {
    int fd;
    char path[512];
};

static char memconf_dir[256];
static char memconf_made[2][512];

static void memconf_cleanup (void)
{
    for (int i = 0; i < 2; i++)
        if (memconf_made[i][0])
            unlink (memconf_made[i]);
    if (memconf_dir[0])
        rmdir (memconf_dir);
}

static inline void memconf_open (struct memconf *m, const char *name)
{
    const char *tmp = getenv ("TMPDIR");

    if (!memconf_dir[0]) {
        snprintf (memconf_dir,
                  sizeof (memconf_dir),
                  "%s/fuzz_conf.XXXXXX",
                  tmp && *tmp == '/' ? tmp : "/tmp");
        if (!mkdtemp (memconf_dir)) {
            perror ("mkdtemp");
            abort ();
        }
        atexit (memconf_cleanup);
    }
    snprintf (m->path, sizeof (m->path), "%s/%s", memconf_dir, name);
    if ((m->fd = open (m->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600))
        < 0) {
        perror (m->path);
        abort ();
    }
    for (int i = 0; i < 2; i++)
        if (!memconf_made[i][0]) {
            snprintf (memconf_made[i],
                      sizeof (memconf_made[i]),
                      "%s",
                      m->path);
            break;
        }
}

/* Make the file hold exactly these bytes. */
static inline void memconf_write (struct memconf *m,
                                  const void *data,
                                  size_t size)
{
    if (ftruncate (m->fd, 0) < 0
        || (size > 0 && pwrite (m->fd, data, size, 0) != (ssize_t)size)) {
        perror ("memconf_write");
        abort ();
    }
}

static inline bool nul_within (const char *s, size_t size)
{
    return memchr (s, '\0', size) != NULL;
}

/* An absolute path without control characters or '..' components. */
static inline bool good_path (const char *s)
{
    if (s[0] != '/')
        return false;
    for (const char *p = s; *p; p++) {
        if (iscntrl ((unsigned char)*p))
            return false;
        if (p[0] == '/' && p[1] == '.' && p[2] == '.'
            && (p[3] == '/' || p[3] == '\0'))
            return false;
    }
    return true;
}

/* What every loaded configuration must satisfy (conf.h, pin.conf(5)). */
static inline void check_conf_valid (const struct pin_conf *c)
{
    FUZZ_ASSERT (nul_within (c->path, sizeof (c->path))
                     && nul_within (c->cgroup_root, sizeof (c->cgroup_root))
                     && nul_within (c->cgroup_base, sizeof (c->cgroup_base))
                     && nul_within (c->topology_cache,
                                    sizeof (c->topology_cache))
                     && nul_within (c->state_dir, sizeof (c->state_dir)),
                 "a string of the configuration is not terminated");
    FUZZ_ASSERT (strcmp (place_policy_name (c->default_policy), "unknown")
                     != 0,
                 "DefaultPolicy %d",
                 c->default_policy);
    FUZZ_ASSERT (pin_conf_policy_allowed (c, c->default_policy),
                 "DefaultPolicy %s is not allowed (mask 0x%x)",
                 place_policy_name (c->default_policy),
                 c->allowed_policies);
    /* one bit per policy, PLACE_NONE (0) to PLACE_DYNAMIC, the last */
    FUZZ_ASSERT (c->allowed_policies == PIN_CONF_ALLOW_ALL
                     || (c->allowed_policies
                         & ~((1u << (PLACE_DYNAMIC + 1)) - 1))
                            == 0,
                 "AllowedPolicies mask 0x%x",
                 c->allowed_policies);
    FUZZ_ASSERT (strcmp (c->cgroup_root, "auto") == 0
                     || good_path (c->cgroup_root),
                 "CgroupRoot '%s'",
                 c->cgroup_root);
    FUZZ_ASSERT (c->cgroup_base[0] && strcmp (c->cgroup_base, ".") != 0
                     && strcmp (c->cgroup_base, "..") != 0
                     && strspn (c->cgroup_base,
                                "abcdefghijklmnopqrstuvwxyz"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
                            == strlen (c->cgroup_base),
                 "CgroupBase '%s'",
                 c->cgroup_base);
    FUZZ_ASSERT (good_path (c->topology_cache),
                 "TopologyCache '%s'",
                 c->topology_cache);
    FUZZ_ASSERT (good_path (c->state_dir), "StateDir '%s'", c->state_dir);
}

/* Are the settings (everything but the path) equal? */
static inline bool conf_settings_equal (const struct pin_conf *a,
                                        const struct pin_conf *b)
{
    return a->default_policy == b->default_policy
           && a->allowed_policies == b->allowed_policies
           && strcmp (a->cgroup_root, b->cgroup_root) == 0
           && strcmp (a->cgroup_base, b->cgroup_base) == 0
           && strcmp (a->topology_cache, b->topology_cache) == 0
           && strcmp (a->state_dir, b->state_dir) == 0
           && a->verbose == b->verbose;
}

/* The AllowedPolicies value that gives c's mask. */
static inline void allowed_text (const struct pin_conf *c,
                                 char *buf,
                                 size_t size)
{
    size_t off = 0;

    if (c->allowed_policies == PIN_CONF_ALLOW_ALL) {
        snprintf (buf, size, "all");
        return;
    }
    buf[0] = '\0';
    for (int p = 0; p < 32; p++) {
        if (c->allowed_policies & (1u << p))
            off += (size_t)snprintf (buf + off,
                                     size - off,
                                     "%s%s",
                                     off ? "," : "",
                                     place_policy_name (p));
    }
}

/* The settings of c as a pin.conf, every key once; caller frees. */
static inline char *conf_text (const struct pin_conf *c)
{
    char allowed[256];
    char *s = NULL;

    allowed_text (c, allowed, sizeof (allowed));
    if (asprintf (&s,
                  "DefaultPolicy=%s\nAllowedPolicies=%s\n"
                  "CgroupRoot=%s\nCgroupBase=%s\nTopologyCache=%s\n"
                  "StateDir=%s\nVerbose=%s\n",
                  place_policy_name (c->default_policy),
                  allowed,
                  c->cgroup_root,
                  c->cgroup_base,
                  c->topology_cache,
                  c->state_dir,
                  c->verbose ? "yes" : "no")
        < 0)
        abort ();
    return s;
}

/* The line number N of an error "PATH:N: ...", or 0. */
static inline unsigned error_line (const pin_error_t *e, const char *path)
{
    size_t plen = strlen (path);

    if (strncmp (e->text, path, plen) != 0 || e->text[plen] != ':')
        return 0;
    return (unsigned)strtoul (e->text + plen + 1, NULL, 10);
}

/* Lines of a text: newlines, plus one for a last line without. */
static inline unsigned count_lines (const uint8_t *data, size_t size)
{
    unsigned n = 0;

    for (size_t i = 0; i < size; i++)
        n += data[i] == '\n';
    return n + (size > 0 && data[size - 1] != '\n');
}

#endif /* !PIN_FUZZ_CONF_H */
