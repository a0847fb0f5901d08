/* test_topo - libtopo on the project's own machines (always runs) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "libtest/fixtures.h"
#include "libtopo/topo.h"
#include "libtopo/topo_private.h"
#include "model_check.h"

/* ---- loading ------------------------------------------------------------ */

START_TEST (test_own_fixtures)
{
    const struct fixture *f = &fixtures_own[_i];
    pin_error_t e = {{0}};
    topo_t *t = topo_load (f->src, 0, &e);

    ck_assert_msg (t != NULL, "%s: %s", f->name, e.text);
    model_check (t, f->name);
    topo_destroy (t);

    /* synthetic machines have no disallowed PU: the same with the flag */
    t = topo_load (f->src, TOPO_WHOLE_SYSTEM, &e);
    ck_assert_msg (t != NULL, "%s: %s", f->name, e.text);
    model_check (t, f->name);
    /* the model cache gives the same model */
    model_round_trip (t, f->name);
    topo_destroy (t);
}
END_TEST

/* Hand-computed expectations: counts per level, plus the cpuset of one
 * domain per level (index in `pick`). */
struct expect {
    const char *name;
    const char *src;
    unsigned npus;
    unsigned ndom[TOPO_NLEVELS];
    unsigned local_numa;
    int nodes; /* weight of topo_nodeset */
    unsigned pick[TOPO_NLEVELS];
    const char *set[TOPO_NLEVELS]; /* cpuset of domain pick[lvl] */
    const char *numa_nodes;        /* nodeset of NUMA domain pick[NUMA] */
};

static const struct expect expects[] = {
    /* siblings numbered after all cores: sibling of P#x is P#x+8 */
    {"2s-smt-linux",
     "pack:2 [numa] l3:1 l2:4 l1d:1 core:1 pu:2(indexes=core:pack)",
     16,
     {8, 8, 2, 2, 2},
     2,
     2,
     {1, 5, 1, 1, 0},
     {"1,9", "5,13", "4-7,12-15", "4-7,12-15", "0-3,8-11"},
     "1"},
    /* round-robin over sockets: package 0 has the even P#; core 1 is
     * the second core of socket 0 */
    {"2s-smt-roundrobin",
     "pack:2 [numa] l3:1 l2:4 l1d:1 core:1 pu:2(indexes=pack:core)",
     16,
     {8, 8, 2, 2, 2},
     2,
     2,
     {1, 4, 1, 0, 1},
     {"2,10",
      "1,9",
      "1,3,5,7,9,11,13,15",
      "0,2,4,6,8,10,12,14",
      "1,3,5,7,9,11,13,15"},
     "0"},
    /* sub-NUMA clustering: 2 NUMA domains inside one L3 */
    {"2s-snc2",
     "pack:2 l3:1 group:2 [numa] l2:4 core:1 pu:2(indexes=core:pack)",
     32,
     {16, 16, 2, 4, 2},
     4,
     4,
     {0, 0, 0, 1, 1},
     {"0,16", "0,16", "0-7,16-23", "4-7,20-23", "8-15,24-31"},
     "1"},
    /* KNL-like: L2 shared by 2 cores, no L3 (falls back to NUMA) */
    {"knl-like",
     "pack:1 numa:4 l2:4 core:2 pu:4",
     128,
     {32, 16, 4, 4, 1},
     4,
     4,
     {1, 1, 3, 3, 0},
     {"4-7", "8-15", "96-127", "96-127", "0-127"},
     "3"},
    /* EPYC-like: 2 L3 per NUMA node */
    {"epyc-like",
     "pack:2 numa:2 l3:2 l2:3 core:1 pu:2(indexes=core:pack)",
     48,
     {24, 24, 8, 4, 2},
     4,
     4,
     {3, 3, 1, 1, 1},
     {"3,27", "3,27", "3-5,27-29", "6-11,30-35", "12-23,36-47"},
     "1"},
    /* PUs without a Core parent are their own cores; no L2: the core */
    {"no-cores",
     "pack:1 [numa] pu:4",
     4,
     {4, 4, 1, 1, 1},
     1,
     1,
     {2, 2, 0, 0, 0},
     {"2", "2", "0-3", "0-3", "0-3"},
     "0"},
    /* no Package objects: one package domain */
    {"no-package",
     "numa:2 core:2 pu:2",
     8,
     {4, 4, 2, 2, 1},
     2,
     2,
     {1, 1, 1, 1, 0},
     {"2-3", "2-3", "4-7", "4-7", "0-7"},
     "1"},
    /* two memory nodes with the same CPUs (KNL DDR + MCDRAM): one domain
     * holding both nodes */
    {"paired-numa",
     "pack:1 [numa] [numa] core:4 pu:1",
     4,
     {4, 4, 1, 1, 1},
     1,
     2,
     {0, 0, 0, 0, 0},
     {"0", "0", "0-3", "0-3", "0-3"},
     "0-1"},
    /* the smallest machine */
    {"tiny",
     "pack:1 [numa] core:1 pu:1",
     1,
     {1, 1, 1, 1, 1},
     1,
     1,
     {0, 0, 0, 0, 0},
     {"0", "0", "0", "0", "0"},
     "0"},
};

START_TEST (test_expectations)
{
    const struct expect *x = &expects[_i];
    pin_error_t e = {{0}};
    topo_t *t = topo_load (x->src, 0, &e);

    ck_assert_msg (t != NULL, "%s: %s", x->name, e.text);
    model_check (t, x->name);
    ck_assert_msg (topo_npus (t) == x->npus,
                   "%s: %u PUs, expected %u",
                   x->name,
                   topo_npus (t),
                   x->npus);
    for (int lvl = 0; lvl < TOPO_NLEVELS; lvl++) {
        ck_assert_msg (topo_ndomains (t, lvl) == x->ndom[lvl],
                       "%s: level %d has %u domains, expected %u",
                       x->name,
                       lvl,
                       topo_ndomains (t, lvl),
                       x->ndom[lvl]);
        const char *got =
            model_fmt (topo_domain_cpuset (t, lvl, x->pick[lvl]));
        ck_assert_msg (strcmp (got, x->set[lvl]) == 0,
                       "%s: level %d domain %u is %s, expected %s",
                       x->name,
                       lvl,
                       x->pick[lvl],
                       got,
                       x->set[lvl]);
    }
    ck_assert_uint_eq (model_local_numa (t), x->local_numa);
    ck_assert_int_eq (hwloc_bitmap_weight (topo_nodeset (t)), x->nodes);
    ck_assert_str_eq (model_fmt (topo_numa_nodeset (t, x->pick[TOPO_NUMA])),
                      x->numa_nodes);
    topo_destroy (t);
}
END_TEST

/* A PU covered by nested NUMA nodes belongs to the smallest one. */
START_TEST (test_nested_numa)
{
    pin_error_t e = {{0}};
    topo_t *t = topo_load ("pack:2 [numa] group:2 [numa] core:2 pu:1", 0, &e);
    hwloc_bitmap_t used = hwloc_bitmap_alloc ();

    ck_assert_msg (t != NULL, "%s", e.text);
    model_check (t, "nested");
    ck_assert_int_eq (hwloc_bitmap_weight (topo_nodeset (t)), 6);
    ck_assert_uint_eq (topo_ndomains (t, TOPO_NUMA), 4);
    for (unsigned d = 0; d < 4; d++) {
        ck_assert (topo_numa_is_local (t, d));
        ck_assert_int_eq (hwloc_bitmap_weight (
                              topo_domain_cpuset (t, TOPO_NUMA, d)),
                          2);
        ck_assert_int_eq (hwloc_bitmap_weight (topo_numa_nodeset (t, d)), 1);
        hwloc_bitmap_or (used, used, topo_numa_nodeset (t, d));
    }
    /* the two package-wide nodes are in no domain */
    ck_assert_int_eq (hwloc_bitmap_weight (used), 4);
    hwloc_bitmap_free (used);
    topo_destroy (t);
}
END_TEST

/* An XML with disallowed PUs (as inside a job cgroup): hidden by default,
 * kept with TOPO_WHOLE_SYSTEM.  Made from a synthetic machine by editing
 * the root's allowed_cpuset. */
