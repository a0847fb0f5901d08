/* subcmd.h - what the subcommands of slurm-pin share
 *
 * Adding a subcommand: write cmd_NAME() in NAME.c, declare it here, add
 * one entry to the table in slurm-pin.c and the file to Makefile.am.
 * A subcommand gets argv[0] = its own name and returns the exit status.
 */
#ifndef PIN_SUBCMD_H
#define PIN_SUBCMD_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct subcmd {
    const char *name;
    const char *summary; /* one line for 'slurm-pin --help' */
    int (*fn) (int argc, char **argv);
};

/* The subcommands. */
int cmd_plan (int argc, char **argv);
int cmd_check (int argc, char **argv);
int cmd_acct (int argc, char **argv);
int cmd_eff (int argc, char **argv);
int cmd_report (int argc, char **argv);
int cmd_profile (int argc, char **argv);
int cmd_deliver (int argc, char **argv);
int cmd_experiment (int argc, char **argv);
/* plot.c, in the program slurm-pin-plot only (it links PLplot) */
int cmd_plot (int argc, char **argv);
/* plotexec.c: `slurm-pin plot` runs slurm-pin-plot from the directory
 * of the running executable */
int cmd_plot_exec (int argc, char **argv);

/* Print "slurm-pin SUBCMD: MESSAGE" as exactly one line on stderr:
 * control characters (from hostile or mistyped values) are shown as '?'
 * (text_sanitize(), libutil/text.h) and an overlong message is cut.
 * `subcmd` may be NULL.
 */
void cmd_error (const char *subcmd, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* `s` (a name a user chose: job, command, user, node, path; NULL reads
 * as "") made safe to print on a terminal (text_sanitize(): controls,
 * escape sequences, bidi controls, bad UTF-8 shown as '?'), cut at 4 KiB.
 * The result lives in one of 8 static buffers used in turn: valid until
 * the 8th call after, enough for the arguments of one printf. */
const char *cmd_text (const char *s);

/* Parse `s` as a decimal integer in [min, max]: digits only (no sign,
 * space, or base prefix), the whole string.  Returns 0 and sets *out, or
 * -1 (errno EINVAL or ERANGE) leaving *out untouched.
 */
int cmd_parse_u64 (const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Flush stdout and report a write error (e.g. a full disk) on stderr.
 * Returns 0, or -1 after printing the error. */
int cmd_flush_stdout (const char *subcmd);

/* JSON output, one way for every subcommand (json-c); strings are made
 * safe to print as cmd_text() does (C0 controls escaped by json-c).
 * cmd_json_add: add `val` (taken over) under `key`; on failure (a NULL
 * val unless `null_ok`, which adds a JSON null; ENOMEM) put `val` and
 * return -1.
 * cmd_print_json: print `root` (taken over; NULL means it could not be
 * built) as one line of plain JSON on `f`; -1 after reporting "cannot
 * build the JSON output" for `subcmd`. */
int cmd_json_add (json_object *obj,
                  const char *key,
                  json_object *val,
                  bool null_ok);
int cmd_print_json (const char *subcmd, json_object *root, FILE *f);

#endif /* !PIN_SUBCMD_H */
