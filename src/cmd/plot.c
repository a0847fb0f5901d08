/* plot.c - slurm-pin plot: draw a recorded profile
 *
 *   slurm-pin plot (FILE | JOB[.STEP]) --kind KIND -o OUT.png|OUT.svg
 *                  [--size WxH] [--title T] [--dir DIR] [--node NODE]
 *
 * The data of each kind comes from libprof/series.c, the drawing from
 * plotdraw.c (PLplot).  slurm-pin-plot(1) describes the command,
 * doc/profiling-guide.md how to read each chart.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmdopt.h"
#include "libprof/series.h"
#include "libutil/safeio.h"
#include "plotdraw.h"
#include "profsrc.h"
#include "subcmd.h"

#define NAME "plot"

#define WIDTH_MIN 320
#define WIDTH_MAX 8192
#define HEIGHT_MIN 200
#define HEIGHT_MAX 8192
#define WIDTH_DEFAULT 1200
#define HEIGHT_DEFAULT 700

struct opts {
    const char *kind_name, *out, *size, *title, *dir, *node, *filter;
    enum prof_chart kind;
    int width, height;
    const char *device;
    bool force;
};

#define STR_(x) #x
#define STR(x) STR_ (x)

static const struct cmdopt options[] =
    {
        CMDOPT_HEADING ("Options:"),
        {"kind", 'k', CMDOPT_REQUIRED, "KIND", "what to draw (required)", 0},
        {"output",
         'o',
         CMDOPT_REQUIRED,
         "OUT",
         "the image; its extension chooses the format:\n"
         ".png (PLplot's pngcairo) or .svg (PLplot's svg);\n"
         "never written through a symbolic link",
         0},
        {"force",
         'f',
         CMDOPT_NONE,
         NULL,
         "replace OUT if it exists (a new file is renamed\n"
         "over it)",
         0},
        {"size",
         's',
         CMDOPT_REQUIRED,
         "WxH",
         "the image's size in pixels (default " STR (WIDTH_DEFAULT) "x" STR (
             HEIGHT_DEFAULT) ";\n"
                             "width " STR (WIDTH_MIN) " to " STR (WIDTH_MAX) ", height " STR (
                                 HEIGHT_MIN) " to " STR (HEIGHT_MAX) ")",
         0},
        {"title",
         't',
         CMDOPT_REQUIRED,
         "TEXT",
         "the title (default: what is drawn, of which job)",
         0},
        {"dir",
         'd',
         CMDOPT_REQUIRED,
         "DIR",
         "where JOB[.STEP]'s profiles are (default: pin.conf's\n"
         "ProfileDir)",
         0},
        {"node",
         'N',
         CMDOPT_REQUIRED,
         "NODE",
         "the node whose profile of JOB[.STEP] to draw, when\n"
         "the step ran on several here",
         0},
        {"filter",
         'F',
         CMDOPT_REQUIRED,
         "COMMAND",
         "gantt: the processes of COMMAND only (its name as\n"
         "the kernel has it: 15 characters at most)",
         0},
        CMDOPT_END,
};

static const struct cmdopt_spec spec = {
    .name = NAME,
    .usage =
        "Usage: slurm-pin plot FILE|JOB[.STEP] --kind KIND -o "
        "OUT.png|OUT.svg\n"
        "                      [--force] [--size WxH] [--title TEXT] [--dir "
        "DIR] [--node NODE]\n"
        "                      [--filter COMMAND]\n"
        "\n"
        "Draw a profile as a PNG or SVG image: a file recorded by 'slurm-pin\n"
        "profile --record', or the profile of a job step run with "
        "--pin-profile.\n"
        "\n"
        "Kinds:\n"
        "  cpu     use of each CPU sampled (%), the step's cgroup, "
        "confinement;\n"
        "          above 16 CPUs a heat map (CPU x time)\n"
        "  gantt   one bar per process, from its fork to its exit, by "
        "command;\n"
        "          above 200 processes one lane per command, shaded by "
        "density\n"
        "  forks   process forks, thread creations, execs and exits per "
        "second\n"
        "  ctxsw   voluntary and involuntary context switches per second\n"
        "  states  processes and threads in states R, S, D, Z over time\n"
        "  memory  summed RSS and PSS, the step cgroup's memory and "
        "limit\n",
    .footer = "See slurm-pin-plot(1) and doc/profiling-guide.md.\n",
    .usage_status = 1,
    .tables = {options, NULL},
};

/* "1200x700" within the bounds, or -1. */
static int parse_size (const char *s, int *w, int *h)
{
    char buf[32], *x;
    uint64_t vw, vh;

    if (strlen (s) >= sizeof (buf))
        return -1;
    strcpy (buf, s);
    if (!(x = strchr (buf, 'x')))
        return -1;
    *x++ = '\0';
    if (cmd_parse_u64 (buf, WIDTH_MIN, WIDTH_MAX, &vw) < 0
        || cmd_parse_u64 (x, HEIGHT_MIN, HEIGHT_MAX, &vh) < 0)
        return -1;
    *w = (int)vw;
    *h = (int)vh;
    return 0;
}

