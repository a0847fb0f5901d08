/* fuzz_cpulist.c - kernel CPU lists ("0-3,8") and Slurm core lists
 *
 * Input: a list as it comes from a user, a cgroup file or Slurm's
 * S_STEP_ALLOC_CORES (up to its first NUL byte).  Parsers:
 * topo_list_parse() and topo_slurm_cores_to_cpuset() (on the synthetic
 * topology "pack:2 core:4 pu:2": core N is PUs 2N and 2N+1).
 * Invariants:
 *   - topo_list_parse() accepts exactly what a plain reference parser
 *     written from topo.h's description accepts, with the same set;
 *   - an accepted list round-trips: topo_list_format() of the set parses
 *     (with topo_list_parse() and with hwloc's own list parser) to the
 *     same set, and formatting that gives the same text again;
 *   - failure: errno EINVAL, the caller's set untouched, one printable
 *     line that starts by quoting the input;
 *   - topo_slurm_cores_to_cpuset() gives all PUs of the listed cores and
 *     refuses (ERANGE) an id beyond the last core, with the caller's set
 *     untouched and one printable line on failure.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "libtopo/topo.h"

#define SYNTH "pack:2 core:4 pu:2"
#define SYNTH_CORES 8

static topo_t *synth;

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerInitialize (int *argc, char ***argv)
{
    pin_error_t e;

    (void)argc;
    (void)argv;
    if (!(synth = topo_load (SYNTH, 0, &e))) {
        fprintf (stderr, "fuzz_cpulist: %s\n", e.text);
        abort ();
    }
    return 0;
}

/* A decimal CPU number of 1 to 5 digits without a leading zero at *p
 * (before end); advances *p. */
static bool ref_number (const char **p, const char *end, unsigned *val)
{
    const char *s = *p;
    unsigned v = 0;
    int digits = 0;

    while (s < end && *s >= '0' && *s <= '9') {
        v = v * 10 + (unsigned)(*s - '0');
        s++;
        if (++digits > 5)
            return false;
    }
    if (digits == 0 || (digits > 1 && **p == '0'))
        return false;
    *p = s;
    *val = v;
    return true;
}

/* The list syntax of topo.h, written independently: true and the set if
 * `s` is a valid list. */
static bool ref_parse (const char *s, hwloc_bitmap_t set)
{
    size_t len = strlen (s);
    const char *p = s, *end;

    hwloc_bitmap_zero (set);
    if (len > 0 && s[len - 1] == '\n')
        len--; /* one trailing newline */
    end = s + len;
    if (len == 0)
        return true;
    for (;;) {
        unsigned lo, hi;

        if (!ref_number (&p, end, &lo))
            return false;
        hi = lo;
        if (p < end && *p == '-') {
            p++;
            if (!ref_number (&p, end, &hi))
                return false;
        }
        if (lo > hi)
            return false;
        hwloc_bitmap_set_range (set, lo, (int)hi);
        if (p == end)
            return true;
        if (*p++ != ',')
            return false;
    }
}

/* The error names the input: "'<first 40 characters, unprintable as
 * '?'>..." */
static void check_names_input (const pin_error_t *e, const char *s)
{
    FUZZ_ASSERT (e->text[0] == '\'', "'%s' for '%s'", e->text, s);
    for (size_t i = 0; s[i] && i < 40; i++) {
        unsigned char c = (unsigned char)s[i];
        char want = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
        FUZZ_ASSERT (e->text[1 + i] == want,
                     "'%s' does not quote '%s'",
                     e->text,
                     s);
    }
}