static char *write_restricted_xml (const char *dir)
{
    hwloc_topology_t hw;
    char *buf = NULL;
    int len;
    char *path = NULL;
    const char *needle = "allowed_cpuset=\"0x000000ff\"";
    char *p;
    FILE *f;

    ck_assert_int_eq (hwloc_topology_init (&hw), 0);
    ck_assert_int_eq (hwloc_topology_set_synthetic (hw,
                                                    "pack:2 [numa] "
                                                    "core:2 pu:2"),
                      0);
    ck_assert_int_eq (hwloc_topology_load (hw), 0);
    ck_assert_int_eq (hwloc_topology_export_xmlbuffer (hw, &buf, &len, 0), 0);
    p = strstr (buf, needle);
    ck_assert_msg (p != NULL, "no %s in the export", needle);
    /* allow P#0-1 and P#4 only */
    memcpy (p, "allowed_cpuset=\"0x00000013\"", strlen (needle));
    ck_assert (asprintf (&path, "%s/restricted.xml", dir) > 0);
    ck_assert_ptr_nonnull (f = fopen (path, "w"));
    ck_assert_int_eq (fputs (buf, f) >= 0, 1);
    ck_assert_int_eq (fclose (f), 0);
    hwloc_free_xmlbuffer (hw, buf);
    hwloc_topology_destroy (hw);
    return path;
}

static char *make_tmpdir (void)
{
    const char *base = getenv ("TMPDIR");
    char *dir = NULL;
    ck_assert (asprintf (&dir, "%s/test_topo.XXXXXX", base ? base : "/tmp")
               > 0);
    ck_assert_ptr_nonnull (mkdtemp (dir));
    return dir;
}

static void remove_tree (const char *path)
{
    struct stat st;
    if (lstat (path, &st) < 0)
        return;
    if (S_ISDIR (st.st_mode)) {
        DIR *d = opendir (path);
        struct dirent *ent;
        while (d && (ent = readdir (d))) {
            char *sub;
            if (!strcmp (ent->d_name, ".") || !strcmp (ent->d_name, ".."))
                continue;
            if (asprintf (&sub, "%s/%s", path, ent->d_name) > 0) {
                remove_tree (sub);
                free (sub);
            }
        }
        if (d)
            closedir (d);
        rmdir (path);
    } else
        unlink (path);
}

START_TEST (test_disallowed)
{
    char *dir = make_tmpdir ();
    char *path = write_restricted_xml (dir);
    pin_error_t e = {{0}};
    topo_t *t;

    t = topo_load (path, 0, &e);
    ck_assert_msg (t != NULL, "%s", e.text);
    model_check (t, "restricted");
    ck_assert_uint_eq (topo_npus (t), 3);
    ck_assert_str_eq (model_fmt (topo_cpuset (t)), "0-1,4");
    ck_assert_int_eq (topo_pu_index (t, 2), -1);
    ck_assert_int_eq (topo_pu_index (t, 4), 2);
    ck_assert_uint_eq (topo_ndomains (t, TOPO_CORE), 2);
    ck_assert_uint_eq (topo_ndomains (t, TOPO_PKG), 2);
    topo_destroy (t);

    t = topo_load (path, TOPO_WHOLE_SYSTEM, &e);
    ck_assert_msg (t != NULL, "%s", e.text);
    model_check (t, "restricted, whole system");
    ck_assert_uint_eq (topo_npus (t), 8);
    ck_assert_uint_eq (topo_ndomains (t, TOPO_CORE), 4);
    topo_destroy (t);

    remove_tree (dir);
    free (path);
    free (dir);
}
END_TEST

/* errors: one line naming the source and the problem */
static const struct {
    const char *src;
    int flags;
    const char *text;
} load_errors[] = {
    {"/nonexistent/x.xml",
     0,
     "topology '/nonexistent/x.xml': cannot load XML: No such file or "
     "directory"},
    {"nothere.xml",
     0,
     "topology 'nothere.xml': cannot load XML: No such file or directory"},
    {"pack:x", 0, "topology 'pack:x': invalid synthetic description"},
    {"pack:2 core:0 pu:2",
     0,
     "topology 'pack:2 core:0 pu:2': invalid synthetic description"},
    {"",
     0,
     "topology '': empty source; expected \"system\", an XML file "
     "or a synthetic description"},
    {"pack:1 pu:1",
     0x100,
     "topology 'pack:1 pu:1': unknown flags 0x100; "
     "expected 0 or TOPO_WHOLE_SYSTEM"},
    /* CPU numbers are below 100000, as in kernel lists */
    {"pack:1 pu:2(indexes=0,100000)",
     0,
     "topology 'pack:1 pu:2(indexes=0,100000)': PU P#100000 out of range; "
     "CPU numbers are below 100000"},
};

START_TEST (test_load_errors)
{
    pin_error_t e = {{0}};
    errno = 0;
    ck_assert_ptr_null (
        topo_load (load_errors[_i].src, load_errors[_i].flags, &e));
    ck_assert_int_ne (errno, 0);
    ck_assert_str_eq (e.text, load_errors[_i].text);
    /* errp may be NULL */
    ck_assert_ptr_null (
        topo_load (load_errors[_i].src, load_errors[_i].flags, NULL));
}
END_TEST

/* A complete document hwloc refuses: the error names the reader that
 * refused it (t0120 runs slurm-pin plan with each reader forced). */
START_TEST (test_load_garbage_xml)
{
    char *dir = make_tmpdir ();
    char *path = NULL;
    char *want = NULL;
    pin_error_t e = {{0}};
    const char *reader;
    FILE *f;

    ck_assert (asprintf (&path, "%s/garbage.xml", dir) > 0);
    ck_assert_ptr_nonnull (f = fopen (path, "w"));
    /* a Machine root with a child of no known type: past libtopo's own
     * checks (xml_object_check()), refused by hwloc */
    fputs (
        "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">"
        "<object type=\"Machine\"><object type=\"Bogus\" "
        "os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
        "nodeset=\"0x1\" complete_nodeset=\"0x1\"/></object>"
        "</topology>\n",
        f);
    fclose (f);
    ck_assert_ptr_null (topo_load (path, 0, &e));
    ck_assert_int_eq (errno, EINVAL);
    reader = topo_xml_reader ();
    ck_assert_ptr_nonnull (reader);
    if (strcmp (reader, TOPO_XML_READER_BUILTIN) == 0)
        ck_assert (asprintf (&want,
                             "topology '%s': cannot load XML: "
                             "hwloc's built-in XML reader refused it (it "
                             "reads only what hwloc's own exporter "
                             "writes); install libhwloc-plugins for "
                             "hwloc's libxml2 reader",
                             path)
                   > 0);
    else
        ck_assert (asprintf (&want,
                             "topology '%s': cannot load XML: "
                             "hwloc's libxml2 XML reader refused it: not a "
                             "valid hwloc XML topology",
                             path)
                   > 0);
    ck_assert_str_eq (e.text, want);
    remove_tree (dir);
    free (want);
    free (path);
    free (dir);
}
END_TEST

/* A file cut short never reaches hwloc (whose built-in reader leaks an
 * object on it, see topo_private.h): one line says so, with any reader. */