/* The PLplot device for the extension of `out`, or NULL. */
static const char *device_of (const char *out)
{
    size_t n = strlen (out);

    if (n > 4 && !strcasecmp (out + n - 4, ".png"))
        return "pngcairo";
    if (n > 4 && !strcasecmp (out + n - 4, ".svg"))
        return "svg";
    return NULL;
}

/* 0 with the operands in p; -1 with the exit status in *status. */
static int parse_opts (struct cmdopt_parser *p,
                       int argc,
                       char **argv,
                       struct opts *o,
                       int *status)
{
    const char *arg;
    int c;

    memset (o, 0, sizeof (*o));
    o->width = WIDTH_DEFAULT;
    o->height = HEIGHT_DEFAULT;
    *status = 1;
    if (cmdopt_init (p, &spec, argc, argv) < 0) {
        cmd_error (NAME, "out of memory");
        return -1;
    }
    while ((c = cmdopt_next (p, &arg)) > 0) {
        switch (c) {
            case 'k':
                o->kind_name = arg;
                if (prof_chart_parse (arg, &o->kind) < 0) {
                    cmd_error (NAME,
                               "--kind=%s: unknown kind; known: %s",
                               arg,
                               PROF_CHART_NAMES);
                    return -1;
                }
                break;
            case 'o':
                o->out = arg;
                if (!(o->device = device_of (arg))) {
                    cmd_error (NAME,
                               "-o %s: unknown extension; known: .png, "
                               ".svg",
                               arg);
                    return -1;
                }
                break;
            case 'f':
                o->force = true;
                break;
            case 's':
                o->size = arg;
                if (parse_size (arg, &o->width, &o->height) < 0) {
                    cmd_error (NAME,
                               "--size=%s: expected WIDTHxHEIGHT in "
                               "pixels, width %d to %d, height %d to %d "
                               "(e.g. %dx%d)",
                               arg,
                               WIDTH_MIN,
                               WIDTH_MAX,
                               HEIGHT_MIN,
                               HEIGHT_MAX,
                               WIDTH_DEFAULT,
                               HEIGHT_DEFAULT);
                    return -1;
                }
                break;
            case 't':
                o->title = arg;
                break;
            case 'd':
                o->dir = arg;
                break;
            case 'N':
                o->node = arg;
                break;
            case 'F':
                o->filter = arg;
                break;
        }
    }
    if (c < 0 || cmdopt_one_operand (p, "profile FILE or JOB[.STEP]") < 0) {
        *status = p->status;
        return -1;
    }
    return 0;
}

/* Map the positional argument to the path of one profile file: a FILE
 * as it is (reading it says when it is not a profile), or JOB[.STEP]
 * through profsrc.h (ProfileDir, owner-only files): it must name exactly
 * one profile, else the step or node to give is said.  0 with the path
 * in path[n]; -1 after printing one line. */
