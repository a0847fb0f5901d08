#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fixtures.h"

/* The project's own synthetic machines: they keep the unit tests
 * meaningful where ../shared/topologies is absent. */
const struct fixture fixtures_own[] = {
    /* 2 sockets, SMT2, Linux numbering (sibling of P#x is P#x+8) */
    {"own-2s-smt-linux",
     "pack:2 [numa] l3:1 l2:4 l1d:1 core:1 pu:2(indexes=core:pack)"},
    /* the same with round-robin numbering across sockets */
    {"own-2s-smt-roundrobin",
     "pack:2 [numa] l3:1 l2:4 l1d:1 core:1 pu:2(indexes=pack:core)"},
    /* sub-NUMA clustering: 2 NUMA nodes under one L3 per socket */
    {"own-2s-snc2",
     "pack:2 l3:1 group:2 [numa] l2:4 core:1 pu:2(indexes=core:pack)"},
    /* EPYC-like: several L3 (CCX of 3 cores) per NUMA node */
    {"own-epyc-like",
     "pack:2 numa:2 l3:2 l2:3 core:1 pu:2(indexes=core:pack)"},
    /* KNL-like: 4 quadrants, L2 shared by 2 cores, SMT4 */
    {"own-knl-like", "pack:1 numa:4 l2:4 core:2 pu:4"},
    /* 4 sockets without SMT */
    {"own-4s-nosmt", "pack:4 [numa] l3:1 l2:6 core:1 pu:1"},
    /* the smallest machine */
    {"own-tiny", "pack:1 [numa] core:1 pu:1"},
    {NULL, NULL},
};

const char *fixtures_dir (void)
{
    const char *dir = getenv ("PIN_TOPOLOGIES");
    if (dir && *dir)
        return dir;
#ifdef PIN_DEFAULT_TOPOLOGIES
    return PIN_DEFAULT_TOPOLOGIES;
#else
    return "../shared/topologies";
#endif
}

struct fixture_vec {
    struct fixture *v;
    size_t n, alloc;
};

static int push (struct fixture_vec *fv, const char *name, const char *src)
{
    if (fv->n + 2 > fv->alloc) {
        size_t alloc = fv->alloc ? fv->alloc * 2 : 64;
        struct fixture *v = realloc (fv->v, alloc * sizeof (*v));
        if (!v)
            return -1;
        fv->v = v;
        fv->alloc = alloc;
    }
    fv->v[fv->n].name = strdup (name);
    fv->v[fv->n].src = strdup (src);
    if (!fv->v[fv->n].name || !fv->v[fv->n].src)
        return -1;
    fv->n++;
    fv->v[fv->n].name = NULL;
    fv->v[fv->n].src = NULL;
    return 0;
}

static int cmp_name (const void *a, const void *b)
{
    return strcmp (*(char *const *)a, *(char *const *)b);
}

/* Add every *.xml in dir/sub (sub may be ""), sorted by name. */
static int scan_xml (struct fixture_vec *fv, const char *dir, const char *sub)
{
    char path[PATH_MAX];
    snprintf (path, sizeof (path), "%s%s%s", dir, *sub ? "/" : "", sub);
    DIR *d = opendir (path);
    if (!d)
        return *sub ? 0 : -1;
    char *names[512];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir (d)) && n < 512) {
        size_t len = strlen (e->d_name);
        if (len > 4 && !strcmp (e->d_name + len - 4, ".xml"))
            names[n++] = strdup (e->d_name);
    }
    closedir (d);
    qsort (names, n, sizeof (names[0]), cmp_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char name[PATH_MAX], file[PATH_MAX * 3];
        snprintf (name,
                  sizeof (name),
                  "%s%s%s",
                  sub,
                  *sub ? "/" : "",
                  names[i]);
        snprintf (file, sizeof (file), "%s/%s", dir, name);
        if (rc == 0 && push (fv, name, file) < 0)
            rc = -1;
        free (names[i]);
    }
    return rc;
}

/* INDEX.md's synthetic table: rows "| `name` | models | `string` | ...". */
static int scan_synthetic (struct fixture_vec *fv, const char *dir)
{
    char path[PATH_MAX];
    snprintf (path, sizeof (path), "%s/INDEX.md", dir);
    FILE *f = fopen (path, "r");
    if (!f)
        return 0;
    char line[4096];
    int in_table = 0;
    int rc = 0;
    while (fgets (line, sizeof (line), f)) {
        if (!strncmp (line, "## ", 3))
            in_table = strstr (line, "Synthetic") != NULL;
        if (!in_table || strncmp (line, "| `", 3) != 0)
            continue;
        char *name = line + 3;
        char *end = strchr (name, '`');
        if (!end)
            continue;
        *end = '\0';
        /* third column: skip two more '|' */
        char *p = end + 1;
        for (int col = 0; col < 2 && p; col++)
            p = strchr (p + 1, '|');
        if (!p || !(p = strchr (p, '`')))
            continue;
        char *src = p + 1;
        if (!(end = strchr (src, '`')))
            continue;
        *end = '\0';
        char full[sizeof (line) + 16];
        snprintf (full, sizeof (full), "synthetic:%s", name);
        if (push (fv, full, src) < 0) {
            rc = -1;
            break;
        }
    }
    fclose (f);
    return rc;
}

int fixtures_shared (struct fixture **out, size_t *count)
{
    const char *dir = fixtures_dir ();
    struct stat st;
    struct fixture_vec fv = {0};

    if (stat (dir, &st) < 0 || !S_ISDIR (st.st_mode)) {
        errno = ENOENT;
        return -1;
    }
    if (scan_xml (&fv, dir, "") < 0 || scan_xml (&fv, dir, "derived") < 0
        || scan_synthetic (&fv, dir) < 0 || fv.n == 0) {
        fixtures_free (fv.v);
        errno = ENOENT;
        return -1;
    }
    *out = fv.v;
    *count = fv.n;
    return 0;
}

void fixtures_free (struct fixture *f)
{
    if (f) {
        int saved = errno;
        for (struct fixture *p = f; p->name; p++) {
            free ((char *)p->name);
            free ((char *)p->src);
        }
        free (f);
        errno = saved;
    }
}
