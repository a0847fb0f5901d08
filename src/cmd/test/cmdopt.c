/* test/cmdopt.c - the option layer of slurm-pin's subcommands */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdopt.h"
#include "libtest/tap.h"

enum { OPT_JSON = CMDOPT_LONG, OPT_JOURNAL };

static const struct cmdopt own[] = {
    {"topology",
     't',
     CMDOPT_REQUIRED,
     "SRC",
     "where the topology is\n"
     "(a second line)",
     0},
    {"jobs", 'j', CMDOPT_REQUIRED, "LIST", "jobs", 0},
    {"json", OPT_JSON, CMDOPT_NONE, NULL, "one JSON object", 0},
    CMDOPT_HEADING ("More options:"),
    {"journal", OPT_JOURNAL, CMDOPT_REQUIRED, "DIR", "the journal", 0},
    {"level", 'l', CMDOPT_OPTIONAL, "N", "a level", 0},
    {"strict", 'S', CMDOPT_NONE, NULL, "strict", 0},
    {"a-very-long-option-name",
     'L',
     CMDOPT_REQUIRED,
     "VALUE",
     "its text on the next line",
     0},
    CMDOPT_END,
};
static const struct cmdopt alias[] = {
    {"user", 'u', CMDOPT_REQUIRED, "LIST", "users", 0},
    {"uid", 'u', CMDOPT_REQUIRED, "LIST", NULL, 0}, /* hidden */
    CMDOPT_END,
};
static const struct cmdopt rec[] = {
    {"record", 'r', CMDOPT_REQUIRED, "FILE", "record", CMDOPT_CMD},
    {"json", 'j', CMDOPT_NONE, NULL, "json", 0},
    CMDOPT_END,
};

static const struct cmdopt_spec spec = {
    .name = "demo",
    .usage = "Usage: slurm-pin demo [OPTIONS] [ARG...]\n",
    .footer = "See slurm-pin(1).\n",
    .usage_status = 2,
    .tables = {own, alias, NULL},
};
static const struct cmdopt_spec recspec = {
    .name = "rec",
    .usage = "Usage: slurm-pin rec --record FILE CMD\n",
    .usage_status = 1,
    .tables = {rec, NULL},
};

/* Parse a NULL-terminated argv; the keys seen as "k=ARG " in keys[],
 * operands as "OP " in ops[], stdout and stderr in out[], err[]. */
struct run {
    int rc, status;
    char keys[512], ops[512], out[4096], err[1024];
};

static void run (const struct cmdopt_spec *s, struct run *r, char **argv)
{
    struct cmdopt_parser p;
    int argc = 0, key;
    const char *arg;
    char *ob = NULL, *eb = NULL;
    size_t on = 0, en = 0;

    while (argv[argc])
        argc++;
    memset (r, 0, sizeof (*r));
    ck_assert_int_eq (cmdopt_init (&p, s, argc, argv), 0);
    p.out = open_memstream (&ob, &on);
    p.err = open_memstream (&eb, &en);
    ck_assert (p.out && p.err);
    while ((key = cmdopt_next (&p, &arg)) > 0) {
        char k[64];
        if (key >= CMDOPT_LONG)
            snprintf (k, sizeof (k), "%d", key);
        else
            snprintf (k, sizeof (k), "%c", key);
        snprintf (r->keys + strlen (r->keys),
                  sizeof (r->keys) - strlen (r->keys),
                  "%s=%s ",
                  k,
                  arg ? arg : "(null)");
    }
    r->rc = key;
    r->status = p.status;
    for (int i = 0; i < p.noperands; i++)
        snprintf (r->ops + strlen (r->ops),
                  sizeof (r->ops) - strlen (r->ops),
                  "%s ",
                  p.operands[i]);
    ck_assert_ptr_null (p.operands[p.noperands]);
    fclose (p.out);
    fclose (p.err);
    snprintf (r->out, sizeof (r->out), "%s", ob);
    snprintf (r->err, sizeof (r->err), "%s", eb);
    free (ob);
    free (eb);
    cmdopt_fini (&p);
}

#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})

START_TEST (test_getopt_string)
{
    struct cmdopt_parser p;
    char *argv[] = {"demo", NULL};

    ck_assert_int_eq (cmdopt_init (&p, &spec, 1, argv), 0);
    /* '-' in order, ':' missing values told apart, then the rows */
    ck_assert_str_eq (p.shortopts, "-:t:j:l::SL:u:h");
    ck_assert_str_eq (p.longopts[0].name, "topology");
    ck_assert_int_eq (p.longopts[0].has_arg, required_argument);
    ck_assert_int_eq (p.longopts[2].val, OPT_JSON);
    ck_assert_int_eq (p.longopts[4].has_arg, optional_argument);
    ck_assert_str_eq (p.longopts[8].name, "uid");
    ck_assert_str_eq (p.longopts[9].name, "help");
    ck_assert_ptr_null (p.longopts[10].name);
    cmdopt_fini (&p);
    cmdopt_fini (&p); /* twice is fine */
}
END_TEST

