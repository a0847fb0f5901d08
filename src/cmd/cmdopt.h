/* cmdopt.h - the options of slurm-pin's subcommands, from one table each
 *
 * As flux-core's optparse: each option is one row (long name, short name,
 * argument, help text) and the getopt_long arrays, the --help text and
 * the error messages all come from the rows.  Every subcommand parses
 * the same way:
 *
 *   - options anywhere on the line (GNU order), "--" ends them, and so
 *     does the first operand when POSIXLY_CORRECT is set;
 *   - an option with CMDOPT_CMD (profile --record) makes the first operand
 *     after it start a command line: what follows is the command's own;
 *   - --help and -h are added to every table, print the help on stdout;
 *   - errors are one line, worded one way for every subcommand:
 *       slurm-pin SUB: --bogus: unknown option (see 'slurm-pin SUB --help')
 *       slurm-pin SUB: -n: missing value (see 'slurm-pin SUB --help')
 *       slurm-pin SUB: --json=1: this option takes no value (see ...)
 *       slurm-pin SUB: --j: ambiguous option; could be --jobs, --json (...)
 *
 *   struct cmdopt_parser p;
 *   const char *arg;
 *   int key;
 *
 *   if (cmdopt_init (&p, &spec, argc, argv) < 0) ...
 *   while ((key = cmdopt_next (&p, &arg)) > 0)
 *       switch (key) { ... }
 *   if (key < 0) -> return p.status (help printed: 0; an error: printed)
 *   p.operands[0 .. p.noperands-1]: the operands, in order
 *   cmdopt_fini (&p);
 */
#ifndef PIN_CMD_CMDOPT_H
#define PIN_CMD_CMDOPT_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* has_arg */
#define CMDOPT_NONE no_argument
#define CMDOPT_REQUIRED required_argument
#define CMDOPT_OPTIONAL optional_argument /* --opt=VAL or -oVAL only */

/* flags */
#define CMDOPT_CMD 0x1 /* the first operand after it starts a command */

/* Keys of long-only options start here (a short option's key is its
 * character). */
#define CMDOPT_LONG 256

struct cmdopt {
    const char *name;  /* long name without "--"; NULL: a heading
                          (usage is its text), or the end of the table
                          when usage is NULL too */
    int key;           /* the short option ('j') or >= CMDOPT_LONG */
    int has_arg;       /* CMDOPT_NONE, _REQUIRED, _OPTIONAL */
    const char *arg;   /* the argument's name in --help ("FILE") */
    const char *usage; /* --help text, '\n' between its lines; NULL
                          hides the row (an alias) */
    unsigned flags;    /* CMDOPT_CMD */
};
#define CMDOPT_HEADING(text)        \
    {                               \
        NULL, 0, 0, NULL, (text), 0 \
    }
#define CMDOPT_END                \
    {                             \
        NULL, 0, 0, NULL, NULL, 0 \
    }

#define CMDOPT_MAX_TABLES 6

struct cmdopt_spec {
    const char *name;   /* the subcommand: "plan" */
    const char *usage;  /* the help's head: "Usage: ..." lines and what
                           the command does, each line ending in '\n' */
    const char *footer; /* the help's tail, or NULL */
    void (*help_more) (FILE *f); /* prints more of the tail, or NULL */
    int usage_status;            /* exit status of a usage error */
    /* the option tables, in --help order; NULL ends the list */
    const struct cmdopt *tables[CMDOPT_MAX_TABLES + 1];
};

struct cmdopt_parser {
    const struct cmdopt_spec *spec;
    int argc;
    char **argv;
    char **operands; /* noperands of them, NULL after; in argv */
    int noperands;
    int status;       /* after cmdopt_next() < 0: the exit status */
    char error[1024]; /* after a usage error: its text */
    FILE *out, *err;  /* stdout, stderr (tests change them) */
    /* private */
    struct option *longopts;
    const struct cmdopt **rows; /* rows[i] is longopts[i]'s */
    char *shortopts;
    const struct cmdopt *cmd; /* a CMDOPT_CMD option given */
    bool posix;               /* POSIXLY_CORRECT: stop at an operand */
    bool done;
};

/* Build the getopt_long arrays of `spec` for argv[1..argc-1] (argv[0] is
 * the subcommand's name).  0, or -1 with errno ENOMEM (or EINVAL: a table
 * repeats a key or a name).  Free with cmdopt_fini(). */
int cmdopt_init (struct cmdopt_parser *p,
                 const struct cmdopt_spec *spec,
                 int argc,
                 char **argv);

/* The next option: its key, with *arg its value (NULL when none); 0 when
 * the options are done (the operands are in p->operands); -1 when the
 * subcommand must exit with p->status: --help was given (the help is
 * printed on p->out; 0, or 1 on a write error) or a usage error was
 * printed on p->err as one line (p->spec->usage_status). */
int cmdopt_next (struct cmdopt_parser *p, const char **arg);

/* Print the help of `spec` (head, options, tail) on `f`. */
void cmdopt_help (const struct cmdopt_spec *spec, FILE *f);

/* Print a usage error, "slurm-pin SUB: TEXT (see 'slurm-pin SUB
 * --help')", on p->err; set p->status and return -1. */
int cmdopt_usage_error (struct cmdopt_parser *p, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* After the options: no operand (else "X: unexpected argument"), or
 * exactly one (else "expected one WHAT").  0, or -1 after the error. */
int cmdopt_no_operands (struct cmdopt_parser *p);
int cmdopt_one_operand (struct cmdopt_parser *p, const char *what);

/* Free what cmdopt_init() allocated; p may have failed init. */
void cmdopt_fini (struct cmdopt_parser *p);

#endif /* !PIN_CMD_CMDOPT_H */
