/* test/claims.c - PU claims of running steps and the node lock
 *
 * Runs in a private temporary directory; the owners of claims are this
 * process (alive), reaped children (gone), an unreaped child (a zombie)
 * and this process with a wrong start time (a recycled pid).  One case
 * needs root (chown) and is reported as SKIP otherwise.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libclaims/claims.h"
#include "libtest/tap.h"
#include "libtest/tmptree.h"
#include "libtopo/topo.h"

static void setup (void)
{
    tmptree_setup ("test_claims");
}

static void teardown (void)
{
    tmptree_teardown ();
}

static hwloc_bitmap_t set_of (const char *list)
{
    hwloc_bitmap_t s = hwloc_bitmap_alloc ();
    pin_error_t e;
    ck_assert_ptr_nonnull (s);
    ck_assert_msg (topo_list_parse (list, s, &e) == 0, "%s", e.text);
    return s;
}

static void assert_set (hwloc_const_bitmap_t s, const char *want)
{
    char *got = topo_list_format (s);
    ck_assert_ptr_nonnull (got);
    ck_assert_msg (strcmp (got, want) == 0,
                   "set is '%s', want '%s'",
                   got,
                   want);
    free (got);
}

static pid_t dead_pid (void)
{
    int status;
    pid_t pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0)
        _exit (0);
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    ck_assert_int_eq (kill (pid, 0), -1); /* reaped: gone */
    return pid;
}

/* Field 22 of /proc/self/stat, read here without the library. */
static unsigned long long own_start (void)
{
    char buf[1024], *p;
    unsigned long long v = 0;
    FILE *f = fopen ("/proc/self/stat", "r");
    size_t n;

    ck_assert_ptr_nonnull (f);
    n = fread (buf, 1, sizeof (buf) - 1, f);
    fclose (f);
    buf[n] = '\0';
    ck_assert_ptr_nonnull (p = strrchr (buf, ')'));
    for (int field = 2; field < 22; field++)
        ck_assert_ptr_nonnull (p = strchr (p + 1, ' '));
    ck_assert_int_eq (sscanf (p + 1, "%llu", &v), 1);
    return v;
}

/* ---- claims
 * ----------------------------------------------------------------- */