static int plot_resolve (const struct opts *o,
                         const char *arg,
                         char *path,
                         size_t n)
{
    struct profdir_entry *v;
    size_t nv, match = 0, which = 0;
    bool is_job;
    char list[256] = "";
    size_t off = 0;

    if (!*arg) {
        cmd_error (NAME, "an empty profile name; give a FILE or JOB[.STEP]");
        return -1;
    }
    if (profsrc_resolve (NAME, arg, o->dir, &v, &nv, &is_job) < 0)
        return -1;
    for (size_t i = 0; i < nv; i++) {
        int len;
        if (o->node && strcmp (o->node, v[i].node) != 0)
            continue;
        if (match++ == 0)
            which = i;
        len = snprintf (list + off,
                        sizeof (list) - off,
                        "%s%u.%s on %s",
                        off ? ", " : "",
                        v[i].job,
                        v[i].step,
                        v[i].node);
        if (len > 0 && (size_t)len < sizeof (list) - off)
            off += (size_t)len;
    }
    if (is_job && match != 1) {
        if (match == 0)
            cmd_error (NAME,
                       "--node=%s: no profile of %s on that node",
                       o->node,
                       arg);
        else
            cmd_error (NAME,
                       "%s %s has %zu profiles (%s); name one with "
                       "JOB.STEP and --node",
                       strchr (arg, '.') ? "step" : "job",
                       arg,
                       match,
                       list);
        profdir_free (v, nv);
        return -1;
    }
    if (strlen (v[which].path) >= n) {
        cmd_error (NAME,
                   "%.64s...: path too long (more than %zu bytes)",
                   v[which].path,
                   n - 1);
        profdir_free (v, nv);
        return -1;
    }
    strcpy (path, v[which].path);
    profdir_free (v, nv);
    return 0;
}

static const char *const chart_titles[PROF_CHART_COUNT] = {
    [PROF_CHART_CPU] = "Use of each CPU",
    [PROF_CHART_GANTT] = "Process lifetimes",
    [PROF_CHART_FORKS] = "Process events per second",
    [PROF_CHART_CTXSW] = "Context switches per second",
    [PROF_CHART_STATES] = "Processes and threads by state",
    [PROF_CHART_MEMORY] = "Memory of the processes",
};

/* "job 12.0 on node3, policy numa-local, CPUs 0-3", or the file's name
 * when the header names no job. */
static void describe (const struct prof_chart_data *d,
                      const char *path,
                      char *buf,
                      size_t n)
{
    const char *base = strrchr (path, '/');
    size_t len = 0;

#define APPEND(...)                                                   \
    do {                                                              \
        int rc_ = snprintf (buf + len, n - len, __VA_ARGS__);         \
        if (rc_ > 0)                                                  \
            len += (size_t)rc_ < n - len ? (size_t)rc_ : n - len - 1; \
    } while (0)

    buf[0] = '\0';
    if (d->job[0])
        APPEND ("job %s%s%s", d->job, d->step[0] ? "." : "", d->step);
    else
        APPEND ("%s", base ? base + 1 : path);
    if (d->node[0])
        APPEND (" on %s", d->node);
    if (d->policy[0])
        APPEND (", policy %s", d->policy);
    if (d->cpus[0])
        APPEND (", CPUs %s", d->cpus);
    if (d->kind == PROF_CHART_FORKS)
        APPEND (", bins of %g s", d->bin_s);
    if (d->kind == PROF_CHART_CTXSW)
        APPEND (", sums over the live tasks of each sample");
    if (d->kind == PROF_CHART_GANTT && d->heat.rows)
        APPEND (", %zu processes in lanes by command", d->nbars);
#undef APPEND
}

/* The kinds this profile has data for ("gantt, forks"), after `kind`
 * had none. */
static void kinds_with_data (const char *path,
                             enum prof_chart kind,
                             char *buf,
                             size_t n)
{
    size_t len = 0;

    buf[0] = '\0';
    for (unsigned k = 0; k < PROF_CHART_COUNT && len < n; k++) {
        struct prof_chart_data d;
        int rc;
        if (k == kind)
            continue;
        rc = prof_chart_read (path, (enum prof_chart)k, &d, NULL);
        prof_chart_free (&d);
        if (rc == 0) {
            rc = snprintf (buf + len,
                           n - len,
                           "%s%s",
                           len ? ", " : "",
                           prof_chart_name ((enum prof_chart)k));
            if (rc > 0)
                len += (size_t)rc;
        }
    }
    if (!buf[0])
        snprintf (buf, n, "none");
}