START_TEST (test_bad_table)
{
    static const struct cmdopt twice[] = {
        {"a", 'a', CMDOPT_NONE, NULL, "a", 0},
        {"b", 'a', CMDOPT_NONE, NULL, "b", 0},
        CMDOPT_END,
    };
    static const struct cmdopt help[] = {
        {"hat", 'h', CMDOPT_NONE, NULL, "h is --help's", 0},
        CMDOPT_END,
    };
    struct cmdopt_spec s = {.name = "x", .usage = "", .tables = {twice}};
    struct cmdopt_parser p;
    char *argv[] = {"x", NULL};

    errno = 0;
    ck_assert_int_eq (cmdopt_init (&p, &s, 1, argv), -1);
    ck_assert_int_eq (errno, EINVAL);
    s.tables[0] = help;
    ck_assert_int_eq (cmdopt_init (&p, &s, 1, argv), -1);
    ck_assert_int_eq (errno, EINVAL);
}
END_TEST

START_TEST (test_permutation)
{
    struct run r;

    run (&spec,
         &r,
         ARGV ("demo",
               "x",
               "-j",
               "1",
               "a",
               "--topology=T",
               "b",
               "--json",
               "-S"));
    ck_assert_int_eq (r.rc, 0);
    ck_assert_str_eq (r.keys, "j=1 t=T 256=(null) S=(null) ");
    ck_assert_str_eq (r.ops, "x a b ");
    ck_assert_str_eq (r.err, "");
    /* a cluster, a value in the same element, an abbreviation */
    run (&spec, &r, ARGV ("demo", "-Sj5", "--jour", "D", "-tT"));
    ck_assert_str_eq (r.keys, "S=(null) j=5 257=D t=T ");
    /* POSIXLY_CORRECT: the first operand ends the options */
    setenv ("POSIXLY_CORRECT", "1", 1);
    run (&spec, &r, ARGV ("demo", "-j", "1", "x", "-S", "y"));
    unsetenv ("POSIXLY_CORRECT");
    ck_assert_str_eq (r.keys, "j=1 ");
    ck_assert_str_eq (r.ops, "x -S y ");
    /* an alias is its row's key */
    run (&spec, &r, ARGV ("demo", "--uid=0", "--user", "root"));
    ck_assert_str_eq (r.keys, "u=0 u=root ");
}
END_TEST

START_TEST (test_double_dash)
{
    struct run r;

    run (&spec, &r, ARGV ("demo", "a", "-S", "--", "-j", "--json", "--"));
    ck_assert_int_eq (r.rc, 0);
    ck_assert_str_eq (r.keys, "S=(null) ");
    ck_assert_str_eq (r.ops, "a -j --json -- ");
    run (&spec, &r, ARGV ("demo", "--"));
    ck_assert_str_eq (r.ops, "");
    run (&spec, &r, ARGV ("demo", "-", "-S")); /* "-" is an operand */
    ck_assert_str_eq (r.ops, "- ");
    ck_assert_str_eq (r.keys, "S=(null) ");
}
END_TEST

START_TEST (test_optional)
{
    struct run r;

    run (&spec, &r, ARGV ("demo", "--level", "-l", "--level=3", "-l4", "5"));
    ck_assert_int_eq (r.rc, 0);
    ck_assert_str_eq (r.keys, "l=(null) l=(null) l=3 l=4 ");
    ck_assert_str_eq (r.ops, "5 ");
    run (&spec, &r, ARGV ("demo", "--level="));
    ck_assert_str_eq (r.keys, "l= ");
}
END_TEST

START_TEST (test_command)
{
    struct run r;

    /* the first operand after --record starts the command */
    run (&recspec, &r, ARGV ("rec", "--record", "f", "cmd", "--json", "-r"));
    ck_assert_int_eq (r.rc, 0);
    ck_assert_str_eq (r.keys, "r=f ");
    ck_assert_str_eq (r.ops, "cmd --json -r ");
    run (&recspec, &r, ARGV ("rec", "-j", "-r", "f", "-j", "--", "c", "-j"));
    ck_assert_str_eq (r.keys, "j=(null) r=f j=(null) ");
    ck_assert_str_eq (r.ops, "c -j ");
    /* no --record: options anywhere */
    run (&recspec, &r, ARGV ("rec", "file", "--json"));
    ck_assert_str_eq (r.keys, "j=(null) ");
    ck_assert_str_eq (r.ops, "file ");
    /* --record after an operand would make it a command */
    run (&recspec, &r, ARGV ("rec", "file", "--record", "x"));
    ck_assert_int_eq (r.rc, -1);
    ck_assert_int_eq (r.status, 1);
    ck_assert_str_eq (r.err,
                      "slurm-pin rec: --record: give it before the "
                      "command (see 'slurm-pin rec --help')\n");
}
END_TEST

