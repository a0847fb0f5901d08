/* fuzz_claims.c - the claim files of the affinity fallback
 *
 * Input: the content of a claim file in StateDir/claims (up to its first
 * NUL byte, as claims_busy() reads it), the same bytes as a file name, and
 * as the text of /proc/PID/stat.  Parsers (libclaims/claims.h):
 * claims_parse_content() ("PID START CPULIST\n", or the older
 * "PID CPULIST\n"), claims_parse_name() ("job_<job>.step_<step>") and
 * claims_parse_proc_stat().
 * Invariants:
 *   - a claim is accepted only as one line ending in its newline, a pid
 *     in 1..INT32_MAX and a non-empty, finite CPU list of CPUs below
 *     100000; written back as claims_add() writes it ("%ld %llu %s\n",
 *     or "%ld %s\n" without a start time) it parses to the same pid,
 *     start time and CPUs;
 *   - /proc/PID/stat: 0 or -1, a state letter on success;
 *   - a name is accepted only in the form claims_add() writes: printing
 *     the parsed job and step gives the input again, so that a file
 *     claims_add() did not write is never read, or removed, as a claim.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "libclaims/claims.h"
#include "libtopo/topo.h"

static void check_content (const char *s)
{
    size_t len = strlen (s);
    char *buf = strdup (s);
    char *canon = NULL;
    char *list = NULL;
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    hwloc_bitmap_t again = hwloc_bitmap_alloc ();
    pid_t pid = -7, pid2 = -7;
    uint64_t start = 7, start2 = 7;
    int rc;

    if (!buf || !set || !again)
        abort ();
    rc = claims_parse_content (buf, &pid, &start, set);
    FUZZ_LOG ("claims_parse_content: %d (pid %ld)", rc, (long)pid);
    FUZZ_ASSERT (rc == 0 || rc == 1, "rc %d", rc);
    if (rc == 0) {
        FUZZ_ASSERT (pid == -7, "pid written for a refused claim");
        goto out;
    }
    FUZZ_ASSERT (pid > 0 && pid <= INT32_MAX, "pid %ld", (long)pid);
    FUZZ_ASSERT (len > 0 && strchr (s, '\n') == s + len - 1,
                 "'%s' accepted: not one line ending in a newline",
                 s);
    FUZZ_ASSERT (!hwloc_bitmap_iszero (set) && hwloc_bitmap_weight (set) > 0
                     && hwloc_bitmap_last (set) < 100000,
                 "'%s': bad set",
                 s);
    if (!(list = topo_list_format (set))
        || (start > 0 ? asprintf (&canon,
                                  "%ld %llu %s\n",
                                  (long)pid,
                                  (unsigned long long)start,
                                  list)
                      : asprintf (&canon, "%ld %s\n", (long)pid, list))
               < 0)
        abort ();
    FUZZ_ASSERT (claims_parse_content (canon, &pid2, &start2, again) == 1,
                 "'%s' written back as '%s' is refused",
                 s,
                 canon);
    FUZZ_ASSERT (pid2 == pid && start2 == start
                     && hwloc_bitmap_isequal (set, again),
                 "'%s' written back parses differently",
                 s);
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
              ok ? "true" : "false",
              job,
              step);
    if (!ok) {
        FUZZ_ASSERT (job == 7 && step == 7,
                     "ids written for a refused "
                     "name");
        return;
    }
    snprintf (canon,
              sizeof (canon),
              "job_%" PRIu32 ".step_%" PRIu32,
              job,
              step);
    FUZZ_ASSERT (strcmp (s, canon) == 0,
                 "'%s' accepted as the claim of "
                 "%s",
                 s,
                 canon);
}

static void check_proc_stat (const char *s)
{
    char state = '?';
    uint64_t start = 0;
    int rc = claims_parse_proc_stat (s, &state, &start);

    FUZZ_ASSERT (rc == 0 || rc == -1, "claims_parse_proc_stat: rc %d", rc);
    if (rc == 0)
        FUZZ_ASSERT (isprint ((unsigned char)state) && state != ' ',
                     "state 0x%02x accepted",
                     (unsigned char)state);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *s = fuzz_strndup (data, size);

    check_content (s);
    check_name (s);
    check_proc_stat (s);
    free (s);
    return 0;
}
