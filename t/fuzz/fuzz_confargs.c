/* fuzz_confargs.c - the plugstack.conf arguments of pin.so
 *
 * Input: the arguments one per line (a line may hold spaces: the parser
 * must cope with anything SPANK hands it), then optionally a line "--"
 * and the bytes of the pin.conf they refer to.  The harness appends
 * "conf=<that pin.conf>" as the last argument, so no fuzzed path is ever
 * opened and /etc/slurm/pin.conf is never read: a fuzzed conf= argument
 * is checked, then refused as given twice.  Parser: pin_conf_load_args()
 * over the defaults.
 * Invariants:
 *   - success: every setting is valid (as in fuzz_conf.c), conf->path is
 *     the harness's pin.conf, and the settings given back as arguments
 *     (with an empty pin.conf) load to the same settings;
 *   - failure: errno EINVAL, the caller's struct untouched, one line
 *     starting with "plugstack.conf argument" or with the pin.conf's
 *     path and ':'.
 */
#include "fuzz_conf.h"

#define MAX_ARGS 64

static struct memconf in, empty;

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    memconf_open (&in, "pin.conf");
    memconf_open (&empty, "pin.conf.empty");
    return 0;
}

/* The settings of c as plugstack arguments (in av, strings in buf). */
static int conf_args (const struct pin_conf *c,
                      const char *path,
                      char **av,
                      char *buf,
                      size_t size)
{
    char allowed[256];
    const char *vals[8];
    static const char *keys[] = {
        "default_policy",
        "allowed_policies",
        "cgroup_root",
        "cgroup_base",
        "topology_cache",
        "state_dir",
        "verbose",
        "conf",
    };
    size_t off = 0;
    int i;

    allowed_text (c, allowed, sizeof (allowed));
    vals[0] = place_policy_name (c->default_policy);
    vals[1] = allowed;
    vals[2] = c->cgroup_root;
    vals[3] = c->cgroup_base;
    vals[4] = c->topology_cache;
    vals[5] = c->state_dir;
    vals[6] = c->verbose ? "true" : "false";
    vals[7] = path;
    for (i = 0; i < 8; i++) {
        int n = snprintf (buf + off, size - off, "%s=%s", keys[i], vals[i]);
        if (n < 0 || (size_t)n >= size - off)
            abort ();
        av[i] = buf + off;
        off += (size_t)n + 1;
    }
    return i;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *s = fuzz_strndup (data, size);
    char *av[MAX_ARGS + 1];
    char conf_arg[96];
    struct pin_conf c, before, again;
    pin_error_t e;
    size_t conf_off = size;
    int ac = 0, rc;
    char *p = s;

    /* arguments up to a line "--", then the pin.conf (raw bytes, NULs
     * included) */
    while (ac < MAX_ARGS) {
        char *nl = strchr (p, '\n');
        if (nl)
            *nl = '\0';
        if (strcmp (p, "--") == 0) {
            conf_off = (size_t)(p - s) + 3;
            break;
        }
        if (*p || nl)
            av[ac++] = p;
        if (!nl)
            break;
        p = nl + 1;
    }
    memconf_write (&in,
                   data + (conf_off < size ? conf_off : size),
                   conf_off < size ? size - conf_off : 0);
    snprintf (conf_arg, sizeof (conf_arg), "conf=%s", in.path);
    av[ac++] = conf_arg;

    pin_conf_defaults (&c);
    memcpy (&before, &c, sizeof (c));
    fuzz_error_reset (&e);
    errno = 0;
    rc = pin_conf_load_args (&c, ac, av, &e);
    FUZZ_LOG ("pin_conf_load_args (%d arguments): %d %s",
              ac,
              rc,
              rc < 0 ? e.text : "");
    FUZZ_ASSERT (rc == 0 || rc == -1, "rc %d", rc);
    if (rc < 0) {
        FUZZ_ASSERT (errno == EINVAL, "errno %d (%s)", errno, e.text);
        FUZZ_ASSERT (memcmp (&c, &before, sizeof (c)) == 0,
                     "conf changed by a failed load");
        fuzz_check_error (&e, true);
        FUZZ_ASSERT (strncmp (e.text, "plugstack.conf argument", 23) == 0
                         || (strncmp (e.text, in.path, strlen (in.path)) == 0
                             && e.text[strlen (in.path)] == ':'),
                     "'%s' names neither an argument nor the file",
                     e.text);
        goto out;
    }
    check_conf_valid (&c);
    FUZZ_ASSERT (strcmp (c.path, in.path) == 0, "path '%s'", c.path);

    /* given back as arguments, the settings load to themselves */
    {
        char buf[5 * 4096 + 1024];
        char *av2[8];
        int ac2 = conf_args (&c, empty.path, av2, buf, sizeof (buf));

        pin_conf_defaults (&again);
        FUZZ_ASSERT (pin_conf_load_args (&again, ac2, av2, &e) == 0,
                     "given back as arguments, refused: %s",
                     e.text);
        FUZZ_ASSERT (conf_settings_equal (&c, &again),
                     "given back as arguments, loads differently");
    }
out:
    free (s);
    return 0;
}