/* Write the image to `out`, as root may be asked to in a directory a user
 * can write (libutil/safeio.h): never through a symbolic link and never
 * into an existing file: without `force` an existing OUT is an error;
 * with it, the image goes to a new file beside OUT that is then renamed
 * over it, so that a link planted at OUT is replaced, not followed, and
 * no other file is truncated.  A user's link to a directory on the way is
 * followed only into that user's own directory. */
static int write_file (const char *out,
                       const char *buf,
                       size_t len,
                       bool force)
{
    pin_error_t e = {""};

    if (safeout_write_file (out, buf, len, force, &e) < 0) {
        if (errno == EEXIST && !force)
            cmd_error (NAME, "%s: exists; give --force to replace it", out);
        else
            cmd_error (NAME, "%s", e.text);
        return -1;
    }
    return 0;
}

/* A command name as the kernel keeps it: 1 to 15 printable bytes. */
static bool filter_ok (const char *s)
{
    size_t n = strlen (s);

    if (n < 1 || n > 15)
        return false;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return false;
    return true;
}

int cmd_plot (int argc, char **argv)
{
    struct opts o;
    struct prof_chart_data d;
    struct plot_opts po;
    pin_error_t e = {""};
    char path[4096], sub[512], title[256];
    char *buf = NULL;
    size_t len = 0;
    struct cmdopt_parser p;
    const char *src = NULL; /* the operand, in argv */
    int rc, status;
    bool ok = parse_opts (&p, argc, argv, &o, &status) == 0;

    if (ok)
        src = p.operands[0];
    cmdopt_fini (&p);
    if (!ok)
        return status;
    if (!o.kind_name) {
        cmd_error (NAME, "missing --kind; known: %s", PROF_CHART_NAMES);
        return 1;
    }
    if (!o.out) {
        cmd_error (NAME, "missing -o OUT.png or -o OUT.svg");
        return 1;
    }
    if (!plot_have_device (o.device)) {
        cmd_error (NAME,
                   "-o %s: PLplot's %s device is not installed "
                   "(Debian package: %s)",
                   o.out,
                   o.device,
                   !strcmp (o.device, "svg") ? "libplplot17"
                                             : "plplot-driver-cairo");
        return 1;
    }
    if (o.filter && o.kind != PROF_CHART_GANTT) {
        cmd_error (NAME,
                   "--filter=%s: only --kind gantt draws processes by "
                   "command, not --kind %s",
                   cmd_text (o.filter),
                   o.kind_name);
        return 1;
    }
    if (o.filter && !filter_ok (o.filter)) {
        cmd_error (NAME,
                   "--filter=%s: a command name is 1 to 15 printable "
                   "characters (the kernel's comm)",
                   cmd_text (o.filter));
        return 1;
    }
    if (plot_resolve (&o, src, path, sizeof (path)) < 0)
        return 1;
    if (prof_chart_read_filter (path, o.kind, o.filter, &d, &e) < 0) {
        int err = errno;
        prof_chart_free (&d);
        if (err == ENODATA && !o.filter) {
            char kinds[128];
            kinds_with_data (path, o.kind, kinds, sizeof (kinds));
            cmd_error (NAME,
                       "%s; this profile has data for: %s",
                       e.text,
                       kinds);
        } else {
            cmd_error (NAME, "%s", e.text);
        }
        return 1;
    }
    describe (&d, path, sub, sizeof (sub));
    snprintf (title,
              sizeof (title),
              "%s",
              o.title ? o.title : chart_titles[o.kind]);
    po.device = o.device;
    po.width = o.width;
    po.height = o.height;
    po.title = title;
    po.subtitle = sub;
    rc = plot_render (&d, &po, &buf, &len, &e);
    prof_chart_free (&d);
    if (rc < 0) {
        cmd_error (NAME, "%s: %s", o.out, e.text);
        return 1;
    }
    rc = write_file (o.out, buf, len, o.force);
    free (buf);
    return rc < 0 ? 1 : 0;
}
