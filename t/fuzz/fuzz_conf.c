/* fuzz_conf.c - the pin.conf file parser
 *
 * Input: the bytes of a pin.conf (NUL bytes included: the parser reads
 * the file itself).  Parser: pin_conf_load_file() over the defaults.
 * Invariants:
 *   - success: every setting is valid (DefaultPolicy allowed, paths
 *     absolute without '..' or control characters, CgroupBase one plain
 *     name, strings terminated), conf->path is the file, and the settings
 *     written back as a pin.conf load to the same settings;
 *   - failure: errno EINVAL, the caller's struct untouched, one line
 *     (control characters other than TAB never) starting with
 *     "FILE:" and, where it names a line, a line the file has.
 */
#include "fuzz_conf.h"

static struct memconf in, out;

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    memconf_open (&in, "pin.conf");
    memconf_open (&out, "pin.conf.again");
    return 0;
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    struct pin_conf c, before, again;
    pin_error_t e;
    char *text;
    int rc;

    memconf_write (&in, data, size);
    pin_conf_defaults (&c);
    memcpy (&before, &c, sizeof (c));
    fuzz_error_reset (&e);
    errno = 0;
    rc = pin_conf_load_file (&c, in.path, true, &e);
    FUZZ_LOG ("pin_conf_load_file: %d %s", rc, rc < 0 ? e.text : "");
    FUZZ_ASSERT (rc == 0 || rc == -1, "rc %d", rc);
    if (rc < 0) {
        unsigned line = error_line (&e, in.path);
        FUZZ_ASSERT (errno == EINVAL, "errno %d (%s)", errno, e.text);
        FUZZ_ASSERT (memcmp (&c, &before, sizeof (c)) == 0,
                     "conf changed by a failed load");
        fuzz_check_error (&e, true);
        fuzz_check_prefix (&e, in.path);
        FUZZ_ASSERT (e.text[strlen (in.path)] == ':', "'%s'", e.text);
        FUZZ_ASSERT (line <= count_lines (data, size),
                     "'%s': the file has %u lines",
                     e.text,
                     count_lines (data, size));
        return 0;
    }
    check_conf_valid (&c);
    FUZZ_ASSERT (strcmp (c.path, in.path) == 0, "path '%s'", c.path);

    /* written back, the settings load to themselves */
    text = conf_text (&c);
    memconf_write (&out, text, strlen (text));
    pin_conf_defaults (&again);
    FUZZ_ASSERT (pin_conf_load_file (&again, out.path, true, &e) == 0,
                 "written back, refused: %s",
                 e.text);
    FUZZ_ASSERT (conf_settings_equal (&c, &again),
                 "written back as '%s', loads differently",
                 text);
    free (text);
    return 0;
}