START_TEST (test_load_truncated_xml)
{
    char *dir = make_tmpdir ();
    char *path = NULL;
    char *want = NULL;
    pin_error_t e = {{0}};
    topo_t *t;
    FILE *f;

    ck_assert (asprintf (&path, "%s/cut.xml", dir) > 0);
    /* a whole export, then the same cut in half */
    ck_assert_ptr_nonnull (t = topo_load ("pack:2 core:2 pu:2", 0, &e));
    ck_assert_int_eq (topo_export_xml (t, path, &e), 0);
    topo_destroy (t);
    ck_assert_ptr_nonnull (t = topo_load (path, 0, &e));
    topo_destroy (t);
    ck_assert_ptr_nonnull (f = fopen (path, "r+"));
    ck_assert_int_eq (fseek (f, 0, SEEK_END), 0);
    ck_assert_int_eq (ftruncate (fileno (f), ftell (f) / 2), 0);
    fclose (f);
    ck_assert_ptr_null (topo_load (path, 0, &e));
    ck_assert_int_eq (errno, EINVAL);
    ck_assert (asprintf (&want,
                         "topology '%s': cannot load XML: the file "
                         "ends before its closing </topology> (truncated?)",
                         path)
               > 0);
    ck_assert_str_eq (e.text, want);
    /* an empty file and a directory */
    ck_assert_int_eq (truncate (path, 0), 0);
    ck_assert_ptr_null (topo_load (path, 0, &e));
    ck_assert_str_eq (e.text, want);
    free (want);
    ck_assert (asprintf (&want,
                         "topology '%s/': cannot load XML: a "
                         "directory, not a regular file",
                         dir)
               > 0);
    free (path);
    ck_assert (asprintf (&path, "%s/", dir) > 0);
    ck_assert_ptr_null (topo_load (path, 0, &e));
    ck_assert_str_eq (e.text, want);
    /* a FIFO: refused at once, never waited on */
    free (want);
    free (path);
    ck_assert (asprintf (&path, "%s/fifo.xml", dir) > 0);
    ck_assert_int_eq (mkfifo (path, 0600), 0);
    ck_assert (asprintf (&want,
                         "topology '%s': cannot load XML: a FIFO, "
                         "not a regular file",
                         path)
               > 0);
    alarm (10);
    ck_assert_ptr_null (topo_load (path, 0, &e));
    alarm (0);
    ck_assert_str_eq (e.text, want);
    remove_tree (dir);
    free (want);
    free (path);
    free (dir);
}
END_TEST

/* XML files hwloc 2.9 loads, or crashes on, that are no machine's: each
 * refused with one line.  The base document (2 PUs of one core) loads;
 * each case replaces one line of it. */
static const char *xml_base[] = {
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
    "<topology version=\"2.0\">",
    "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x3\" "
    "complete_cpuset=\"0x3\" allowed_cpuset=\"0x3\" nodeset=\"0x3\" "
    "complete_nodeset=\"0x3\" allowed_nodeset=\"0x3\" gp_index=\"1\">",
    "    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" "
    "complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
    "gp_index=\"2\"/>",
    "    <object type=\"Core\" os_index=\"0\" cpuset=\"0x3\" "
    "complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
    "gp_index=\"3\">",
    "      <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" "
    "complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
    "gp_index=\"4\"/>",
    "      <object type=\"PU\" os_index=\"1\" cpuset=\"0x2\" "
    "complete_cpuset=\"0x2\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
    "gp_index=\"5\"/>",
    "    </object>",
    "  </object>",
    "</topology>",
};

static const struct {
    int line;          /* index into xml_base, -1: none */
    const char *text;  /* replaces it */
    const char *error; /* after "topology 'PATH': " */
} bad_xml[] = {
    {-1, NULL, NULL}, /* the base loads */
    /* found by t/fuzz/fuzz_topoxml: hwloc 2.9 dereferences NULL */
    {5,
     "      <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" "
     "nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"4\"/>",
     "cannot load XML: line 6: an object with a cpuset lacks "
     "complete_cpuset, nodeset or complete_nodeset (hwloc's exporter "
     "writes all four)"},
    {4,
     "    <x:object type=\"Core\" os_index=\"0\" cpuset=\"0x3\"\n"
     "complete_cpuset='0x3' gp_index=\"3\">",
     "cannot load XML: line 5: an object with a cpuset lacks "
     "complete_cpuset, nodeset or complete_nodeset (hwloc's exporter "
     "writes all four)"},
    /* a prefix does not make an attribute the one hwloc looks for */
    {3,
     "    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" "
     "complete_cpuset=\"0x3\" nodeset=\"0x1\" :complete_nodeset=\"0x1\" "
     "gp_index=\"2\"/>",
     "cannot load XML: line 4: an object with a cpuset lacks "
     "complete_cpuset, nodeset or complete_nodeset (hwloc's exporter "
     "writes all four)"},
    /* nor does a value without quotes (hwloc's built-in reader skips
     * it) */
    {3,
     "    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" "
     "complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=0x1 "
     "gp_index=\"2\"/>",
     "cannot load XML: line 4: an attribute without '=' and a quoted "
     "value"},
    /* hwloc_bitmap_sscanf() asserts on a set starting with ',' */
    {5,
     "      <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" "
     "complete_cpuset=\",0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
     "gp_index=\"4\"/>",
     "cannot load XML: line 6: a cpuset or nodeset is not written as "
     "hwloc writes sets (0x0000000f,0x1)"},
    /* an unbalanced quote in a processing instruction does not hide the
     * tags after it */
    {4,
     "<?x v=\"1?>\n"
     "    <object type=\"Core\" os_index=\"0\" cpuset=\"0x3\" "
     "gp_index=\"3\">",
     "cannot load XML: line 6: an object with a cpuset lacks "
     "complete_cpuset, nodeset or complete_nodeset (hwloc's exporter "
     "writes all four)"},
    /* no Machine on top: hwloc 2.9 can end with an empty topology and
     * read freed memory */
    {2,
     "  <object type=\"Package\" os_index=\"0\" cpuset=\"0x3\" "
     "complete_cpuset=\"0x3\" nodeset=\"0x3\" complete_nodeset=\"0x3\" "
     "gp_index=\"1\">",
     "cannot load XML: line 3: the first object is not the Machine (or v1 "
     "System) root"},
    /* found by t/fuzz/fuzz_topoxml in CI: a Machine whose cpuset is not
     * within its complete_cpuset; hwloc 2.9 (libxml2 reader) empties the
     * topology, then SEGV */
    {2,
     "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x3\" "
     "complete_cpuset=\"0x4\" allowed_cpuset=\"0x3\" nodeset=\"0x3\" "
     "complete_nodeset=\"0x3\" allowed_nodeset=\"0x3\" gp_index=\"1\">",
     "cannot load XML: line 3: an object's cpuset is not within its "
     "complete_cpuset, or its nodeset not within its complete_nodeset "
     "(hwloc's exporter writes them so)"},
    /* the same for the nodesets of a NUMA node */
    {3,
     "    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" "
     "complete_cpuset=\"0x3\" nodeset=\"0x3\" complete_nodeset=\"0x1\" "
     "gp_index=\"2\"/>",
     "cannot load XML: line 4: an object's cpuset is not within its "
     "complete_cpuset, or its nodeset not within its complete_nodeset "
     "(hwloc's exporter writes them so)"},
    /* a NUMA node without any set (hwloc 2.9 crashes on one in an hwloc
     * 1.x file) */
    {3,
     "    <object type=\"NUMANode\" os_index=\"0\" cpus=\"x\" "
     "gp_index=\"2\"/>",
     "cannot load XML: line 4: a PU or NUMANode object has no cpuset "
     "(hwloc's exporter writes one)"},
    /* hwloc reads "NUMA*ode" as a NUMA node: an os_index is needed */
    {3,
     "    <object type=\"NUMA*ode\" cpuset=\"0x3\" "
     "complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
     "gp_index=\"2\"/>",
     "cannot load XML: line 4: a PU or NUMANode object has no os_index "
     "below 100000 (hwloc's exporter writes one)"},
    /* hwloc's built-in reader stops at an attribute without a value */
    {3,
     "    <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" "
     "complete_cpuset=\"0x3\" nodeset=\"0x1\" stray "
     "complete_nodeset=\"0x1\" gp_index=\"2\"/>",
     "cannot load XML: line 4: an attribute without '=' and a quoted "
     "value"},
    /* PU and NUMA node numbers become bits of hwloc's bitmaps (512 MiB
     * for an unknown one) and size a table of the model */
    {6,
     "      <object type=\"PU\" os_index=\"100000\" cpuset=\"0x2\" "
     "complete_cpuset=\"0x2\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
     "gp_index=\"5\"/>",
     "cannot load XML: line 7: a PU or NUMANode object has no os_index "
     "below 100000 (hwloc's exporter writes one)"},
    {3,
     "    <object type=\"NUMANode\" cpuset=\"0x3\" "
     "complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
     "gp_index=\"2\"/>",
     "cannot load XML: line 4: a PU or NUMANode object has no os_index "
     "below 100000 (hwloc's exporter writes one)"},
    {6,
     "      <object type=\"PU\" os_index=\"0\" cpuset=\"0x2\" "
     "complete_cpuset=\"0x2\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
     "gp_index=\"5\"/>",
     "PU P#0 appears twice"},
    {6,
     "      <object type=\"PU\" os_index=\"1\" cpuset=\"0x3\" "
     "complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
     "gp_index=\"5\"/>",
     "PU P#1 has a cpuset other than its own number"},
    /* a NUMA node inside the core, next to one of its PUs (found by
     * fuzz_topoxml): the core would be split between NUMA domains */
    {5,
     "      <object type=\"Group\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
     "nodeset=\"0x2\" complete_nodeset=\"0x2\" gp_index=\"6\">\n"
     "        <object type=\"NUMANode\" os_index=\"1\" cpuset=\"0x1\" "
     "complete_cpuset=\"0x1\" nodeset=\"0x2\" complete_nodeset=\"0x2\" "
     "gp_index=\"7\"/>\n"
     "        <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" "
     "complete_cpuset=\"0x1\" nodeset=\"0x2\" complete_nodeset=\"0x2\" "
     "gp_index=\"4\"/>\n"
     "      </object>",
     "P#0 and P#1 share a core but not their NUMA domain; not a topology "
     "hwloc discovers"},
};

