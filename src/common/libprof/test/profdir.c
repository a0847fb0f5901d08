/* test/profdir.c - finding a job's profiles (profdir.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <string.h>

#include "libprof/profdir.h"
#include "libtest/tap.h"
#include "libtest/tmptree.h"

static const struct {
    const char *spec;
    int rc;
    uint32_t job;
    const char *step;
} specs[] = {
    {"4242", 0, 4242, ""},
    {"4242.0", 0, 4242, "0"},
    {"4242.17", 0, 4242, "17"},
    {"4242.batch", 0, 4242, "batch"},
    {"4242.interactive", 0, 4242, "interactive"},
    {"4242.extern", 0, 4242, "extern"},
    {"", -1, 0, NULL},
    {"0", -1, 0, NULL},
    {"-1", -1, 0, NULL},
    {"42x", -1, 0, NULL},
    {"42.", -1, 0, NULL},
    {"42.0.1", -1, 0, NULL},
    {"42.Batch", -1, 0, NULL},
    {"42.../etc", -1, 0, NULL},
    {"99999999999", -1, 0, NULL},
    {"4242.12345678901234567", -1, 0, NULL},
};

START_TEST (test_spec)
{
    uint32_t job = 0;
    char step[16] = "?";
    pin_error_t e = {""};
    int rc =
        profdir_spec_parse (specs[_i].spec, &job, step, sizeof (step), &e);

    ck_assert_int_eq (rc, specs[_i].rc);
    if (rc == 0) {
        ck_assert_uint_eq (job, specs[_i].job);
        ck_assert_str_eq (step, specs[_i].step);
    } else {
        ck_assert_int_eq (errno, EINVAL);
        ck_assert_msg (strstr (e.text,
                               "not a job or step; give JOB or "
                               "JOB.STEP"),
                       "%s",
                       e.text);
    }
}
END_TEST

START_TEST (test_find)
{
    struct profdir_entry *v;
    size_t n;
    pin_error_t e = {""};
    char dir[4096];

    tmptree_setup ("test_profdir");
    tmptree_put ("p/42.10.n1.jsonl", "x");
    tmptree_put ("p/42.2.n2.jsonl", "x");
    tmptree_put ("p/42.2.n1.example.org.jsonl", "x");
    tmptree_put ("p/42.batch.n1.jsonl", "x");
    tmptree_put ("p/420.0.n1.jsonl", "x"); /* another job */
    tmptree_put ("p/42.0.n1.json", "x");   /* not a profile */
    tmptree_put ("p/42.x.n1.jsonl", "x");  /* not a step */
    tmptree_put ("p/42.3..jsonl", "x");    /* no node */
    tmptree_path (dir, sizeof (dir), "p");

    ck_assert_int_eq (profdir_find (dir, "42", &v, &n, &e), 0);
    ck_assert_uint_eq (n, 4);
    ck_assert_str_eq (v[0].step, "2");
    ck_assert_str_eq (v[0].node, "n1.example.org");
    ck_assert_str_eq (v[1].step, "2");
    ck_assert_str_eq (v[1].node, "n2");
    ck_assert_str_eq (v[2].step, "10");
    ck_assert_str_eq (v[3].step, "batch");
    ck_assert (strstr (v[3].path, "/p/42.batch.n1.jsonl"));
    profdir_free (v, n);

    ck_assert_int_eq (profdir_find (dir, "42.2", &v, &n, &e), 0);
    ck_assert_uint_eq (n, 2);
    profdir_free (v, n);
    ck_assert_int_eq (profdir_find (dir, "43", &v, &n, &e), 0);
    ck_assert_uint_eq (n, 0);
    profdir_free (v, n);
    ck_assert_int_eq (profdir_find (dir, "42.x", &v, &n, &e), -1);
    tmptree_path (dir, sizeof (dir), "none");
    ck_assert_int_eq (profdir_find (dir, "42", &v, &n, &e), -1);
    ck_assert_msg (strstr (e.text, "No such file"), "%s", e.text);
    tmptree_teardown ();
}
END_TEST

/* The room a profile leaves for the journal: only on the journal's file
 * system (a journal directory not made yet counts as its parent's). */
START_TEST (test_journal_reserve)
{
    char prof[4096], jour[4096];

    tmptree_setup ("test_profdir");
    tmptree_mkdirs ("profile", true);
    tmptree_path (prof, sizeof (prof), "profile");
    tmptree_path (jour, sizeof (jour), "not/made/yet/journal");
    ck_assert_uint_eq (profdir_journal_reserve (prof, jour, 1 << 20), 1 << 20);
    ck_assert_uint_eq (profdir_journal_reserve (prof, jour, 0),
                       PROFDIR_JOURNAL_RESERVE);
    /* /proc is another file system */
    ck_assert_uint_eq (profdir_journal_reserve ("/proc/self", jour, 1 << 20),
                       0);
    tmptree_teardown ();
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("profdir");
    TCase *tc = tcase_create ("profdir");

    tcase_add_loop_test (tc, test_spec, 0, sizeof (specs) / sizeof (specs[0]));
    tcase_add_test (tc, test_find);
    tcase_add_test (tc, test_journal_reserve);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
