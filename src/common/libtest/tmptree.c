/* tmptree.c - a private temporary directory for unit tests (tmptree.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tmptree.h"

static char root[256];

void tmptree_setup (const char *name)
{
    const char *tmp = getenv ("TMPDIR");

    snprintf (root,
              sizeof (root),
              "%s/%s.XXXXXX",
              tmp && *tmp ? tmp : "/tmp",
              name);
    ck_assert_msg (mkdtemp (root) != NULL,
                   "mkdtemp %s: %s",
                   root,
                   strerror (errno));
}

const char *tmptree_root (void)
{
    return root;
}

void tmptree_path (char *buf, size_t size, const char *rel)
{
    ck_assert_int_lt (snprintf (buf, size, "%s/%s", root, rel), (int)size);
}

void tmptree_mkdirs (const char *rel, bool last_too)
{
    char buf[512];
    char *p;

    tmptree_path (buf, sizeof (buf), rel);
    for (p = buf + strlen (root) + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            ck_assert_msg (mkdir (buf, 0700) == 0 || errno == EEXIST,
                           "mkdir %s: %s",
                           buf,
                           strerror (errno));
            *p = '/';
        }
    }
    if (last_too)
        ck_assert_msg (mkdir (buf, 0700) == 0 || errno == EEXIST,
                       "mkdir %s: %s",
                       buf,
                       strerror (errno));
}

void tmptree_put (const char *rel, const char *content)
{
    char buf[512];
    FILE *f;

    tmptree_mkdirs (rel, false);
    tmptree_path (buf, sizeof (buf), rel);
    ck_assert_msg ((f = fopen (buf, "w")) != NULL,
                   "%s: %s",
                   buf,
                   strerror (errno));
    fputs (content, f);
    ck_assert_int_eq (fclose (f), 0);
}

const char *tmptree_get (const char *rel)
{
    static char content[4096];
    char buf[512];
    size_t n;
    FILE *f;

    tmptree_path (buf, sizeof (buf), rel);
    if (!(f = fopen (buf, "r")))
        return "<missing>";
    n = fread (content, 1, sizeof (content) - 1, f);
    content[n] = '\0';
    fclose (f);
    return content;
}

bool tmptree_exists (const char *rel)
{
    char buf[512];
    struct stat st;

    tmptree_path (buf, sizeof (buf), rel);
    return lstat (buf, &st) == 0;
}

static int rm_one (const char *path,
                   const struct stat *st,
                   int flag,
                   struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove (path) < 0 && errno != ENOENT ? -1 : 0;
}

void tmptree_rm_rf (const char *path)
{
    nftw (path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void tmptree_teardown (void)
{
    if (root[0])
        tmptree_rm_rf (root);
}