/* Nothing allowed: hwloc 2.9 reads freed memory loading that without
 * disallowed objects (found by fuzz_topoxml).  With TOPO_WHOLE_SYSTEM it
 * loads. */
START_TEST (test_load_nothing_allowed_xml)
{
    static const struct {
        const char *allowed_cpus, *allowed_nodes, *error;
    } cases[] = {
        {"0x0", "0x0", "no usable CPU (none is allowed)"},
        {"0x3", "0x2", "no usable memory node (none is allowed)"},
    };
    char *dir = make_tmpdir ();
    char *path = NULL;
    char *want = NULL;
    pin_error_t e = {{0}};
    topo_t *t;
    FILE *f;

    ck_assert (asprintf (&path, "%s/none.xml", dir) > 0);
    for (int c = 0; c < 2; c++) {
        ck_assert_ptr_nonnull (f = fopen (path, "w"));
        for (int i = 0; i < (int)(sizeof (xml_base) / sizeof (xml_base[0]));
             i++) {
            if (i == 2)
                fprintf (f,
                         "  <object type=\"Machine\" os_index=\"0\" "
                         "cpuset=\"0x3\" complete_cpuset=\"0x3\" "
                         "allowed_cpuset=\"%s\" nodeset=\"0x1\" "
                         "complete_nodeset=\"0x1\" allowed_nodeset=\"%s\" "
                         "gp_index=\"1\">\n",
                         cases[c].allowed_cpus,
                         cases[c].allowed_nodes);
            else
                fprintf (f, "%s\n", xml_base[i]);
        }
        ck_assert_int_eq (fclose (f), 0);
        ck_assert_ptr_null (topo_load (path, 0, &e));
        ck_assert_int_eq (errno, ENOENT);
        free (want);
        ck_assert (asprintf (&want, "topology '%s': %s", path, cases[c].error)
                   > 0);
        ck_assert_str_eq (e.text, want);
        t = topo_load (path, TOPO_WHOLE_SYSTEM, &e);
        ck_assert_msg (t != NULL, "%s", e.text);
        ck_assert_uint_eq (topo_npus (t), 2);
        topo_destroy (t);
    }
    remove_tree (dir);
    free (want);
    free (path);
    free (dir);
}
END_TEST

START_TEST (test_load_bad_xml)
{
    char *dir = make_tmpdir ();
    char *path = NULL;
    char *want = NULL;
    pin_error_t e = {{0}};
    topo_t *t;
    FILE *f;

    ck_assert (asprintf (&path, "%s/bad.xml", dir) > 0);
    ck_assert_ptr_nonnull (f = fopen (path, "w"));
    for (int i = 0; i < (int)(sizeof (xml_base) / sizeof (xml_base[0])); i++)
        fprintf (f,
                 "%s\n",
                 i == bad_xml[_i].line ? bad_xml[_i].text : xml_base[i]);
    ck_assert_int_eq (fclose (f), 0);
    for (int flags = 0; flags <= TOPO_WHOLE_SYSTEM; flags++) {
        t = topo_load (path, flags, &e);
        if (!bad_xml[_i].error) {
            ck_assert_msg (t != NULL, "%s", e.text);
            model_check (t, "base");
            ck_assert_uint_eq (topo_npus (t), 2);
            topo_destroy (t);
            continue;
        }
        ck_assert_ptr_null (t);
        ck_assert_int_eq (errno, EINVAL);
        free (want);
        ck_assert (
            asprintf (&want, "topology '%s': %s", path, bad_xml[_i].error)
            > 0);
        ck_assert_str_eq (e.text, want);
    }
    remove_tree (dir);
    free (want);
    free (path);
    free (dir);
}
END_TEST

START_TEST (test_system)
{
    pin_error_t e = {{0}};
    topo_t *t = topo_load ("system", 0, &e);
    ck_assert_msg (t != NULL, "%s", e.text);
    model_check (t, "system");
    topo_destroy (t);
    t = topo_load ("system", TOPO_WHOLE_SYSTEM, &e);
    ck_assert_msg (t != NULL, "%s", e.text);
    model_check (t, "system (whole)");
    topo_destroy (t);
}
END_TEST

START_TEST (test_accessors_out_of_range)
{
    topo_t *t = topo_load ("pack:1 [numa] core:2 pu:1", 0, NULL);
    ck_assert_ptr_nonnull (t);
    ck_assert_ptr_null (topo_pu (t, 2));
    ck_assert_int_eq (topo_pu_index (t, 2), -1);
    ck_assert_int_eq (topo_pu_index (t, 100000), -1);
    ck_assert_uint_eq (topo_ndomains (t, TOPO_NLEVELS), 0);
    ck_assert_ptr_null (topo_domain_cpuset (t, TOPO_NLEVELS, 0));
    ck_assert_ptr_null (topo_domain_cpuset (t, TOPO_CORE, 2));
    ck_assert_ptr_null (topo_numa_nodeset (t, 1));
    ck_assert (!topo_numa_is_local (t, 1));
    topo_destroy (t);
    /* destroy accepts NULL and keeps errno */
    errno = 42;
    topo_destroy (NULL);
    ck_assert_int_eq (errno, 42);
}
END_TEST

/* ---- kernel list format ------------------------------------------------- */

/* The kernel reads list numbers as decimal (bitmap_parselist); hwloc's
 * sscanf uses strtoul (..., 0), so "010" would be CPU 8 (octal), "08" the
 * empty set and "08-8" bit 4294967288.  A leading zero is refused. */
#define LEADING_ZERO(n)                  \
    "CPU number " n                      \
    " has a leading zero; expected the " \
    "kernel list format, e.g. 0-3,8"
#define OUT_OF_RANGE(n)              \
    "CPU number " n                  \
    " is out of range; CPU numbers " \
    "are below 100000"

static const struct {
    const char *in;
    const char *out;   /* formatted result, NULL = rejected */
    const char *error; /* NULL: the "malformed" message */
} lists[] = {
    {"", "", NULL},
    {"\n", "", NULL},
    {"0", "0", NULL},
    {"0-3,8", "0-3,8", NULL},
    {"8,0-3", "0-3,8", NULL},
    {"0-3,2-5", "0-5", NULL},
    {"3-3", "3", NULL},
    {"1,3,5", "1,3,5", NULL},
    {"0-3\n", "0-3", NULL}, /* as read from a kernel file */
    {"99999", "99999", NULL},
    {"0-99999", "0-99999", NULL},
    /* hwloc's sscanf takes these; a strict parser must not */
    {"0-", NULL, NULL},  /* hwloc: infinite */
    {"3-1", NULL, NULL}, /* hwloc: empty */
    {"a", NULL, NULL},
    {"1a", NULL, NULL}, /* hwloc: stops at 'a' */
    {"1,,2", NULL, NULL},
    {"0x3", NULL, NULL},
    {",1", NULL, NULL},
    {"1,", NULL, NULL},
    {"-1", NULL, NULL},
    {"1-2-3", NULL, NULL},
    {" 1", NULL, NULL},
    {"1 ", NULL, NULL},
    {"1, 2", NULL, NULL},
    {"0-3\n\n", NULL, NULL},
    {"+1", NULL, NULL},
    {"1\t", NULL, NULL},
    /* numbers are decimal, as the kernel reads them */
    {"10", "10", NULL},
    {"0,10", "0,10", NULL},
    {"0-10", "0-10", NULL},
    {"100-109", "100-109", NULL},
    {"010", NULL, "'010': " LEADING_ZERO ("010")},
    {"08", NULL, "'08': " LEADING_ZERO ("08")},
    {"08-8", NULL, "'08-8': " LEADING_ZERO ("08")},
    {"0-07", NULL, "'0-07': " LEADING_ZERO ("07")},
    {"00", NULL, "'00': " LEADING_ZERO ("00")},
    {"1,2,0010", NULL, "'1,2,0010': " LEADING_ZERO ("0010")},
    {"00-3\n", NULL, "'00-3?': " LEADING_ZERO ("00")},
    /* 6 digits and more: out of range, whatever the digits */
    {"100000", NULL, "'100000': " OUT_OF_RANGE ("100000")},
    {"123456", NULL, "'123456': " OUT_OF_RANGE ("123456")},
    {"0-100000", NULL, "'0-100000': " OUT_OF_RANGE ("100000")},
    {"1,99999-123456", NULL, "'1,99999-123456': " OUT_OF_RANGE ("123456")},
    {"18446744073709551617",
     NULL,
     "'18446744073709551617': " OUT_OF_RANGE ("18446744073709551617")},
};

