/* test/test_ident.c - the node name of a slurmstepd's socket path */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "libstep/ident.h"
#include "libtest/tap.h"

static const struct {
    const char *path;
    unsigned job, step;
    const char *node; /* NULL: not found */
} cases[] = {
    {"/var/spool/slurmd/node1_12.0", 12, 0, "node1"},
    {"/var/spool/slurmd/node1_12.0.1", 12, 0, "node1"},
    {"/spool/n_a_m_e_12.4294967294", 12, 4294967294u, "n_a_m_e"},
    /* the last match wins: a node name may hold "_12.0" itself */
    {"/spool/x_12.0_12.0", 12, 0, "x_12.0"},
    {"/spool/node1_12.0", 13, 0, NULL},
    {"/spool/node1_12.01", 12, 0, NULL},
    {"/spool/node1_12.0.x", 12, 0, NULL},
    {"/spool/node1_12.0.", 12, 0, NULL},
    {"/spool/_12.0", 12, 0, NULL},
    {"node2_7.1", 7, 1, "node2"},
};

START_TEST (test_node_of_socket)
{
    char buf[64] = "unchanged";
    bool ok = step_ident_node_of_socket (cases[_i].path,
                                         cases[_i].job,
                                         cases[_i].step,
                                         buf,
                                         sizeof (buf));

    if (!cases[_i].node) {
        ck_assert_msg (!ok, "%s: found '%s'", cases[_i].path, buf);
        return;
    }
    ck_assert_msg (ok, "%s: not found", cases[_i].path);
    ck_assert_str_eq (buf, cases[_i].node);
}
END_TEST

/* Outside slurmstepd (job 0): SLURMD_NODENAME, then the short host. */
START_TEST (test_node_fallbacks)
{
    char buf[64];

    setenv ("SLURMD_NODENAME", "fromslurmd", 1);
    step_ident_node (0, 0, buf, sizeof (buf));
    ck_assert_str_eq (buf, "fromslurmd");
    unsetenv ("SLURMD_NODENAME");
    step_ident_node (0, 0, buf, sizeof (buf));
    ck_assert (buf[0] != '\0');
    ck_assert_ptr_null (strchr (buf, '.'));
    /* no such socket of ours: the same fallbacks */
    step_ident_node (999999, 0, buf, sizeof (buf));
    ck_assert (buf[0] != '\0');
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("ident");
    TCase *tc = tcase_create ("ident");

    tcase_add_loop_test (tc,
                         test_node_of_socket,
                         0,
                         (int)(sizeof (cases) / sizeof (cases[0])));
    tcase_add_test (tc, test_node_fallbacks);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
