/* fuzz_summary.c - acct_summary_parse() and _merge(): slurmdbd's
 * AdminComment as slurm-pin reads and rewrites it
 *
 * Input: any bytes (up to the first NUL), as the field may hold: other
 * tools' text, our token in either form (summary.h), the old " AA== "
 * form, garbage.  Invariants (src/common/libacct/summary.h):
 *   - parse returns 0 or 1 (1 with an error text), never -1 here; the
 *     other text is never longer than the field;
 *   - merging one node's records gives a field of at most the bound that
 *     holds exactly those records for the node, whose other text is the
 *     input's, byte for byte, first in the field;
 *   - after other text, no character of ours is one a base64 decoder
 *     takes (A-Z a-z 0-9 + / = - _), so a reader of that text by a
 *     lenient base64 decoder (jobstats) sees only its own characters;
 *   - merging the same records again gives the same text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "libacct/summary.h"

static const char *const recs[] = {
    "{\"v\":1,\"kind\":\"job\",\"job_id\":7,\"node\":\"vm\",\"start_us\":1}",
    "{\"v\":1,\"kind\":\"step\",\"job_id\":7,\"step_id\":0,\"node\":\"vm\","
    "\"start_us\":2}",
};

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *field = fuzz_strndup (data, size);
    char *other = NULL, *other2 = NULL, *f, *g;
    struct acct_summary *s = NULL, *s2 = NULL;
    pin_error_t err = {""};
    size_t olen;
    int rc;

    rc = acct_summary_parse (field, &other, &s, &err);
    FUZZ_ASSERT (rc == 0 || rc == 1, "rc %d", rc);
    FUZZ_ASSERT (rc == 0 || err.text[0], "rc 1 without an error text");
    olen = strlen (other);
    FUZZ_ASSERT (olen <= strlen (field), "other %zu bytes", olen);
    FUZZ_LOG ("rc %d, %zu nodes, other %zu bytes",
              rc,
              acct_summary_node_count (s),
              olen);
    acct_summary_destroy (s);

    f = acct_summary_merge (field, "vm", recs, 2, ACCT_SUMMARY_MAX, &err);
    FUZZ_ASSERT (f, "merge: %s", err.text);
    FUZZ_ASSERT (strlen (f) <= ACCT_SUMMARY_MAX, "%zu bytes", strlen (f));
    FUZZ_ASSERT (acct_summary_has_node (f, "vm", recs, 2), "records lost");
    FUZZ_ASSERT (acct_summary_parse (f, &other2, &s2, &err) == 0,
                 "merged field does not parse: %s",
                 err.text);
    FUZZ_ASSERT (strcmp (other, other2) == 0, "other text changed");
    FUZZ_ASSERT (strncmp (f, other, olen) == 0, "other text not first");
    if (olen)
        FUZZ_ASSERT (!strpbrk (f + olen,
                               "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "abcdefghijklmnopqrstuvwxyz0123456789+/=-_"),
                     "a base64 character after the other text");
    acct_summary_destroy (s2);

    g = acct_summary_merge (f, "vm", recs, 2, ACCT_SUMMARY_MAX, &err);
    FUZZ_ASSERT (g && strcmp (f, g) == 0, "merging again changed the field");
    free (g);
    free (f);
    free (other2);
    free (other);
    free (field);
    return 0;
}