START_TEST (test_list_parse)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    pin_error_t e = {{0}};
    int rc;

    hwloc_bitmap_set (set, 77); /* must be replaced, or left alone */
    rc = topo_list_parse (lists[_i].in, set, &e);
    if (lists[_i].out) {
        ck_assert_msg (rc == 0, "'%s': %s", lists[_i].in, e.text);
        char *s = topo_list_format (set);
        ck_assert_ptr_nonnull (s);
        ck_assert_str_eq (s, lists[_i].out);
        free (s);
    } else {
        ck_assert_msg (rc == -1, "'%s' accepted", lists[_i].in);
        ck_assert_int_eq (errno, EINVAL);
        ck_assert_str_eq (model_fmt (set), "77");
        if (lists[_i].error)
            ck_assert_str_eq (e.text, lists[_i].error);
        else
            ck_assert_msg (strstr (e.text,
                                   "malformed CPU list; expected "
                                   "the kernel list format, e.g. "
                                   "0-3,8"),
                           "message: %s",
                           e.text);
    }
    hwloc_bitmap_free (set);
}
END_TEST

START_TEST (test_list_messages)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    pin_error_t e = {{0}};
    char long_list[200];

    ck_assert_int_eq (topo_list_parse ("0-", set, &e), -1);
    ck_assert_str_eq (e.text,
                      "'0-': malformed CPU list; expected the "
                      "kernel list format, e.g. 0-3,8");
    /* hostile text: unprintable characters replaced, length bounded */
    ck_assert_int_eq (topo_list_parse ("1\x1b[2J", set, &e), -1);
    ck_assert_str_eq (e.text,
                      "'1?[2J': malformed CPU list; expected the "
                      "kernel list format, e.g. 0-3,8");
    memset (long_list, '1', sizeof (long_list) - 1);
    long_list[sizeof (long_list) - 1] = '\0';
    ck_assert_int_eq (topo_list_parse (long_list, set, &e), -1);
    ck_assert_msg (strstr (e.text, "1111...': CPU number 1111") != NULL,
                   "%s",
                   e.text);
    ck_assert_msg (strstr (e.text,
                           "1111... is out of range; CPU numbers "
                           "are below 100000")
                       != NULL,
                   "%s",
                   e.text);
    ck_assert_int_lt (strlen (e.text), 160);
    /* the same bound for a long malformed list */
    for (size_t i = 1; i + 1 < sizeof (long_list); i += 2)
        long_list[i] = ',';
    long_list[sizeof (long_list) - 2] = 'x';
    ck_assert_int_eq (topo_list_parse (long_list, set, &e), -1);
    ck_assert_msg (strstr (e.text, "1,1,...': malformed CPU list") != NULL,
                   "%s",
                   e.text);
    ck_assert_int_lt (strlen (e.text), 120);
    /* a leading zero after a long valid prefix is named alone */
    for (size_t i = 0; i + 1 < sizeof (long_list); i++)
        long_list[i] = i % 2 ? ',' : '1';
    memcpy (long_list + sizeof (long_list) - 4, "007", 4);
    ck_assert_int_eq (topo_list_parse (long_list, set, &e), -1);
    ck_assert_msg (strstr (e.text,
                           "1,1,...': CPU number 007 has a leading "
                           "zero")
                       != NULL,
                   "%s",
                   e.text);
    /* no error buffer is fine */
    ck_assert_int_eq (topo_list_parse ("x", set, NULL), -1);
    hwloc_bitmap_free (set);
}
END_TEST

START_TEST (test_list_format)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    char *s;

    ck_assert_ptr_nonnull (s = topo_list_format (set));
    ck_assert_str_eq (s, "");
    free (s);
    hwloc_bitmap_set_range (set, 0, 3);
    hwloc_bitmap_set (set, 8);
    hwloc_bitmap_set_range (set, 10, 11);
    ck_assert_ptr_nonnull (s = topo_list_format (set));
    ck_assert_str_eq (s, "0-3,8,10-11");
    free (s);
    /* round trip */
    hwloc_bitmap_t back = hwloc_bitmap_alloc ();
    ck_assert_int_eq (topo_list_parse ("0-3,8,10-11", back, NULL), 0);
    ck_assert (hwloc_bitmap_isequal (set, back));
    hwloc_bitmap_free (back);
    /* infinite sets have no kernel list form */
    hwloc_bitmap_fill (set);
    errno = 0;
    ck_assert_ptr_null (topo_list_format (set));
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_ptr_null (topo_list_format (NULL));
    hwloc_bitmap_free (set);
}
END_TEST

/* ---- Slurm core ids ----------------------------------------------------- */

static const struct {
    const char *src;
    const char *cores;
    const char *cpus; /* NULL = error expected */
    const char *error;
} slurm_cases[] = {
    /* Linux numbering: core 1 = P#1 and its sibling P#9 */
    {"pack:2 [numa] l2:4 core:1 pu:2(indexes=core:pack)", "1", "1,9", NULL},
    {"pack:2 [numa] l2:4 core:1 pu:2(indexes=core:pack)",
     "0-3",
     "0-3,8-11",
     NULL},
    {"pack:2 [numa] l2:4 core:1 pu:2(indexes=core:pack)",
     "4,7",
     "4,7,12,15",
     NULL},
    /* round-robin: core 1 is the second core of socket 0 */
    {"pack:2 [numa] l2:4 core:1 pu:2(indexes=pack:core)", "1", "2,10", NULL},
    {"pack:2 [numa] l2:4 core:1 pu:2(indexes=pack:core)", "4", "1,9", NULL},
    /* SMT4 with adjacent siblings */
    {"pack:1 [numa] core:4 pu:4", "2", "8-11", NULL},
    /* no Core objects: every PU is a core */
    {"pack:1 [numa] pu:4", "3", "3", NULL},
    {"pack:1 [numa] core:4 pu:2", "", "", NULL},
    {"pack:1 [numa] core:4 pu:2",
     "4",
     NULL,
     "Slurm core id 4 (in '4') out of range; this node has 4 cores, 0-3"},
    {"pack:1 [numa] core:4 pu:2",
     "0-9",
     NULL,
     "Slurm core id 9 (in '0-9') out of range; this node has 4 cores, 0-3"},
    /* the trailing newline a kernel-style list may have stays out of the
     * one-line message */
    {"pack:1 [numa] core:4 pu:2",
     "0-9\n",
     NULL,
     "Slurm core id 9 (in '0-9') out of range; this node has 4 cores, 0-3"},
    {"pack:1 [numa] core:4 pu:2",
     "0-",
     NULL,
     "'0-': malformed Slurm core list; expected the kernel list format, "
     "e.g. 0-3,8"},
    /* decimal, as Slurm writes them: "01" is not core 1 */
    {"pack:1 [numa] core:4 pu:2",
     "01",
     NULL,
     "'01': Slurm core number 01 has a leading zero; expected the kernel "
     "list format, e.g. 0-3,8"},
};

