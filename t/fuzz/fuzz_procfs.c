/* fuzz_procfs.c - the /proc text the profiler's sampler reads
 *
 * Input: the content of a /proc file (up to its first NUL byte), given
 * to the four parsers of src/common/libprof/procfs.c: /proc/PID/stat,
 * /proc/PID/status, /proc/PID/smaps_rollup and /proc/stat (for CPUs
 * 0-7).  The files come from the kernel, but a process chooses its own
 * command (stat's field 2) freely: ')' ' ' and digits included.
 * Invariants:
 *   - failure: errno EINVAL (or ENOENT / E2BIG for /proc/stat), the
 *     output untouched, one printable line with the file's prefix;
 *   - stat success: the pid is positive, the command is NUL-terminated
 *     and is what lies between the first '(' and the last ')' (cut at
 *     16), the state is not a space;
 *   - /proc/stat success: one entry per CPU asked, each CPU once.
 */
#include <errno.h>
#include <hwloc.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "libprof/procfs.h"

static void check_fail (int rc,
                        const pin_error_t *e,
                        const void *out,
                        const void *marker,
                        size_t n,
                        const char *prefix,
                        bool other_errno_ok)
{
    FUZZ_ASSERT (rc == -1, "rc %d", rc);
    FUZZ_ASSERT (errno == EINVAL || other_errno_ok, "errno %d", errno);
    if (marker)
        FUZZ_ASSERT (memcmp (out, marker, n) == 0,
                     "output written on failure");
    fuzz_check_error (e, false);
    fuzz_check_prefix (e, prefix);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    char *s = fuzz_strndup (data, size);
    pin_error_t e;
    int rc;

    {
        struct procfs_stat st, marker;
        memset (&st, 0xa5, sizeof (st));
        memset (&marker, 0xa5, sizeof (marker));
        fuzz_error_reset (&e);
        errno = 0;
        rc = procfs_parse_stat (s, &st, &e);
        if (rc < 0) {
            check_fail (rc, &e, &st, &marker, sizeof (st), "stat: ", false);
        } else {
            const char *open = strchr (s, '('), *close = strrchr (s, ')');
            size_t n = (size_t)(close - open - 1);
            FUZZ_ASSERT (rc == 0 && st.pid > 0, "pid %d", st.pid);
            FUZZ_ASSERT (memchr (st.comm, '\0', sizeof (st.comm)),
                         "comm not terminated");
            FUZZ_ASSERT (strncmp (st.comm, open + 1, n > 16 ? 16 : n) == 0
                             && strlen (st.comm) == (n > 16 ? 16 : n),
                         "comm '%s'",
                         st.comm);
            FUZZ_ASSERT (st.state != ' ' && st.state != '\0', "no state");
        }
    }
    {
        struct procfs_status ps, marker;
        memset (&ps, 0xa5, sizeof (ps));
        memset (&marker, 0xa5, sizeof (marker));
        fuzz_error_reset (&e);
        errno = 0;
        rc = procfs_parse_status (s, &ps, &e);
        if (rc < 0)
            check_fail (rc, &e, &ps, &marker, sizeof (ps), "status: ", false);
        else
            FUZZ_ASSERT (strstr (s, "voluntary_ctxt_switches:"),
                         "accepted without the ctxt lines");
    }
    {
        struct procfs_rollup r, marker;
        memset (&r, 0xa5, sizeof (r));
        memset (&marker, 0xa5, sizeof (marker));
        fuzz_error_reset (&e);
        errno = 0;
        rc = procfs_parse_rollup (s, &r, &e);
        if (rc < 0)
            check_fail (rc,
                        &e,
                        &r,
                        &marker,
                        sizeof (r),
                        "smaps_rollup: ",
                        false);
        else
            FUZZ_ASSERT (strstr (s, "Rss:") && strstr (s, "Pss:"),
                         "accepted without Rss and Pss");
    }
    {
        uint64_t io[4], marker[4];
        memset (io, 0xa5, sizeof (io));
        memset (marker, 0xa5, sizeof (marker));
        fuzz_error_reset (&e);
        errno = 0;
        rc = procfs_parse_iostat (s, io, &e);
        if (rc < 0)
            check_fail (rc,
                        &e,
                        io,
                        marker,
                        sizeof (io),
                        "io.stat line ",
                        false);
        else
            FUZZ_ASSERT (rc == 0 && (!strpbrk (s, "=") || strchr (s, ':')),
                         "accepted a value without a device");
    }
    {
        hwloc_bitmap_t set = hwloc_bitmap_alloc ();
        struct procfs_cpu cpu[8];
        FUZZ_ASSERT (set, "out of memory");
        hwloc_bitmap_set_range (set, 0, 7);
        fuzz_error_reset (&e);
        errno = 0;
        rc = procfs_parse_cpustat (s, set, cpu, 8, &e);
        if (rc < 0) {
            FUZZ_ASSERT (errno == EINVAL || errno == ENOENT,
                         "errno %d",
                         errno);
            check_fail (rc, &e, NULL, NULL, 0, "/proc/stat: ", true);
        } else {
            unsigned seen = 0;
            FUZZ_ASSERT (rc == 8, "%d CPUs of 8", rc);
            for (int i = 0; i < rc; i++) {
                FUZZ_ASSERT (cpu[i].cpu >= 0 && cpu[i].cpu < 8
                                 && !(seen & (1u << cpu[i].cpu)),
                             "cpu %d",
                             cpu[i].cpu);
                seen |= 1u << cpu[i].cpu;
            }
        }
        hwloc_bitmap_free (set);
    }
    free (s);
    return 0;
}