static const struct {
    char *arg, *arg2;
    const char *err;
} errors[] = {
    {"--bogus", NULL, "--bogus: unknown option"},
    {"--bogus=1", NULL, "--bogus: unknown option"},
    {"-x", NULL, "-x: unknown option"},
    {"-Sx", NULL, "-x: unknown option"},
    {"-xS", NULL, "-x: unknown option"},
    {"--topology", NULL, "--topology: missing value"},
    {"--top", NULL, "--top: missing value"},
    {"-t", NULL, "-t: missing value"},
    {"-St", NULL, "-t: missing value"},
    {"--json=1", NULL, "--json=1: this option takes no value"},
    {"--strict=", NULL, "--strict=: this option takes no value"},
    {"--j",
     NULL,
     "--j: ambiguous option; could be --jobs, --json, "
     "--journal"},
    {"--jo=1",
     NULL,
     "--jo: ambiguous option; could be --jobs, "
     "--journal"},
    {"--bad\033[31m", NULL, "--bad?[31m: unknown option"},
    {"op", "--nope", "--nope: unknown option"},
};

START_TEST (test_errors)
{
    struct run r;
    char want[1024];

    run (&spec, &r, ARGV ("demo", errors[_i].arg, errors[_i].arg2));
    ck_assert_int_eq (r.rc, -1);
    ck_assert_int_eq (r.status, 2);
    ck_assert_str_eq (r.out, "");
    snprintf (want,
              sizeof (want),
              "slurm-pin demo: %s (see 'slurm-pin demo "
              "--help')\n",
              errors[_i].err);
    ck_assert_str_eq (r.err, want);
}
END_TEST

START_TEST (test_operands)
{
    struct cmdopt_parser p;
    char *argv[] = {"demo", "a", "b", NULL};
    char *eb = NULL;
    size_t en = 0;
    const char *arg;

    ck_assert_int_eq (cmdopt_init (&p, &spec, 3, argv), 0);
    p.err = open_memstream (&eb, &en);
    ck_assert_int_eq (cmdopt_next (&p, &arg), 0);
    ck_assert_int_eq (cmdopt_next (&p, &arg), 0); /* stays done */
    ck_assert_int_eq (cmdopt_no_operands (&p), -1);
    ck_assert_int_eq (cmdopt_one_operand (&p, "JOBID"), -1);
    ck_assert_int_eq (p.status, 2);
    fclose (p.err);
    ck_assert_str_eq (eb,
                      "slurm-pin demo: a: unexpected argument (see "
                      "'slurm-pin demo --help')\n"
                      "slurm-pin demo: expected one JOBID (see 'slurm-pin "
                      "demo --help')\n");
    free (eb);
    cmdopt_fini (&p);
}
END_TEST

static const char demo_help[] =
    "Usage: slurm-pin demo [OPTIONS] [ARG...]\n"
    "\n"
    "  -t, --topology=SRC       where the topology is\n"
    "                           (a second line)\n"
    "  -j, --jobs=LIST          jobs\n"
    "      --json               one JSON object\n"
    "More options:\n"
    "      --journal=DIR        the journal\n"
    "  -l, --level[=N]          a level\n"
    "  -S, --strict             strict\n"
    "  -L, --a-very-long-option-name=VALUE\n"
    "                           its text on the next line\n"
    "  -u, --user=LIST          users\n"
    "  -h, --help               show this help and exit\n"
    "\n"
    "See slurm-pin(1).\n";

START_TEST (test_help)
{
    struct run r;

    run (&spec, &r, ARGV ("demo", "a", "--help", "--bogus"));
    ck_assert_int_eq (r.rc, -1);
    ck_assert_int_eq (r.status, 0);
    ck_assert_str_eq (r.out, demo_help);
    ck_assert_str_eq (r.err, "");
    run (&spec, &r, ARGV ("demo", "-Sh"));
    ck_assert_int_eq (r.status, 0);
    ck_assert_str_eq (r.out, demo_help);
}
END_TEST

START_TEST (test_help_write_error)
{
    struct cmdopt_parser p;
    char *argv[] = {"demo", "--help", NULL};
    char *eb = NULL;
    size_t en = 0;
    const char *arg;

    ck_assert_int_eq (cmdopt_init (&p, &spec, 2, argv), 0);
    if (!(p.out = fopen ("/dev/full", "w"))) {
        cmdopt_fini (&p);
        return;
    }
    p.err = open_memstream (&eb, &en);
    ck_assert_int_eq (cmdopt_next (&p, &arg), -1);
    ck_assert_int_eq (p.status, 1);
    fclose (p.out);
    fclose (p.err);
    ck_assert_ptr_nonnull (strstr (eb,
                                   "slurm-pin demo: cannot write the "
                                   "output: "));
    free (eb);
    cmdopt_fini (&p);
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("cmdopt");
    TCase *tc = tcase_create ("cmdopt");

    tcase_add_test (tc, test_getopt_string);
    tcase_add_test (tc, test_bad_table);
    tcase_add_test (tc, test_permutation);
    tcase_add_test (tc, test_double_dash);
    tcase_add_test (tc, test_optional);
    tcase_add_test (tc, test_command);
    tcase_add_loop_test (tc,
                         test_errors,
                         0,
                         (int)(sizeof (errors) / sizeof (errors[0])));
    tcase_add_test (tc, test_operands);
    tcase_add_test (tc, test_help);
    tcase_add_test (tc, test_help_write_error);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