START_TEST (test_slurm_cores)
{
    topo_t *t = topo_load (slurm_cases[_i].src, 0, NULL);
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc ();
    pin_error_t e = {{0}};
    int rc;

    ck_assert_ptr_nonnull (t);
    hwloc_bitmap_set (cpus, 99);
    rc = topo_slurm_cores_to_cpuset (t, slurm_cases[_i].cores, cpus, &e);
    if (slurm_cases[_i].cpus) {
        ck_assert_msg (rc == 0, "%s", e.text);
        ck_assert_str_eq (model_fmt (cpus), slurm_cases[_i].cpus);
    } else {
        ck_assert_int_eq (rc, -1);
        ck_assert_str_eq (e.text, slurm_cases[_i].error);
        ck_assert_str_eq (model_fmt (cpus), "99");
    }
    hwloc_bitmap_free (cpus);
    topo_destroy (t);
}
END_TEST

/* Every core id maps to the PUs of exactly one core domain, in order. */
START_TEST (test_slurm_cores_all)
{
    const struct fixture *f = &fixtures_own[_i];
    topo_t *t = topo_load (f->src, TOPO_WHOLE_SYSTEM, NULL);
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc ();
    char id[16];

    ck_assert_ptr_nonnull (t);
    for (unsigned c = 0; c < topo_ndomains (t, TOPO_CORE); c++) {
        snprintf (id, sizeof (id), "%u", c);
        ck_assert_int_eq (topo_slurm_cores_to_cpuset (t, id, cpus, NULL), 0);
        ck_assert_msg (hwloc_bitmap_isequal (cpus,
                                             topo_domain_cpuset (t,
                                                                 TOPO_CORE,
                                                                 c)),
                       "%s: core %u -> %s, core domain %s",
                       f->name,
                       c,
                       model_fmt (cpus),
                       model_fmt (topo_domain_cpuset (t, TOPO_CORE, c)));
    }
    hwloc_bitmap_free (cpus);
    topo_destroy (t);
}
END_TEST

/* ---- cache -------------------------------------------------------------- */

/* "Live" discovery comes from HWLOC_SYNTHETIC, so that a test can tell a
 * topology read from the cache from one discovered afresh. */
#define LIVE_A "pack:2 [numa] core:4 pu:2" /* 16 PUs */
#define LIVE_B "pack:1 [numa] core:3 pu:1" /* 3 PUs */

static topo_t *load_cached_as (const char *live,
                               const char *path,
                               bool *refreshed)
{
    pin_error_t e = {{0}};
    topo_t *t;
    setenv ("HWLOC_SYNTHETIC", live, 1);
    t = topo_load_cached (path, refreshed, &e);
    unsetenv ("HWLOC_SYNTHETIC");
    ck_assert_msg (t != NULL, "%s", e.text);
    return t;
}

static void replace_in_file (const char *path,
                             const char *from,
                             const char *to)
{
    FILE *f = fopen (path, "r");
    char *buf, *p;
    long len;

    ck_assert_ptr_nonnull (f);
    fseek (f, 0, SEEK_END);
    len = ftell (f);
    rewind (f);
    ck_assert_ptr_nonnull (buf = calloc (1, len + strlen (to) + 1));
    ck_assert_int_eq (fread (buf, 1, len, f), len);
    fclose (f);
    ck_assert_msg ((p = strstr (buf, from)) != NULL,
                   "no '%s' in %s",
                   from,
                   path);
    ck_assert_uint_eq (strlen (from), strlen (to));
    memcpy (p, to, strlen (to));
    ck_assert_ptr_nonnull (f = fopen (path, "w"));
    fputs (buf, f);
    fclose (f);
    free (buf);
}

static int count_entries (const char *dir)
{
    DIR *d = opendir (dir);
    struct dirent *ent;
    int n = 0;
    ck_assert_ptr_nonnull (d);
    while ((ent = readdir (d)))
        if (strcmp (ent->d_name, ".") && strcmp (ent->d_name, ".."))
            n++;
    closedir (d);
    return n;
}

START_TEST (test_cache_refresh)
{
    char *dir = make_tmpdir ();
    char *sub = NULL, *path = NULL, *model = NULL, *scratch = NULL;
    bool refreshed = false;
    struct stat st;
    topo_t *t;

    ck_assert (asprintf (&sub, "%s/a/b", dir) > 0);
    ck_assert (asprintf (&path, "%s/topo.xml", sub) > 0);

    /* first call: no cache yet, directories made, file written */
    t = load_cached_as (LIVE_A, path, &refreshed);
    ck_assert (refreshed);
    ck_assert_uint_eq (topo_npus (t), 16);
    model_check (t, "cache, first call");
    topo_destroy (t);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_eq (st.st_mode & 07777, 0644);
    ck_assert_int_eq (stat (sub, &st), 0);
    ck_assert (S_ISDIR (st.st_mode));
    ck_assert_int_eq (st.st_mode & 07777, 0755);
    /* the XML and its model, no temporary left */
    ck_assert_int_eq (count_entries (sub), 2);
    ck_assert (asprintf (&model, "%s.model", path) > 0);
    ck_assert_int_eq (stat (model, &st), 0);
    ck_assert_int_eq (st.st_mode & 07777, 0644);

    /* second call: the machine "changed" (LIVE_B) but the fingerprint
     * did not, so the cache is used as it is */
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert (!refreshed);
    ck_assert_uint_eq (topo_npus (t), 16);
    ck_assert_uint_eq (topo_ndomains (t, TOPO_CORE), 8);
    model_check (t, "cache, second call");
    /* ... from the model cache: no hwloc topology behind it */
    ck_assert_int_eq (topo_export_xml (t, model, NULL), -1);
    ck_assert_int_eq (errno, ENOTSUP);
    topo_destroy (t);

    /* a damaged model: the XML is used (a topology with hwloc behind
     * it, which exports) and the model rewritten, used the next time */
    replace_in_file (model, "\"version\":5", "\"version\":9");
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert (!refreshed);
    ck_assert_uint_eq (topo_npus (t), 16);
    ck_assert (asprintf (&scratch, "%s/scratch.xml", dir) > 0);
    ck_assert_int_eq (topo_export_xml (t, scratch, NULL), 0);
    topo_destroy (t);
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert_uint_eq (topo_npus (t), 16);
    ck_assert_int_eq (topo_export_xml (t, scratch, NULL), -1);
    topo_destroy (t);

    /* a fingerprint from another machine: rediscovered and rewritten */
    replace_in_file (path, "format=3;host=", "format=0;host=");
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert (refreshed);
    ck_assert_uint_eq (topo_npus (t), 3);
    topo_destroy (t);
    t = load_cached_as (LIVE_A, path, &refreshed);
    ck_assert (!refreshed);
    ck_assert_uint_eq (topo_npus (t), 3);
    topo_destroy (t);

    /* refreshed may be NULL */
    topo_destroy (load_cached_as (LIVE_A, path, NULL));

    remove_tree (dir);
    free (scratch);
    free (model);
    free (path);
    free (sub);
    free (dir);
}
END_TEST

/* Model caches edited into something inconsistent: each is refused
 * (topo_load_model NULL), never half-used. */
static const struct {
    const char *from, *to;
} bad_models[] = {
    {"\"format\":\"slurm-pin", "\"format\":\"slurm-pix"},
    {"\"version\":5", "\"version\":4"},
    {"\"os\":\"0", "\"os\":\"1"},               /* OS index twice */
    {"\"os\":\"0", "\"os\":\"g"},               /* not hexadecimal */
    {"\"core\":\"0", "\"core\":\"9"},           /* core 9 of 4 PUs */
    {"\"npus\":4", "\"npus\":5"},               /* columns too short */
    {"\"hexwidth\":1", "\"hexwidth\":2"},       /* the same */
    {"\"hexwidth\":1", "\"hexwidth\":9"},       /* out of range */
    {"\"slurm_cores\":2", "\"slurm_cores\":1"}, /* core id 1 too big */
    {"\"nodeset\":\"0x00000001\"", "\"nodeset\":\"0x0000000x\""},
    {"\"nodeset\":\"0x00000001\"",
     "\"nodeset\":\"0x000001\"  "}, /* not hwloc's own */
    {"[[\"0x00000001\",true]]", "[[\"0x00000001\",1234]]"},
    {"[[\"0x00000001\",true]]",
     "[[\"0x00000002\",true]]"}, /* not in nodeset */
    {"\"numa\":[[\"0x00000001\",true]]", "\"numa\":[                   ]"},
};

