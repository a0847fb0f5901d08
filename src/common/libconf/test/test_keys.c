/* test_keys.c - pin.conf's key table against pin.conf(5) and itself
 *
 * The table of conf.c is where parsing, the per-partition overrides, the
 * defaults and the lists of known keys come from; the manual page is
 * written by hand.  These cases fail when a key is in one and not in the
 * other (or is documented with another kind of value), when a key may be
 * set per partition in one and not the other, and when a default in the
 * table is not a value its own parser takes.  The pin.conf the packages
 * install (etc/pin.conf.in) lists every key, commented out, with the
 * table's default, and loads with every line uncommented.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libconf/conf.h"
#include "libtest/tap.h"

#define MAN PIN_SRCDIR "/doc/man/pin.conf.5"
#define SHIPPED PIN_SRCDIR "/etc/pin.conf.in"
#define MAXKEYS 64
#define WORD 128

struct man_key {
    char name[WORD];
    char type[WORD]; /* normalized (normalize()) */
};

/* Drop what troff and the table write differently: font escapes (\fI
 * \fR \fB), quotes and blanks; "\-" is "-".  `s` in place. */
static void normalize (char *s)
{
    char *o = s;
    const char *p = s;

    while (*p) {
        if (p[0] == '\\' && p[1] == 'f' && p[2]) {
            p += 3;
            continue;
        }
        if (p[0] == '\\' && p[1] == '-') {
            *o++ = '-';
            p += 2;
            continue;
        }
        if (*p == '"' || isspace ((unsigned char)*p)) {
            p++;
            continue;
        }
        *o++ = *p++;
    }
    *o = '\0';
}

/* The lines of pin.conf(5) from ".SH KEYS" to the next ".SH", one
 * string each, NULL-terminated; the caller frees each and the array. */
static char **keys_section (void)
{
    FILE *f = fopen (MAN, "r");
    char line[1024];
    char **out = calloc (4096, sizeof (*out));
    int n = 0, in = 0;

    ck_assert_msg (f != NULL, "cannot open %s", MAN);
    ck_assert_ptr_nonnull (out);
    while (fgets (line, sizeof (line), f) && n < 4095) {
        line[strcspn (line, "\n")] = '\0';
        if (!strncmp (line, ".SH", 3)) {
            if (in)
                break;
            in = strstr (line, "KEYS") != NULL;
            continue;
        }
        if (in)
            ck_assert_ptr_nonnull (out[n++] = strdup (line));
    }
    fclose (f);
    ck_assert_msg (n > 0, "%s: no KEYS section", MAN);
    return out;
}

static void free_lines (char **l)
{
    for (int i = 0; l[i]; i++)
        free (l[i]);
    free (l);
}

/* The keys the KEYS section lists: the tag line after each .TP or .TQ
 * (".BI Name= type", ".BR Name= { a | b }"). */
static int man_keys (struct man_key *k, int max)
{
    char **l = keys_section ();
    int n = 0;

    for (int i = 1; l[i]; i++) {
        const char *tag = l[i], *eq;
        if (strcmp (l[i - 1], ".TP") != 0 && strcmp (l[i - 1], ".TQ") != 0)
            continue;
        if (strncmp (tag, ".B", 2) != 0 || !(eq = strchr (tag, '=')))
            continue;
        tag += strcspn (tag, " ");
        tag += strspn (tag, " ");
        eq = strchr (tag, '=');
        ck_assert_int_lt (n, max);
        ck_assert_int_lt (eq - tag, WORD);
        memcpy (k[n].name, tag, eq - tag);
        k[n].name[eq - tag] = '\0';
        snprintf (k[n].type, sizeof (k[n].type), "%s", eq + 1);
        normalize (k[n].name);
        normalize (k[n].type);
        n++;
    }
    free_lines (l);
    return n;
}

static const struct man_key *man_find (const struct man_key *k,
                                       int n,
                                       const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp (k[i].name, name) == 0)
            return &k[i];
    return NULL;
}

START_TEST (test_table_in_man)
{
    struct man_key mk[MAXKEYS];
    int nm = man_keys (mk, MAXKEYS);
    size_t nk, i;
    const struct pin_conf_key *k = pin_conf_keys (&nk);

    ck_assert_int_gt (nm, 10);
    for (i = 0; i < nk; i++) {
        const struct man_key *m;
        char type[WORD];

        if (!(k[i].where & (PIN_CONF_KEY_GLOBAL | PIN_CONF_KEY_LINE)))
            continue;
        m = man_find (mk, nm, k[i].name);
        ck_assert_msg (m != NULL,
                       "key %s of conf.c's table is not in the "
                       "KEYS section of %s: document it there",
                       k[i].name,
                       MAN);
        snprintf (type, sizeof (type), "%s", k[i].type);
        normalize (type);
        ck_assert_msg (strcmp (m->type, type) == 0,
                       "%s: %s says %s=%s, "
                       "the table %s=%s",
                       k[i].name,
                       MAN,
                       m->name,
                       m->type,
                       k[i].name,
                       type);
    }
}
END_TEST