static void check_list (const char *s, hwloc_bitmap_t ref, bool valid)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    hwloc_bitmap_t again = hwloc_bitmap_alloc ();
    char *text = NULL, *text2 = NULL;
    pin_error_t e;
    int rc;

    if (!set || !again)
        abort ();
    fuzz_error_reset (&e);
    hwloc_bitmap_set (set, 7); /* must survive a failure */
    hwloc_bitmap_set (set, 99999);
    errno = 0;
    rc = topo_list_parse (s, set, &e);
    FUZZ_LOG ("topo_list_parse: %d %s", rc, rc < 0 ? e.text : "");
    FUZZ_ASSERT (rc == (valid ? 0 : -1),
                 "'%s': rc %d, reference %s (%s)",
                 s,
                 rc,
                 valid ? "valid" : "invalid",
                 e.text);
    if (rc < 0) {
        FUZZ_ASSERT (errno == EINVAL, "errno %d", errno);
        FUZZ_ASSERT (hwloc_bitmap_weight (set) == 2
                         && hwloc_bitmap_isset (set, 7)
                         && hwloc_bitmap_isset (set, 99999),
                     "set changed on failure");
        fuzz_check_error (&e, false);
        check_names_input (&e, s);
        goto out;
    }
    FUZZ_ASSERT (hwloc_bitmap_isequal (set, ref),
                 "'%s': set differs from "
                 "the reference",
                 s);
    FUZZ_ASSERT (hwloc_bitmap_weight (set) >= 0, "infinite set");
    FUZZ_ASSERT (hwloc_bitmap_iszero (set) || hwloc_bitmap_last (set) < 100000,
                 "'%s': CPU %d accepted",
                 s,
                 hwloc_bitmap_last (set));
    /* parse -> format -> parse */
    if (!(text = topo_list_format (set)))
        fuzz_fail ("topo_list_format failed for '%s'", s);
    rc = topo_list_parse (text, again, &e);
    FUZZ_ASSERT (rc == 0,
                 "'%s' formatted as '%s', which fails: %s",
                 s,
                 text,
                 e.text);
    FUZZ_ASSERT (hwloc_bitmap_isequal (set, again),
                 "'%s' -> '%s' -> "
                 "another set",
                 s,
                 text);
    if (!(text2 = topo_list_format (again)))
        fuzz_fail ("topo_list_format failed for '%s'", text);
    FUZZ_ASSERT (strcmp (text, text2) == 0,
                 "'%s' formats as '%s' then "
                 "'%s'",
                 s,
                 text,
                 text2);
    /* hwloc reads what we write */
    hwloc_bitmap_zero (again);
    FUZZ_ASSERT (hwloc_bitmap_list_sscanf (again, text) == 0
                     && hwloc_bitmap_isequal (set, again),
                 "hwloc reads '%s' differently",
                 text);
out:
    free (text);
    free (text2);
    hwloc_bitmap_free (set);
    hwloc_bitmap_free (again);
}

static void check_slurm (const char *s, hwloc_const_bitmap_t ref, bool valid)
{
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc ();
    hwloc_bitmap_t want = hwloc_bitmap_alloc ();
    pin_error_t e;
    int rc, id;

    if (!cpus || !want)
        abort ();
    fuzz_error_reset (&e);
    hwloc_bitmap_set (cpus, 1000); /* must survive a failure */
    errno = 0;
    rc = topo_slurm_cores_to_cpuset (synth, s, cpus, &e);
    FUZZ_LOG ("topo_slurm_cores_to_cpuset: %d %s", rc, rc < 0 ? e.text : "");
    if (!valid || hwloc_bitmap_last (ref) >= SYNTH_CORES) {
        FUZZ_ASSERT (rc == -1, "'%s' accepted as Slurm cores", s);
        FUZZ_ASSERT (errno == (valid ? ERANGE : EINVAL),
                     "'%s': errno %d",
                     s,
                     errno);
        FUZZ_ASSERT (hwloc_bitmap_weight (cpus) == 1
                         && hwloc_bitmap_isset (cpus, 1000),
                     "set changed on failure");
        fuzz_check_error (&e, false);
        if (valid)
            fuzz_check_prefix (&e, "Slurm core id ");
        else
            check_names_input (&e, s);
        goto out;
    }
    FUZZ_ASSERT (rc == 0, "'%s' refused: %s", s, e.text);
    hwloc_bitmap_foreach_begin (id, ref)
    {
        hwloc_bitmap_set_range (want, 2 * id, 2 * id + 1);
    }
    hwloc_bitmap_foreach_end ();
    FUZZ_ASSERT (hwloc_bitmap_isequal (cpus, want), "'%s': wrong PUs", s);
out:
    hwloc_bitmap_free (cpus);
    hwloc_bitmap_free (want);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *s = fuzz_strndup (data, size);
    hwloc_bitmap_t ref = hwloc_bitmap_alloc ();
    bool valid;

    if (!ref)
        abort ();
    valid = ref_parse (s, ref);
    check_list (s, ref, valid);
    check_slurm (s, ref, valid);
    hwloc_bitmap_free (ref);
    free (s);
    return 0;
}