START_TEST (test_model_bad)
{
    char *dir = make_tmpdir ();
    char *xml = NULL, *model = NULL;
    pin_error_t e = {{0}};
    topo_t *t;
    FILE *f;

    ck_assert (asprintf (&xml, "%s/t.xml", dir) > 0);
    ck_assert (asprintf (&model, "%s/t.xml.model", dir) > 0);
    ck_assert_ptr_nonnull (
        t = topo_load ("pack:1 [numa] core:2 pu:2", TOPO_WHOLE_SYSTEM, &e));
    ck_assert_int_eq (topo_export_xml (t, xml, &e), 0);
    ck_assert_int_eq (topo_export_model (t, "fp", xml, model, &e), 0);
    topo_destroy (t);
    /* the good one loads */
    ck_assert_ptr_nonnull (t = topo_load_model (model, "fp", xml, &e));
    topo_destroy (t);
    replace_in_file (model, bad_models[_i].from, bad_models[_i].to);
    errno = 0;
    ck_assert_ptr_null (topo_load_model (model, "fp", xml, &e));
    ck_assert_int_eq (errno, EINVAL);
    ck_assert_msg (strstr (e.text, model) != NULL, "%s", e.text);
    /* trailing text after the object, and a cut one */
    ck_assert_ptr_nonnull (f = fopen (model, "a"));
    fputs ("{}", f);
    fclose (f);
    ck_assert_ptr_null (topo_load_model (model, "fp", xml, NULL));
    ck_assert_int_eq (truncate (model, 40), 0);
    ck_assert_ptr_null (topo_load_model (model, "fp", xml, NULL));
    remove_tree (dir);
    free (model);
    free (xml);
    free (dir);
}
END_TEST

/* Files that are not a usable cache: each is rediscovered. */
static const char *bad_caches[] = {
    "",
    "garbage \x01\x02\x03 not xml at all",
    "<?xml version=\"1.0\"?>\n<topology>",
    "<?xml version=\"1.0\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
    "<topology version=\"2.0\">\n  <object type=\"Machine\" os_index=\"0\" "
    "cpuset=\"0x0000000f\"",
    "<?xml version=\"1.0\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
    "<topology version=\"3.0\"></topology>\n",
};

START_TEST (test_cache_bad_file)
{
    char *dir = make_tmpdir ();
    char *path = NULL;
    bool refreshed = false;
    FILE *f;
    topo_t *t;

    ck_assert (asprintf (&path, "%s/topo.xml", dir) > 0);
    ck_assert_ptr_nonnull (f = fopen (path, "w"));
    fputs (bad_caches[_i], f);
    fclose (f);
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert (refreshed);
    ck_assert_uint_eq (topo_npus (t), 3);
    topo_destroy (t);
    t = load_cached_as (LIVE_A, path, &refreshed);
    ck_assert (!refreshed);
    ck_assert_uint_eq (topo_npus (t), 3);
    topo_destroy (t);
    remove_tree (dir);
    free (path);
    free (dir);
}
END_TEST

/* A truncated copy of a good cache is rediscovered too. */
START_TEST (test_cache_truncated)
{
    char *dir = make_tmpdir ();
    char *path = NULL;
    bool refreshed = false;
    struct stat st;
    topo_t *t;

    ck_assert (asprintf (&path, "%s/topo.xml", dir) > 0);
    topo_destroy (load_cached_as (LIVE_A, path, &refreshed));
    ck_assert (refreshed);
    ck_assert_int_eq (stat (path, &st), 0);
    ck_assert_int_eq (truncate (path, st.st_size / 2), 0);
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert (refreshed);
    ck_assert_uint_eq (topo_npus (t), 3);
    topo_destroy (t);
    remove_tree (dir);
    free (path);
    free (dir);
}
END_TEST

/* A cache that cannot be written still gives the live topology. */
START_TEST (test_cache_unwritable)
{
    char *dir = make_tmpdir ();
    char *file = NULL, *path = NULL, *dirpath = NULL;
    bool refreshed = true;
    FILE *f;
    topo_t *t;

    /* the parent "directory" is a regular file: mkdir fails (even for
     * root, unlike a permission check) */
    ck_assert (asprintf (&file, "%s/plainfile", dir) > 0);
    ck_assert_ptr_nonnull (f = fopen (file, "w"));
    fclose (f);
    ck_assert (asprintf (&path, "%s/sub/topo.xml", file) > 0);
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert (!refreshed);
    ck_assert_uint_eq (topo_npus (t), 3);
    topo_destroy (t);

    /* the cache path is a directory: not read, not replaced */
    ck_assert (asprintf (&dirpath, "%s/isadir", dir) > 0);
    ck_assert_int_eq (mkdir (dirpath, 0755), 0);
    refreshed = true;
    t = load_cached_as (LIVE_B, dirpath, &refreshed);
    ck_assert (!refreshed);
    ck_assert_uint_eq (topo_npus (t), 3);
    topo_destroy (t);
    ck_assert_int_eq (count_entries (dir), 2); /* no temporary left */

    remove_tree (dir);
    free (dirpath);
    free (path);
    free (file);
    free (dir);
}
END_TEST

/* A cache anyone could have written is not trusted (its fingerprint is
 * public): it is ignored, the live topology is used, and nothing is
 * written into a directory the next reader would not trust either. */
START_TEST (test_cache_unsafe)
{
    char *dir = make_tmpdir ();
    char *sub = NULL, *path = NULL, *model = NULL;
    bool refreshed = true;
    struct stat before, after;
    topo_t *t;

    ck_assert (asprintf (&sub, "%s/cache", dir) > 0);
    ck_assert (asprintf (&path, "%s/topo.xml", sub) > 0);
    topo_destroy (load_cached_as (LIVE_A, path, &refreshed));
    ck_assert (refreshed);
    ck_assert_int_eq (stat (path, &before), 0);

    /* the directory is writable by everyone: ignored, not rewritten */
    ck_assert_int_eq (chmod (sub, 0777), 0);
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert_uint_eq (topo_npus (t), 3);
    ck_assert (!refreshed);
    topo_destroy (t);
    ck_assert_int_eq (stat (path, &after), 0);
    ck_assert_uint_eq (after.st_ino, before.st_ino);
    ck_assert_int_eq (count_entries (sub), 2); /* XML and model */

    /* the file itself is writable by everyone: ignored, and replaced by
     * a fresh one (the directory is safe again) */
    ck_assert_int_eq (chmod (sub, 0755), 0);
    ck_assert_int_eq (chmod (path, 0666), 0);
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert_uint_eq (topo_npus (t), 3);
    ck_assert (refreshed);
    topo_destroy (t);
    ck_assert_int_eq (stat (path, &after), 0);
    ck_assert_int_eq (after.st_mode & 07777, 0644);

    /* as root: a cache owned by another user is ignored */
    if (geteuid () == 0) {
        ck_assert_int_eq (chown (path, 65534, 65534), 0);
        t = load_cached_as (LIVE_A, path, &refreshed);
        ck_assert_uint_eq (topo_npus (t), 16);
        ck_assert (refreshed);
        topo_destroy (t);
    }
    /* and the trusted one is read again */
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert (!refreshed);
    ck_assert_uint_eq (topo_npus (t), geteuid () == 0 ? 16 : 3);
    topo_destroy (t);

    /* a model anyone could have written is not used either: the XML is,
     * and the model is written anew (mode 0644) */
    ck_assert (asprintf (&model, "%s.model", path) > 0);
    ck_assert_int_eq (chmod (model, 0666), 0);
    t = load_cached_as (LIVE_B, path, &refreshed);
    ck_assert (!refreshed);
    ck_assert_uint_eq (topo_npus (t), geteuid () == 0 ? 16 : 3);
    ck_assert_int_eq (topo_export_xml (t, "/nonexistent/x.xml", NULL), -1);
    ck_assert_int_ne (errno, ENOTSUP); /* an hwloc topology */
    topo_destroy (t);
    ck_assert_int_eq (stat (model, &after), 0);
    ck_assert_int_eq (after.st_mode & 07777, 0644);

    remove_tree (dir);
    free (model);
    free (path);
    free (sub);
    free (dir);
}
END_TEST

