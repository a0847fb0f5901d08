/* test/slurm_compat.c - src/common/slurm_compat.h against the installed
 * Slurm (22.05, 24.11, 26.05: configure chose the forms) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtest/tap.h"
#include "slurm_compat.h"

/* The ranged form, short and longer than the first buffer (256 bytes). */
START_TEST (test_hostlist_ranged)
{
    pin_hostlist_t *hl = slurm_hostlist_create ("n3,n1,n2,x");
    char *s, list[4096] = "";

    ck_assert_ptr_nonnull (hl);
    slurm_hostlist_uniq (hl);
    ck_assert_ptr_nonnull (s = pin_hostlist_ranged (hl));
    ck_assert_str_eq (s, "n[1-3],x");
    free (s);
    slurm_hostlist_destroy (hl);
    /* 200 names that do not range: about 1600 bytes */
    for (int i = 0; i < 200; i++) {
        char one[32];
        snprintf (one,
                  sizeof (one),
                  "%shost%c%d",
                  i ? "," : "",
                  'a' + i % 26,
                  i);
        strcat (list, one);
    }
    ck_assert_ptr_nonnull (hl = slurm_hostlist_create (list));
    ck_assert_ptr_nonnull (s = pin_hostlist_ranged (hl));
    ck_assert_uint_gt (strlen (s), 256);
    ck_assert_ptr_nonnull (strstr (s, "hostz25"));
    ck_assert_ptr_nonnull (strstr (s, "hostr199"));
    free (s);
    slurm_hostlist_destroy (hl);
}
END_TEST

/* list_t/list_itr_t are the list types on every release. */
START_TEST (test_list_types)
{
    list_t *l = slurm_list_create (NULL);
    list_itr_t *it;
    int a = 1, b = 2, sum = 0;
    int *x;

    ck_assert_ptr_nonnull (l);
    slurm_list_append (l, &a);
    slurm_list_append (l, &b);
    ck_assert_int_eq (slurm_list_count (l), 2);
    it = slurm_list_iterator_create (l);
    while ((x = slurm_list_next (it)))
        sum += *x;
    slurm_list_iterator_destroy (it);
    slurm_list_destroy (l);
    ck_assert_int_eq (sum, 3);
}
END_TEST

START_TEST (test_job_rec_init)
{
    slurmdb_job_rec_t rec;

    memset (&rec, 0xee, sizeof (rec));
    pin_job_rec_init (&rec);
    ck_assert_uint_eq (rec.array_task_id, NO_VAL);
    ck_assert_uint_eq (rec.derived_ec, NO_VAL);
    ck_assert_uint_eq (rec.resvid, NO_VAL);
    ck_assert_ptr_null (rec.admin_comment);
    ck_assert_ptr_null (rec.steps);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("slurm_compat");
    TCase *tc = tcase_create ("slurm_compat");

    tcase_add_test (tc, test_hostlist_ranged);
    tcase_add_test (tc, test_list_types);
    tcase_add_test (tc, test_job_rec_init);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
