/* fuzz_claims.c - the claim files of the affinity fallback
 *
 * Input: the content of a claim file in StateDir/claims (up to its first
 * NUL byte, as claims_busy() reads it), and the same bytes as a file
 * name.  Parsers: claims_parse() ("PID CPULIST\n") and claims_parse_name()
 * ("job_<job>.step_<step>"), exposed by cg2_private.h.
 * Invariants:
 *   - a claim is accepted only as one line ending in its newline, a pid
 *     in 1..INT32_MAX and a non-empty, finite CPU list of CPUs below
 *     100000; written back as claims_add() writes it ("%ld %s\n") it
 *     parses to the same pid and CPUs;
 *   - a name is accepted only in the form claims_add() writes: printing
 *     the parsed job and step gives the input again, so that a file
 *     claims_add() did not write is never read, or removed, as a claim.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "libtopo/topo.h"
#include "libcgroup2/cg2_private.h"
#include "fuzz.h"

static void check_content (const char *s)
{
    size_t len = strlen (s);
    char *buf = strdup (s);
    char *canon = NULL;
    char *list = NULL;
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    hwloc_bitmap_t again = hwloc_bitmap_alloc ();
    pid_t pid = -7, pid2 = -7;
    int rc;

    if (!buf || !set || !again)
        abort ();
    rc = claims_parse (buf, &pid, set);
    FUZZ_LOG ("claims_parse: %d (pid %ld)", rc, (long)pid);
    FUZZ_ASSERT (rc == 0 || rc == 1, "rc %d", rc);
    if (rc == 0) {
        FUZZ_ASSERT (pid == -7, "pid written for a refused claim");
        goto out;
    }
    FUZZ_ASSERT (pid > 0 && pid <= INT32_MAX, "pid %ld", (long)pid);
    FUZZ_ASSERT (len > 0 && strchr (s, '\n') == s + len - 1,
                 "'%s' accepted: not one line ending in a newline", s);
    FUZZ_ASSERT (!hwloc_bitmap_iszero (set) && hwloc_bitmap_weight (set) > 0
                 && hwloc_bitmap_last (set) < 100000, "'%s': bad set", s);
    if (!(list = topo_list_format (set))
        || asprintf (&canon, "%ld %s\n", (long)pid, list) < 0)
        abort ();
    FUZZ_ASSERT (claims_parse (canon, &pid2, again) == 1,
                 "'%s' written back as '%s' is refused", s, canon);
    FUZZ_ASSERT (pid2 == pid && hwloc_bitmap_isequal (set, again),
                 "'%s' written back parses differently", s);
out:
    free (canon);
    free (list);
    free (buf);
    hwloc_bitmap_free (set);
    hwloc_bitmap_free (again);
}

static void check_name (const char *s)
{
    uint32_t job = 7, step = 7;
    char canon[64];

    bool ok = claims_parse_name (s, &job, &step);

    FUZZ_LOG ("claims_parse_name: %s (job %" PRIu32 " step %" PRIu32 ")",
              ok ? "true" : "false", job, step);
    if (!ok) {
        FUZZ_ASSERT (job == 7 && step == 7, "ids written for a refused "
                     "name");
        return;
    }
    snprintf (canon, sizeof (canon), "job_%" PRIu32 ".step_%" PRIu32, job,
              step);
    FUZZ_ASSERT (strcmp (s, canon) == 0, "'%s' accepted as the claim of "
                 "%s", s, canon);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *s = fuzz_strndup (data, size);

    check_content (s);
    check_name (s);
    free (s);
    return 0;
}