START_TEST (test_cache_errors)
{
    pin_error_t e = {{0}};
    ck_assert_ptr_null (topo_load_cached ("", NULL, &e));
    ck_assert_str_eq (e.text, "topology cache: empty path");
    ck_assert_ptr_null (topo_load_cached (NULL, NULL, NULL));
}
END_TEST

START_TEST (test_fingerprint)
{
    struct utsname u;
    char *fp = topo_system_fingerprint ();
    char *host = NULL, *kernel = NULL;

    ck_assert_ptr_nonnull (fp);
    ck_assert_int_eq (uname (&u), 0);
    ck_assert (asprintf (&host, ";host=%s;", u.nodename) > 0);
    ck_assert (asprintf (&kernel, ";kernel=%s;", u.release) > 0);
    ck_assert_msg (strstr (fp, host) && strstr (fp, kernel)
                       && strstr (fp, ";cpus=") && strstr (fp, ";hwloc-api="),
                   "fingerprint: %s",
                   fp);
    /* stable while nothing changes */
    char *again = topo_system_fingerprint ();
    ck_assert_str_eq (fp, again);
    free (again);
    free (host);
    free (kernel);
    free (fp);
}
END_TEST

/* topo_export_xml round trip: the model survives, the fingerprint is in
 * the file once, and exporting a cached topology replaces it. */
/* The export's fingerprint is the one read back, even when the root
 * already has an info whose name becomes SlurmPinFingerprint through the
 * export and import (a non-ASCII byte, with hwloc's built-in reader;
 * found by fuzz_topoxml_builtin). */
START_TEST (test_export_fingerprint_first)
{
    char *dir = make_tmpdir ();
    char *in = NULL, *out = NULL, *fp = topo_system_fingerprint ();
    pin_error_t e = {{0}};
    const char *recorded;
    topo_t *t;
    FILE *f;

    ck_assert_ptr_nonnull (fp);
    ck_assert (asprintf (&in, "%s/in.xml", dir) > 0);
    ck_assert (asprintf (&out, "%s/out.xml", dir) > 0);
    ck_assert_ptr_nonnull (f = fopen (in, "w"));
    for (int i = 0; i < (int)(sizeof (xml_base) / sizeof (xml_base[0])); i++) {
        fprintf (f, "%s\n", xml_base[i]);
        if (i == 2)
            fprintf (f,
                     "    <info name=\"SlurmPinFi\xc2ngerprint\" "
                     "value=\"format=1;host=elsewhere\"/>\n");
    }
    ck_assert_int_eq (fclose (f), 0);
    if (!(t = topo_load (in, TOPO_WHOLE_SYSTEM, &e))) {
        /* the libxml2 reader refuses the byte that is not UTF-8 */
        ck_assert_str_eq (topo_xml_reader (), TOPO_XML_READER_LIBXML2);
        goto out;
    }
    ck_assert_msg (topo_export_xml (t, out, &e) == 0, "%s", e.text);
    topo_destroy (t);
    ck_assert_ptr_nonnull (t = topo_load (out, TOPO_WHOLE_SYSTEM, &e));
    recorded = hwloc_obj_get_info_by_name (hwloc_get_root_obj (t->hw),
                                           TOPO_FINGERPRINT_INFO);
    ck_assert_ptr_nonnull (recorded);
    ck_assert_str_eq (recorded, fp);
    topo_destroy (t);
out:
    remove_tree (dir);
    free (in);
    free (out);
    free (fp);
    free (dir);
}
END_TEST

START_TEST (test_export)
{
    char *dir = make_tmpdir ();
    char *path = NULL, *path2 = NULL;
    pin_error_t e = {{0}};
    topo_t *t, *u;
    char *fp = topo_system_fingerprint ();

    ck_assert (asprintf (&path, "%s/x.xml", dir) > 0);
    ck_assert (asprintf (&path2, "%s/y.xml", dir) > 0);
    t = topo_load (
        "pack:2 l3:1 group:2 [numa] l2:4 core:1 "
        "pu:2(indexes=core:pack)",
        TOPO_WHOLE_SYSTEM,
        NULL);
    ck_assert_ptr_nonnull (t);
    ck_assert_msg (topo_export_xml (t, path, &e) == 0, "%s", e.text);
    u = topo_load (path, TOPO_WHOLE_SYSTEM, &e);
    ck_assert_msg (u != NULL, "%s", e.text);
    ck_assert_uint_eq (topo_npus (u), topo_npus (t));
    for (unsigned i = 0; i < topo_npus (t); i++)
        ck_assert_mem_eq (topo_pu (t, i),
                          topo_pu (u, i),
                          sizeof (struct topo_pu));
    /* export again from the loaded copy: still one fingerprint */
    ck_assert_int_eq (topo_export_xml (u, path2, NULL), 0);
    FILE *f = fopen (path2, "r");
    char line[4096];
    int count = 0;
    ck_assert_ptr_nonnull (f);
    while (fgets (line, sizeof (line), f))
        if (strstr (line, "SlurmPinFingerprint")) {
            count++;
            ck_assert_msg (strstr (line, fp) != NULL, "%s", line);
        }
    fclose (f);
    ck_assert_int_eq (count, 1);
    /* unwritable destination */
    ck_assert_int_eq (topo_export_xml (t, "/nonexistent/dir/x.xml", &e), -1);
    ck_assert_str_eq (e.text,
                      "topology export to '/nonexistent/dir/x.xml': "
                      "No such file or directory");
    topo_destroy (u);
    topo_destroy (t);
    remove_tree (dir);
    free (fp);
    free (path2);
    free (path);
    free (dir);
}
END_TEST

static int count_own (void)
{
    int n = 0;
    while (fixtures_own[n].name)
        n++;
    return n;
}

#define NELEM(a) ((int)(sizeof (a) / sizeof ((a)[0])))

static Suite *topo_suite (void)
{
    Suite *s = suite_create ("libtopo");
    TCase *tc;

    tc = tcase_create ("load");
    tcase_set_timeout (tc, 60);
    tcase_add_loop_test (tc, test_own_fixtures, 0, count_own ());
    tcase_add_loop_test (tc, test_expectations, 0, NELEM (expects));
    tcase_add_test (tc, test_nested_numa);
    tcase_add_test (tc, test_disallowed);
    tcase_add_loop_test (tc, test_load_errors, 0, NELEM (load_errors));
    tcase_add_test (tc, test_load_garbage_xml);
    tcase_add_test (tc, test_load_truncated_xml);
    tcase_add_loop_test (tc, test_load_bad_xml, 0, NELEM (bad_xml));
    tcase_add_test (tc, test_load_nothing_allowed_xml);
    tcase_add_test (tc, test_export_fingerprint_first);
    tcase_add_test (tc, test_system);
    tcase_add_test (tc, test_accessors_out_of_range);
    suite_add_tcase (s, tc);

    tc = tcase_create ("list");
    tcase_add_loop_test (tc, test_list_parse, 0, NELEM (lists));
    tcase_add_test (tc, test_list_messages);
    tcase_add_test (tc, test_list_format);
    suite_add_tcase (s, tc);

    tc = tcase_create ("slurm");
    tcase_add_loop_test (tc, test_slurm_cores, 0, NELEM (slurm_cases));
    tcase_add_loop_test (tc, test_slurm_cores_all, 0, count_own ());
    suite_add_tcase (s, tc);

    tc = tcase_create ("cache");
    tcase_set_timeout (tc, 60);
    tcase_add_test (tc, test_cache_refresh);
    tcase_add_loop_test (tc, test_cache_bad_file, 0, NELEM (bad_caches));
    tcase_add_test (tc, test_cache_truncated);
    tcase_add_loop_test (tc, test_model_bad, 0, NELEM (bad_models));
    tcase_add_test (tc, test_cache_unwritable);
    tcase_add_test (tc, test_cache_unsafe);
    tcase_add_test (tc, test_cache_errors);
    tcase_add_test (tc, test_fingerprint);
    tcase_add_test (tc, test_export);
    suite_add_tcase (s, tc);
    return s;
}

int main (void)
{
    SRunner *sr = srunner_create (topo_suite ());
    int failed;

    srunner_run_all (sr, CK_NORMAL);
    failed = srunner_ntests_failed (sr);
    srunner_free (sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