START_TEST (test_man_in_table)
{
    struct man_key mk[MAXKEYS];
    int nm = man_keys (mk, MAXKEYS);
    size_t nk, i;
    const struct pin_conf_key *k = pin_conf_keys (&nk);

    for (int j = 0; j < nm; j++) {
        for (i = 0; i < nk; i++)
            if (strcmp (k[i].name, mk[j].name) == 0
                && (k[i].where & (PIN_CONF_KEY_GLOBAL | PIN_CONF_KEY_LINE)))
                break;
        ck_assert_msg (i < nk,
                       "key %s of %s is not a pin.conf key of "
                       "conf.c's table: add it there or remove it from "
                       "the page",
                       mk[j].name,
                       MAN);
    }
}
END_TEST

/* The PartitionName= entry names exactly the per-partition keys, as
 * "Key=" (\fB...= or .BI Key= ...). */
START_TEST (test_partition_keys_in_man)
{
    char **l = keys_section ();
    char text[8192] = "", names[MAXKEYS][WORD];
    size_t nk, i, len = 0;
    const struct pin_conf_key *k = pin_conf_keys (&nk);
    int in = 0, n = 0;

    for (int j = 1; l[j]; j++) {
        if (!strcmp (l[j - 1], ".TP"))
            in = !strncmp (l[j], ".BI PartitionName=", 18);
        if (in && len + strlen (l[j]) + 2 < sizeof (text))
            len += (size_t)
                snprintf (text + len, sizeof (text) - len, "%s\n", l[j]);
    }
    free_lines (l);
    ck_assert_msg (len > 0, "%s: no PartitionName= entry", MAN);
    /* every word "Name=" with Name capitalised, but PartitionName itself
     * and the Key of "Key=Value" */
    for (const char *p = text; *p; p++) {
        size_t w;
        if (!isupper ((unsigned char)*p)
            || (p > text && isalnum ((unsigned char)p[-1])))
            continue;
        w = strspn (p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
        if (p[w] != '=' || w >= WORD)
            continue;
        if ((w == 13 && !strncmp (p, "PartitionName", 13))
            || (w == 3 && !strncmp (p, "Key", 3)))
            continue;
        ck_assert_int_lt (n, MAXKEYS);
        memcpy (names[n], p, w);
        names[n++][w] = '\0';
    }
    for (i = 0; i < nk; i++) {
        int j;
        if (!(k[i].where & PIN_CONF_KEY_PARTITION))
            continue;
        for (j = 0; j < n && strcmp (names[j], k[i].name); j++)
            ;
        ck_assert_msg (j < n,
                       "%s: the PartitionName= entry does not name "
                       "%s=, which the table lets a line set",
                       MAN,
                       k[i].name);
    }
    for (int j = 0; j < n; j++) {
        for (i = 0; i < nk; i++)
            if (!strcmp (names[j], k[i].name)
                && (k[i].where & PIN_CONF_KEY_PARTITION))
                break;
        ck_assert_msg (i < nk,
                       "%s: the PartitionName= entry names %s=, "
                       "which the table does not let a line set",
                       MAN,
                       names[j]);
    }
}
END_TEST

/* Each default is a value of its key: pin_conf_defaults() parses it. */
START_TEST (test_defaults_parse)
{
    size_t nk, i;
    const struct pin_conf_key *k = pin_conf_keys (&nk);
    struct pin_conf d;

    pin_conf_defaults (&d);
    for (i = 0; i < nk; i++) {
        char why[256] = "";
        unsigned char buf[PATH_MAX];

        ck_assert_msg (k[i].name && k[i].type && k[i].defval && k[i].help
                           && *k[i].help,
                       "key %zu: a field is missing",
                       i);
        if (k[i].conf_off < 0 || (k[i].where & PIN_CONF_KEY_DESCRIBED))
            continue;
        ck_assert_uint_le (k[i].size, sizeof (buf));
        memset (buf, 0, sizeof (buf));
        ck_assert_msg (k[i].parse (k[i].defval,
                                   buf,
                                   k[i].size,
                                   why,
                                   sizeof (why))
                           == 0,
                       "%s: default '%s' refused by its parser: %s",
                       k[i].name,
                       k[i].defval,
                       why);
        ck_assert_msg (memcmp (buf, (char *)&d + k[i].conf_off, k[i].size)
                           == 0,
                       "%s: pin_conf_defaults() is not '%s'",
                       k[i].name,
                       k[i].defval);
    }
}
END_TEST

/* The lists in messages are the table's names in its order. */
/* etc/pin.conf.in: every key a pin.conf line may set is there once, as
 * "#Key=VALUE" with the table's default (an example where the default is
 * described, not a value); nothing is set as shipped; uncommenting every
 * such line (and the PartitionName= examples) gives a file that loads. */
START_TEST (test_shipped_conf)
{
    size_t n;
    const struct pin_conf_key *k = pin_conf_keys (&n);
    FILE *f = fopen (SHIPPED, "r");
    char line[1024], tmpl[] = "/tmp/test_keys.XXXXXX";
    char *text = calloc (1, 65536);
    size_t len = 0;
    int fd, count[MAXKEYS] = {0};
    struct pin_conf c;
    pin_error_t e = {""};

    ck_assert_msg (f != NULL, "cannot open %s", SHIPPED);
    ck_assert_ptr_nonnull (text);
    ck_assert_uint_le (n, MAXKEYS);
    while (fgets (line, sizeof (line), f)) {
        char *p = line, *at;
        line[strcspn (line, "\n")] = '\0';
        /* what make substitutes */
        if ((at = strstr (line, "@bindir@"))) {
            char rest[1024];
            snprintf (rest, sizeof (rest), "%s", at + strlen ("@bindir@"));
            snprintf (at, sizeof (line) - (size_t)(at - line), "%s%s",
                      PIN_BINDIR, rest);
        }
        while (isspace ((unsigned char)*p))
            p++;
        ck_assert_msg (*p == '\0' || *p == '#',
                       "%s: '%s' is set; every line ships commented out",
                       SHIPPED, line);
        for (size_t i = 0; *p == '#' && i < n; i++) {
            size_t l = strlen (k[i].name);
            if (strncmp (p + 1, k[i].name, l) || p[1 + l] != '=')
                continue;
            count[i]++;
            if ((k[i].where & PIN_CONF_KEY_GLOBAL)
                && !(k[i].where & PIN_CONF_KEY_DESCRIBED))
                ck_assert_msg (!strcmp (p + 2 + l, k[i].defval),
                               "%s: '%s': the default is %s",
                               SHIPPED, p, k[i].defval);
            /* uncommented in the copy that must load */
            len += (size_t)snprintf (text + len, 65536 - len, "%s\n", p + 1);
        }
    }
    fclose (f);
    for (size_t i = 0; i < n; i++) {
        if (k[i].where & PIN_CONF_KEY_GLOBAL)
            ck_assert_msg (count[i] == 1,
                           "%s: #%s= appears %d times; want once",
                           SHIPPED, k[i].name, count[i]);
        else if (k[i].where & PIN_CONF_KEY_LINE)
            ck_assert_msg (count[i] >= 1, "%s: no #%s= example",
                           SHIPPED, k[i].name);
    }
    fd = mkstemp (tmpl);
    ck_assert_int_ge (fd, 0);
    ck_assert_int_eq (write (fd, text, len), (ssize_t)len);
    close (fd);
    pin_conf_defaults (&c);
    ck_assert_msg (pin_conf_load_file (&c, tmpl, true, &e) == 0,
                   "%s uncommented: %s", SHIPPED, e.text);
    unlink (tmpl);
    free (text);
}
END_TEST

START_TEST (test_names)
{
    char buf[1024];

    pin_conf_key_names (PIN_CONF_KEY_PARTITION, buf, sizeof (buf));
    ck_assert_str_eq (buf,
                      "DefaultPolicy, AllowedPolicies, ForcedPolicy, "
                      "DynamicOveruse, DynamicGrace, DynamicInterval, "
                      "DynamicConfine, SpreadSockets, Profile, GpuBinding, "
                      "Experiment, ExperimentPolicies, ExperimentShare, "
                      "ExperimentUntil, ExperimentSeed, ExperimentJobNames, "
                      "ExperimentAccounts");
    pin_conf_key_names (PIN_CONF_KEY_PARTITION, buf, 20);
    ck_assert_str_eq (buf, "DefaultPolicy");
}
END_TEST

int main (void)
{
    Suite *s = suite_create ("keys");
    TCase *tc = tcase_create ("keys");

    tcase_add_test (tc, test_table_in_man);
    tcase_add_test (tc, test_man_in_table);
    tcase_add_test (tc, test_partition_keys_in_man);
    tcase_add_test (tc, test_defaults_parse);
    tcase_add_test (tc, test_names);
    tcase_add_test (tc, test_shipped_conf);
    suite_add_tcase (s, tc);
    return tap_run (s, NULL, 0);
}
