/* fuzz_netlink.c - datagrams of the proc connector and of taskstats
 *
 * Input: one datagram as a netlink socket would hand it to the profiler
 * (src/common/libprof: cnproc_parse, taskstats_parse), the same bytes to
 * both parsers; the events then go through the step tracker and the
 * loss counter.  Invariants:
 *   - each parser returns -1 or a count <= max; reads only the input
 *     (ASan: the input is copied to a buffer of its exact size);
 *   - failure: errno EINVAL, EPROTO or E2BIG and one printable line
 *     starting with "proc connector: " / "taskstats: ";
 *   - success: every event's type agrees with the kernel's code, a comm
 *     is NUL-terminated, a taskstats record has its NUL-terminated comm;
 *   - parsing is deterministic: a second parse gives the same events;
 *   - the tracker never counts a task of the step below zero, and after
 *     every exit of the events it tracks no more than it was fed.
 */
#include <errno.h>
#include <linux/cn_proc.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "libprof/cnproc.h"
#include "libprof/taskstats.h"
#include "libprof/tracker.h"

#define MAXEV 64

static enum cnproc_type type_of (uint32_t what)
{
    switch (what) {
        case PROC_EVENT_NONE:
            return CNPROC_NONE;
        case PROC_EVENT_FORK:
            return CNPROC_FORK;
        case PROC_EVENT_EXEC:
            return CNPROC_EXEC;
        case PROC_EVENT_EXIT:
            return CNPROC_EXIT;
        case PROC_EVENT_COMM:
            return CNPROC_COMM;
        default:
            return CNPROC_OTHER;
    }
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static struct cnproc_event ev[MAXEV], again[MAXEV];
    static struct ts_record rec[MAXEV];
    uint8_t *buf = malloc (size ? size : 1);
    pin_error_t e;
    int n, m;

    if (!buf)
        abort ();
    memcpy (buf, data, size);

    fuzz_error_reset (&e);
    errno = 0;
    n = cnproc_parse (buf, size, ev, MAXEV, &e);
    FUZZ_LOG ("cnproc_parse: %d %s", n, n < 0 ? e.text : "");
    FUZZ_ASSERT (n >= -1 && n <= MAXEV, "cnproc_parse returned %d", n);
    if (n < 0) {
        FUZZ_ASSERT (errno == EINVAL || errno == EPROTO || errno == E2BIG,
                     "errno %d",
                     errno);
        fuzz_check_error (&e, false);
        fuzz_check_prefix (&e, "proc connector: ");
    } else {
        struct tracker *t = tracker_create ();
        struct cnproc_seq *s = cnproc_seq_create ();
        struct tracker_counts c;
        FUZZ_ASSERT (t && s, "out of memory");
        FUZZ_ASSERT (cnproc_parse (buf, size, again, MAXEV, NULL) == n,
                     "a second parse differs");
        tracker_add_root (t, 1, "init", 0);
        for (int i = 0; i < n; i++) {
            FUZZ_ASSERT (ev[i].type == type_of (ev[i].what),
                         "type %d for what 0x%x",
                         ev[i].type,
                         ev[i].what);
            FUZZ_ASSERT (memchr (ev[i].comm, '\0', sizeof (ev[i].comm)),
                         "comm not terminated");
            FUZZ_ASSERT (memcmp (&ev[i], &again[i], sizeof (ev[i])) == 0,
                         "event %d differs on a second parse",
                         i);
            cnproc_seq_note (s, &ev[i]);
            tracker_feed (t, &ev[i], NULL);
        }
        tracker_counts (t, &c);
        FUZZ_ASSERT (c.processes <= (uint64_t)n + 1
                         && c.threads <= (uint64_t)n,
                     "tracker counts %ju/%ju after %d events",
                     (uintmax_t)c.processes,
                     (uintmax_t)c.threads,
                     n);
        tracker_destroy (t);
        cnproc_seq_destroy (s);
    }

    fuzz_error_reset (&e);
    errno = 0;
    m = taskstats_parse (buf, size, 27, rec, MAXEV, &e);
    FUZZ_LOG ("taskstats_parse: %d %s", m, m < 0 ? e.text : "");
    FUZZ_ASSERT (m >= -1 && m <= MAXEV, "taskstats_parse returned %d", m);
    if (m < 0) {
        FUZZ_ASSERT (errno == EINVAL || errno == EPROTO || errno == E2BIG,
                     "errno %d",
                     errno);
        fuzz_check_error (&e, false);
        fuzz_check_prefix (&e, "taskstats: ");
    } else {
        for (int i = 0; i < m; i++)
            FUZZ_ASSERT (memchr (rec[i].comm, '\0', sizeof (rec[i].comm)),
                         "taskstats comm not terminated");
    }
    free (buf);
    return 0;
}