START_TEST (test_claims)
{
    pin_error_t e = {""};
    char dir[512];
    char want[64];
    struct stat st;
    hwloc_bitmap_t set = set_of ("0-1");
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    pid_t dead = dead_pid ();

    tmptree_path (dir, sizeof (dir), "state/claims");
    /* no directory yet: no claims */
    ck_assert_int_eq (claims_busy (dir, 1, 0, busy, &e), 0);
    ck_assert (hwloc_bitmap_iszero (busy));
    ck_assert_int_eq (claims_remove (dir, 1, 0, &e), 0);

    ck_assert_msg (claims_add (dir, 1, 0, getpid (), set, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_int_eq (stat (dir, &st), 0);
    ck_assert_uint_eq (st.st_mode & 07777, 0700);
    snprintf (want,
              sizeof (want),
              "%ld %llu 0-1\n",
              (long)getpid (),
              (unsigned long long)own_start ());
    ck_assert_str_eq (tmptree_get ("state/claims/job_1.step_0"), want);

    hwloc_bitmap_free (set);
    set = set_of ("2-3");
    /* a pid that does not run cannot claim; its old claim is stale */
    ck_assert_int_lt (claims_add (dir, 1, 1, dead, set, &e), 0);
    ck_assert_int_eq (errno, ESRCH);
    snprintf (want, sizeof (want), "%ld 1 2-3\n", (long)dead);
    tmptree_put ("state/claims/job_1.step_1", want);
    hwloc_bitmap_free (set);
    set = set_of ("4,4294");
    ck_assert_msg (claims_add (dir,
                               4294967295u,
                               4294967294u,
                               getpid (),
                               set,
                               &e)
                       == 0,
                   "%s",
                   e.text);
    ck_assert (tmptree_exists ("state/claims/job_4294967295.step_4294967294"));
    tmptree_put ("state/claims/job_5.step_0", "garbage\n");
    tmptree_put ("state/claims/job_6.step_0", "1 2-3"); /* no newline */
    tmptree_put ("state/claims/README", "not a claim\n");
    tmptree_put ("state/claims/job_7.step_0.bak", "1 8\n");
    /* not a name claims_add() writes (it prints "job_7.step_0"): not a
     * claim, neither counted nor removed */
    tmptree_put ("state/claims/job_07.step_0", "1 9\n");

    /* for step 1.0: its own claim and the dead one do not count */
    ck_assert_msg (claims_busy (dir, 1, 0, busy, &e) == 0, "%s", e.text);
    assert_set (busy, "4,4294");
    ck_assert (
        !tmptree_exists ("state/claims/job_1.step_1")); /* stale: removed */
    ck_assert (!tmptree_exists ("state/claims/job_5.step_0")); /* malformed */
    ck_assert (!tmptree_exists ("state/claims/job_6.step_0"));
    ck_assert (tmptree_exists ("state/claims/job_1.step_0"));
    ck_assert (tmptree_exists ("state/claims/README")); /* not ours */
    ck_assert (tmptree_exists ("state/claims/job_7.step_0.bak"));
    ck_assert (tmptree_exists ("state/claims/job_07.step_0"));

    /* another step sees 1.0 */
    hwloc_bitmap_zero (busy);
    ck_assert_int_eq (claims_busy (dir, 2, 0, busy, &e), 0);
    assert_set (busy, "0-1,4,4294");

    /* a new claim replaces the old one */
    hwloc_bitmap_free (set);
    set = set_of ("7");
    ck_assert_int_eq (claims_add (dir, 1, 0, getpid (), set, &e), 0);
    hwloc_bitmap_zero (busy);
    ck_assert_int_eq (claims_busy (dir, 2, 0, busy, &e), 0);
    assert_set (busy, "4,7,4294");

    ck_assert_int_eq (claims_remove (dir, 1, 0, &e), 0);
    ck_assert (!tmptree_exists ("state/claims/job_1.step_0"));
    ck_assert_int_eq (claims_remove (dir, 1, 0, &e), 0);

    /* bad arguments */
    ck_assert_int_lt (claims_add (dir, 1, 0, 0, set, &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    hwloc_bitmap_zero (set);
    ck_assert_int_lt (claims_add (dir, 1, 0, getpid (), set, &e), 0);
    ck_assert_int_lt (claims_add ("relative/claims", 1, 0, getpid (), set, &e),
                      0);
    ck_assert_int_lt (claims_busy ("/tmp/../etc", 1, 0, busy, &e), 0);
    ck_assert_int_eq (errno, EINVAL);
    hwloc_bitmap_free (set);
    hwloc_bitmap_free (busy);
}
END_TEST

/* An attacker could pre-create the directory: a symlink or a directory
 * writable by others is refused. */
/* claims_load: how many other live steps hold each PU.  Each case is a
 * set of claims ("job.step:cpus", the owner alive unless marked "dead")
 * and, for step 9.0, the busy set and the load of PUs 0-9. */
static const struct {
    const char *claims[6];
    const char *busy;
    unsigned load[10];
} load_cases[] = {
    {{NULL}, "", {0}},
    /* three --overlap steps of one job, all on the job's first CPU */
    {{"9.1:0", "9.2:0", "9.3:0", NULL}, "0", {3}},
    /* two CPUs, 0 held by 3 steps, 1 by one */
    {{"9.1:0", "9.2:0-1", "9.3:0", NULL}, "0-1", {3, 1}},
    /* other jobs count; the asking step's own claim does not */
    {{"9.0:0-9", "8.0:2-3", "7.4:3,9", NULL},
     "2-3,9",
     {0, 0, 1, 2, 0, 0, 0, 0, 0, 1}},
    /* a dead owner holds nothing (and its claim goes) */
    {{"9.1:1", "9.2:1,dead", NULL}, "1", {0, 1}},
    /* PUs beyond the table are busy but not counted */
    {{"9.1:4,12", "9.2:12", NULL}, "4,12", {0, 0, 0, 0, 1}},
};

START_TEST (test_claims_load)
{
    pin_error_t e = {""};
    char dir[512];
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    unsigned load[10] = {0};
    pid_t dead = dead_pid ();

    tmptree_path (dir, sizeof (dir), "state/claims");
    for (int i = 0; load_cases[_i].claims[i]; i++) {
        char buf[64], path[96], text[96];
        unsigned j, st;
        int n = 0;
        snprintf (buf, sizeof (buf), "%s", load_cases[_i].claims[i]);
        char *dead_mark = strstr (buf, ",dead");
        if (dead_mark)
            *dead_mark = '\0';
        ck_assert_int_eq (sscanf (buf, "%u.%u:%n", &j, &st, &n), 2);
        snprintf (path, sizeof (path), "state/claims/job_%u.step_%u", j, st);
        if (dead_mark) {
            snprintf (text, sizeof (text), "%ld 1 %s\n", (long)dead, buf + n);
            tmptree_put (path, text);
            continue;
        }
        hwloc_bitmap_t set = set_of (buf + n);
        ck_assert_msg (claims_add (dir, j, st, getpid (), set, &e) == 0,
                       "%s",
                       e.text);
        hwloc_bitmap_free (set);
    }
    ck_assert_msg (claims_load (dir, 9, 0, busy, load, 10, &e) == 0,
                   "%s",
                   e.text);
    assert_set (busy, load_cases[_i].busy);
    for (unsigned p = 0; p < 10; p++)
        ck_assert_msg (load[p] == load_cases[_i].load[p],
                       "case %d: PU %u "
                       "held by %u steps, expected %u",
                       _i,
                       p,
                       load[p],
                       load_cases[_i].load[p]);
    /* not cleared first: a second call adds as much again */
    hwloc_bitmap_zero (busy);
    ck_assert_int_eq (claims_load (dir, 9, 0, busy, load, 10, &e), 0);
    for (unsigned p = 0; p < 10; p++)
        ck_assert_uint_eq (load[p], 2 * load_cases[_i].load[p]);
    /* without a table it is claims_busy */
    hwloc_bitmap_zero (busy);
    ck_assert_int_eq (claims_load (dir, 9, 0, busy, NULL, 0, &e), 0);
    assert_set (busy, load_cases[_i].busy);
    hwloc_bitmap_free (busy);
}
END_TEST

START_TEST (test_claims_unsafe_dir)
{
    pin_error_t e = {""};
    char dir[512], target[512];
    hwloc_bitmap_t set = set_of ("0");
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();

    tmptree_mkdirs ("elsewhere", true);
    tmptree_path (target, sizeof (target), "elsewhere");
    tmptree_path (dir, sizeof (dir), "link");
    ck_assert_int_eq (symlink (target, dir), 0);
    /* claims_add makes the directory: mkdir_p refuses the link before it
     * looks through it; claims_busy opens it: O_NOFOLLOW refuses it */
    ck_assert_int_lt (claims_add (dir, 1, 0, getpid (), set, &e), 0);
    ck_assert_msg (strstr (e.text,
                           "link: a symbolic link; refusing to "
                           "follow it")
                       != NULL,
                   "%s",
                   e.text);
    e.text[0] = '\0';
    ck_assert_int_lt (claims_busy (dir, 1, 0, busy, &e), 0);
    ck_assert_msg (strstr (e.text, "a symlink or not a directory") != NULL,
                   "%s",
                   e.text);
    ck_assert (!tmptree_exists ("elsewhere/job_1.step_0"));

    tmptree_path (dir, sizeof (dir), "open");
    tmptree_mkdirs ("open", true);
    ck_assert_int_eq (chmod (dir, 0777), 0);
    ck_assert_int_lt (claims_add (dir, 1, 0, getpid (), set, &e), 0);
    ck_assert_msg (strstr (e.text, "writable by group or others (mode 0777)")
                       != NULL,
                   "%s",
                   e.text);
    ck_assert_int_lt (claims_busy (dir, 1, 0, busy, &e), 0);
    ck_assert_int_lt (claims_remove (dir, 1, 0, &e), 0);
    ck_assert (!tmptree_exists ("open/job_1.step_0"));

    tmptree_put ("file", "x\n");
    tmptree_path (dir, sizeof (dir), "file");
    ck_assert_int_lt (claims_add (dir, 1, 0, getpid (), set, &e), 0);
    hwloc_bitmap_free (set);
    hwloc_bitmap_free (busy);
}
END_TEST

/* As root: a directory owned by another user is refused. */
START_TEST (test_claims_foreign_owner)
{
    pin_error_t e = {""};
    char dir[512];
    hwloc_bitmap_t set = set_of ("0");

    tmptree_path (dir, sizeof (dir), "foreign");
    tmptree_mkdirs ("foreign", true);
    ck_assert_int_eq (chmod (dir, 0700), 0);
    ck_assert_int_eq (chown (dir, 65534, 65534), 0);
    ck_assert_int_lt (claims_add (dir, 1, 0, getpid (), set, &e), 0);
    ck_assert_msg (strstr (e.text, "owned by uid 65534, not uid 0") != NULL,
                   "%s",
                   e.text);
    ck_assert (!tmptree_exists ("foreign/job_1.step_0"));
    hwloc_bitmap_free (set);
}
END_TEST

/* ---- lock
 * ------------------------------------------------------------------------- */

START_TEST (test_lock)
{
    pin_error_t e = {""};
    char path[512], target[512];
    struct stat st;
    int fd1, fd2;

    tmptree_path (path, sizeof (path), "lock");
    fd1 = pin_lock_acquire (path, 0, &e);
    ck_assert_msg (fd1 >= 0, "%s", e.text);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_uint_eq (st.st_mode & 07777, 0600);
    ck_assert (fcntl (fd1, F_GETFD) & FD_CLOEXEC);

    /* held: a second open file description times out */
    fd2 = pin_lock_acquire (path, 50, &e);
    ck_assert_int_eq (fd2, -1);
    ck_assert_int_eq (errno, ETIMEDOUT);
    ck_assert_msg (strstr (e.text,
                           "still locked by another process after "
                           "50 ms")
                       != NULL,
                   "%s",
                   e.text);
    ck_assert_int_eq (pin_lock_acquire (path, 0, &e), -1);
    ck_assert_int_eq (errno, ETIMEDOUT);

    pin_lock_release (fd1);
    fd2 = pin_lock_acquire (path, 50, &e);
    ck_assert_msg (fd2 >= 0, "%s", e.text);
    pin_lock_release (fd2);
    pin_lock_release (-1);

    /* a symlink planted at the lock path is refused */
    tmptree_path (target, sizeof (target), "target");
    tmptree_put ("target", "");
    tmptree_path (path, sizeof (path), "lock.link");
    ck_assert_int_eq (symlink (target, path), 0);
    ck_assert_int_eq (pin_lock_acquire (path, 0, &e), -1);
    ck_assert_msg (strstr (e.text, "a symlink") != NULL, "%s", e.text);
    ck_assert_int_eq (pin_lock_acquire ("relative.lock", 0, &e), -1);
    ck_assert_int_eq (errno, EINVAL);
}
END_TEST

/* Another process holding the lock blocks us until it lets go. */
START_TEST (test_lock_other_process)
{
    pin_error_t e = {""};
    char path[512];
    int pipefd[2], status, fd;
    char c;
    pid_t pid;

    tmptree_path (path, sizeof (path), "lock");
    ck_assert_int_eq (pipe (pipefd), 0);
    pid = fork ();
    ck_assert_int_ge (pid, 0);
    if (pid == 0) {
        int lfd = pin_lock_acquire (path, 1000, NULL);
        if (write (pipefd[1], lfd >= 0 ? "y" : "n", 1) != 1)
            _exit (2);
        pause (); /* hold until killed */
        _exit (0);
    }
    ck_assert_int_eq (read (pipefd[0], &c, 1), 1);
    ck_assert_int_eq (c, 'y');
    ck_assert_int_eq (pin_lock_acquire (path, 30, &e), -1);
    ck_assert_int_eq (errno, ETIMEDOUT);
    kill (pid, SIGKILL);
    ck_assert_int_eq (waitpid (pid, &status, 0), pid);
    fd = pin_lock_acquire (path, 1000, &e);
    ck_assert_msg (fd >= 0, "%s", e.text);
    pin_lock_release (fd);
    close (pipefd[0]);
    close (pipefd[1]);
}
END_TEST

/* ---- stale claims: recycled pids and zombies -------------------------------
 */

/* A claim is alive only while its pid runs the process that wrote it. */
START_TEST (test_claims_start_time)
{
    pin_error_t e = {""};
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    unsigned long long start = own_start ();
    char dir[512], buf[128];
    int status;
    pid_t zombie;

    tmptree_path (dir, sizeof (dir), "claims");
    tmptree_mkdirs ("claims", true);
    /* our pid, our start time: alive */
    snprintf (buf, sizeof (buf), "%ld %llu 0\n", (long)getpid (), start);
    tmptree_put ("claims/job_1.step_0", buf);
    /* our pid with another start time: a recycled pid, stale */
    snprintf (buf, sizeof (buf), "%ld %llu 1\n", (long)getpid (), start + 1);
    tmptree_put ("claims/job_1.step_1", buf);
    /* an unreaped child: a zombie, stale even with its own start time */
    zombie = fork ();
    ck_assert_int_ge (zombie, 0);
    if (zombie == 0)
        _exit (0);
    for (int i = 0; i < 500; i++) { /* until it is a zombie */
        char state = '?';
        uint64_t t;
        if (claims_proc_start (zombie, &state, &t) == 0 && state == 'Z') {
            snprintf (buf,
                      sizeof (buf),
                      "%ld %llu 2\n",
                      (long)zombie,
                      (unsigned long long)t);
            break;
        }
        ck_assert (i < 499);
        usleep (10000);
    }
    tmptree_put ("claims/job_1.step_2", buf);
    /* the format without start time: alive while the pid is no zombie */
    snprintf (buf, sizeof (buf), "%ld 3\n", (long)getpid ());
    tmptree_put ("claims/job_1.step_3", buf);
    snprintf (buf, sizeof (buf), "%ld 4\n", (long)zombie);
    tmptree_put ("claims/job_1.step_4", buf);

    ck_assert_msg (claims_busy (dir, 2, 0, busy, &e) == 0, "%s", e.text);
    assert_set (busy, "0,3");
    ck_assert (tmptree_exists ("claims/job_1.step_0"));
    ck_assert (!tmptree_exists ("claims/job_1.step_1"));
    ck_assert (!tmptree_exists ("claims/job_1.step_2"));
    ck_assert (tmptree_exists ("claims/job_1.step_3"));
    ck_assert (!tmptree_exists ("claims/job_1.step_4"));
    ck_assert_int_eq (waitpid (zombie, &status, 0), zombie);
    hwloc_bitmap_free (busy);
}
END_TEST

static const struct {
    const char *text;
    int rc;
    char state;
    unsigned long long start;
} stat_cases[] = {
    {"1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 42 1 2\n",
     0,
     'S',
     42},
    /* a command name with spaces and ')': counted from the last ')' */
    {"7 (a) b) c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0\n",
     0,
     'R',
     12345},
    {"7 () Z 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0", 0, 'Z', 99},
    {"7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 18446744073709551615 0",
     0,
     'S',
     18446744073709551615ull},
    {"7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0", -1, 0, 0}, /* short */
    {"7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0", -1, 0, 0},
    {"7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12x 0", -1, 0, 0},
    {"7 (x S 1 7", -1, 0, 0}, /* no ')' */
    {"7 (x)S 1", -1, 0, 0},
    {"", -1, 0, 0},
    {NULL, -1, 0, 0},
};

START_TEST (test_parse_proc_stat)
{
    char state = 0;
    uint64_t start = 0;
    int rc = claims_parse_proc_stat (stat_cases[_i].text, &state, &start);

    ck_assert_int_eq (rc, stat_cases[_i].rc);
    if (rc == 0) {
        ck_assert_int_eq (state, stat_cases[_i].state);
        ck_assert_uint_eq (start, stat_cases[_i].start);
    }
}
END_TEST

static const struct {
    const char *text;
    int rc;
    long pid;
    unsigned long long start;
    const char *cpus;
} content_cases[] = {
    {"4242 987 0-3,8\n", 1, 4242, 987, "0-3,8"},
    {"4242 0-3,8\n", 1, 4242, 0, "0-3,8"}, /* version 1 */
    {"1 18446744073709551615 5\n", 1, 1, 18446744073709551615ull, "5"},
    {"4242 987 0-3,8", 0, 0, 0, NULL}, /* no newline */
    {"4242 987 0-3\n\n", 0, 0, 0, NULL},
    {"4242 0 1\n", 0, 0, 0, NULL}, /* start 0 */
    {"0 987 1\n", 0, 0, 0, NULL},
    {"2147483648 987 1\n", 0, 0, 0, NULL}, /* pid too large */
    {"4242 18446744073709551616 1\n", 0, 0, 0, NULL},
    {"4242  1\n", 0, 0, 0, NULL},
    {"4242 987 \n", 0, 0, 0, NULL},
    {"4242 987 1 2\n", 0, 0, 0, NULL},
    {"-1 987 1\n", 0, 0, 0, NULL},
    {"garbage\n", 0, 0, 0, NULL},
    {"", 0, 0, 0, NULL},
};

START_TEST (test_parse_content)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    char buf[128];
    uint64_t start = 0;
    pid_t pid = 0;

    snprintf (buf, sizeof (buf), "%s", content_cases[_i].text);
    ck_assert_int_eq (claims_parse_content (buf, &pid, &start, set),
                      content_cases[_i].rc);
    if (content_cases[_i].rc == 1) {
        ck_assert_int_eq (pid, content_cases[_i].pid);
        ck_assert_uint_eq (start, content_cases[_i].start);
        assert_set (set, content_cases[_i].cpus);
    }
    hwloc_bitmap_free (set);
}
END_TEST

static const struct {
    const char *name;
    bool ok;
    uint32_t job, step;
} name_cases[] = {
    {"job_1.step_0", true, 1, 0},
    {"job_4294967295.step_4294967294", true, 4294967295u, 4294967294u},
    {"job_4294967296.step_0", false, 0, 0},
    {"job_1.step_0.bak", false, 0, 0},
    {".job_1.step_0.77.tmp", false, 0, 0},
    {"job_.step_0", false, 0, 0},
    {"job_1.step_", false, 0, 0},
    {"job_07.step_0", false, 0, 0}, /* claims_add writes job_7 */
    {"job_7.step_00", false, 0, 0},
    {"job_0.step_0", true, 0, 0},
    {"README", false, 0, 0},
    {"", false, 0, 0},
};

START_TEST (test_parse_name)
{
    uint32_t job = 7, step = 7;
    bool ok = claims_parse_name (name_cases[_i].name, &job, &step);

    ck_assert_int_eq (ok, name_cases[_i].ok);
    if (ok) {
        ck_assert_uint_eq (job, name_cases[_i].job);
        ck_assert_uint_eq (step, name_cases[_i].step);
    }
}
END_TEST

static void note_step (uint32_t step, void *arg)
{
    uint32_t *sum = arg;
    *sum += step + 1;
}

/* The job's claims go, whatever their pid; other jobs' stay. */
START_TEST (test_remove_job)
{
    pin_error_t e = {""};
    hwloc_bitmap_t set = set_of ("0");
    char dir[512];
    uint32_t sum = 0;

    tmptree_path (dir, sizeof (dir), "claims");
    ck_assert_int_eq (claims_remove_job (dir, 5, note_step, &sum, &e), 0);
    ck_assert_int_eq (claims_add (dir, 5, 0, getpid (), set, &e), 0);
    ck_assert_int_eq (claims_add (dir, 5, 2, getpid (), set, &e), 0);
    ck_assert_int_eq (claims_add (dir, 55, 0, getpid (), set, &e), 0);
    tmptree_put ("claims/job_5.step_1.bak", "x\n");
    ck_assert_msg (claims_remove_job (dir, 5, note_step, &sum, &e) == 0,
                   "%s",
                   e.text);
    ck_assert_uint_eq (sum, 1 + 3);
    ck_assert (!tmptree_exists ("claims/job_5.step_0"));
    ck_assert (!tmptree_exists ("claims/job_5.step_2"));
    ck_assert (tmptree_exists ("claims/job_55.step_0"));
    ck_assert (tmptree_exists ("claims/job_5.step_1.bak"));
    hwloc_bitmap_free (set);
}
END_TEST

/* ---- no fd leaks
 * ------------------------------------------------------------ */

static int count_fds (void)
{
    DIR *d = opendir ("/proc/self/fd");
    struct dirent *de;
    int n = 0;

    ck_assert_ptr_nonnull (d);
    while ((de = readdir (d)))
        n++;
    closedir (d);
    return n;
}

START_TEST (test_no_fd_leak)
{
    pin_error_t e;
    char dir[512], lock[512];
    hwloc_bitmap_t cpus = set_of ("2-3");
    hwloc_bitmap_t busy = hwloc_bitmap_alloc ();
    int before, round;

    tmptree_path (dir, sizeof (dir), "claims");
    tmptree_path (lock, sizeof (lock), "lock");
    before = count_fds ();
    for (round = 0; round < 3; round++) {
        char state;
        uint64_t start;
        int fd;

        (void)claims_add (dir, 1, 0, getpid (), cpus, &e);
        (void)claims_add (dir, 1, 1, dead_pid (), cpus, &e);
        (void)claims_busy (dir, 2, 0, busy, &e);
        (void)claims_remove (dir, 1, 0, &e);
        (void)claims_remove_job (dir, 1, NULL, NULL, &e);
        (void)claims_proc_start (getpid (), &state, &start);
        (void)claims_proc_start (dead_pid (), &state, &start);
        fd = pin_lock_acquire (lock, 0, &e);
        (void)pin_lock_acquire (lock, 0, &e); /* times out */
        pin_lock_release (fd);
    }
    ck_assert_int_eq (count_fds (), before);
    hwloc_bitmap_free (cpus);
    hwloc_bitmap_free (busy);
}
END_TEST

#define NELEM(a) (sizeof (a) / sizeof ((a)[0]))

int main (void)
{
    Suite *s = suite_create ("claims");
    TCase *tc = tcase_create ("claims");
    const char *skips[2];
    int nskips = 0;

    tcase_add_checked_fixture (tc, setup, teardown);
    tcase_add_test (tc, test_claims);
    tcase_add_loop_test (tc, test_claims_load, 0, NELEM (load_cases));
    tcase_add_test (tc, test_claims_unsafe_dir);
    if (geteuid () == 0)
        tcase_add_test (tc, test_claims_foreign_owner);
    else
        skips[nskips++] =
            "test_claims_foreign_owner: not root, cannot "
            "make a directory owned by another user";
    tcase_add_test (tc, test_claims_start_time);
    tcase_add_loop_test (tc, test_parse_proc_stat, 0, NELEM (stat_cases));
    tcase_add_loop_test (tc, test_parse_content, 0, NELEM (content_cases));
    tcase_add_loop_test (tc, test_parse_name, 0, NELEM (name_cases));
    tcase_add_test (tc, test_remove_job);
    tcase_add_test (tc, test_lock);
    tcase_add_test (tc, test_lock_other_process);
    tcase_add_test (tc, test_no_fd_leak);
    suite_add_tcase (s, tc);
    return tap_run (s, skips, nskips);
}
