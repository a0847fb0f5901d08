/* plan.c - slurm-pin plan: compute a placement without touching anything
 *
 * Loads a topology (this machine, an XML file or a synthetic string),
 * runs the placement library on it and prints, per task, the CPUs and
 * memory nodes it would get: as text, or as one JSON object.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <hwloc.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdopt.h"
#include "libplace/place.h"
#include "libtopo/topo.h"
#include "libutil/errprintf.h"
#include "subcmd.h"

#define NAME "plan"

struct plan_opts {
    const char *topology;
    const char *policy;
    const char *allowed; /* NULL: every PU of the topology */
    const char *busy;    /* NULL: none */
    unsigned ntasks;
    unsigned cpus_per_task;
    uint64_t seed;
    bool json;
    bool strict;      /* refuse what does not fit (as before) */
    const char *gpus; /* --gpus LIST, NULL: none */
    bool nic;         /* --nic[=NAME] given */
    const char *nic_name; /* NULL or "": the default NIC */
};

enum { OPT_STRICT = CMDOPT_LONG, OPT_GPUS, OPT_NIC };

static const struct cmdopt options[] = {
    {"topology",
     't',
     CMDOPT_REQUIRED,
     "SRC",
     "'system' (this machine, the default), an hwloc\n"
     "XML file, or a synthetic description such as\n"
     "\"pack:2 [numa] l3:1 l2:4 core:1 pu:2\"",
     0},
    {"policy",
     'p',
     CMDOPT_REQUIRED,
     "POLICY",
     "required; one of the policies below",
     0},
    {"ntasks", 'n', CMDOPT_REQUIRED, "N", "tasks in the step (default 1)", 0},
    {"cpus-per-task",
     'c',
     CMDOPT_REQUIRED,
     "C",
     "CPUs per task (default 1)",
     0},
    {"allowed",
     'a',
     CMDOPT_REQUIRED,
     "LIST",
     "CPUs the step may use, as OS indexes in kernel\n"
     "list format (\"0-7,16-23\"); default: every CPU\n"
     "of the topology.  CPUs not in the topology are\n"
     "never used.",
     0},
    {"busy",
     'b',
     CMDOPT_REQUIRED,
     "LIST",
     "CPUs held by other steps (default: none)",
     0},
    {"seed",
     's',
     CMDOPT_REQUIRED,
     "S",
     "seed of the random policy (default 0)",
     0},
    {"json",
     'j',
     CMDOPT_NONE,
     NULL,
     "print one JSON object instead of text",
     0},
    {"strict",
     OPT_STRICT,
     CMDOPT_NONE,
     NULL,
     "fail when the step does not fit in the free\n"
     "CPUs (as pin.conf Oversubscribe=refuse and\n"
     "ShareWithSteps=refuse); default: fall back as\n"
     "the plugin does (oversubscribed,\n"
     "shared-with-step)",
     0},
    {"gpus",
     OPT_GPUS,
     CMDOPT_REQUIRED,
     "LIST",
     "the step's GPUs, ',' separated: indexes as\n"
     "hwloc numbers them (the N of cudaN, nvmlN,\n"
     "rsmiN, openclXdN) or PCI bus ids\n"
     "(0000:3b:00.0); tasks go near them",
     0},
    {"nic",
     OPT_NIC,
     CMDOPT_OPTIONAL,
     "NAME",
     "a NIC (--nic: the first OpenFabrics device,\n"
     "else the first network device; --nic=NAME: by\n"
     "name, index or PCI bus id): tasks go near it\n"
     "without --gpus, else it is only checked",
     0},
    CMDOPT_END,
};

static void help_more (FILE *f)
{
    fprintf (f,
             "Policies: %s\n"
             "\n"
             "Text output, one line per task:\n"
             "  task 0: cpus=0-3 mems=0 [gpus=0(0000:3b:00.0)] [nic=mlx5_0]\n"
             "          [fallback=REASON,...]\n"
             "See slurm-pin(1).\n",
             place_policy_list ());
}

static const struct cmdopt_spec spec = {
    .name = NAME,
    .usage =
        "Usage: slurm-pin plan [OPTIONS]\n"
        "\n"
        "Show the CPUs and memory nodes each task of a job step would get "
        "under a\n"
        "policy, computed from a topology.  A dry run: nothing is changed.\n",
    .help_more = help_more,
    .usage_status = 1,
    .tables = {options, NULL},
};

/* A value as shown in a message: '' for the empty string. */
static const char *shown (const char *s)
{
    return *s ? s : "''";
}

/* -n and -c: 1 .. UINT_MAX. */
static int parse_count (const char *flag, const char *s, unsigned *out)
{
    uint64_t v;

    if (cmd_parse_u64 (s, 1, UINT_MAX, &v) < 0) {
        if (errno == ERANGE && s[0] != '0')
            cmd_error (NAME,
                       "%s %s: expected a positive integer "
                       "no larger than %u",
                       flag,
                       shown (s),
                       UINT_MAX);
        else
            cmd_error (NAME,
                       "%s %s: expected a positive integer",
                       flag,
                       shown (s));
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

/* Returns 0 to go on, or -1 with the exit status in *status (--help
 * printed, or a usage error). */
static int parse_args (int argc, char **argv, struct plan_opts *o, int *status)
{
    struct cmdopt_parser p;
    const char *arg;
    int c, rc = -1;

    memset (o, 0, sizeof (*o));
    o->topology = "system";
    o->ntasks = 1;
    o->cpus_per_task = 1;
    *status = 1;
    if (cmdopt_init (&p, &spec, argc, argv) < 0) {
        cmd_error (NAME, "out of memory");
        return -1;
    }
    while ((c = cmdopt_next (&p, &arg)) > 0) {
        switch (c) {
            case 't':
                o->topology = arg;
                break;
            case 'p':
                o->policy = arg;
                break;
            case 'n':
                if (parse_count ("-n", arg, &o->ntasks) < 0)
                    goto out;
                break;
            case 'c':
                if (parse_count ("-c", arg, &o->cpus_per_task) < 0)
                    goto out;
                break;
            case 'a':
                o->allowed = arg;
                break;
            case 'b':
                o->busy = arg;
                break;
            case 's':
                if (cmd_parse_u64 (arg, 0, UINT64_MAX, &o->seed) < 0) {
                    cmd_error (NAME,
                               "--seed=%s: expected an integer "
                               "from 0 to %ju",
                               shown (arg),
                               (uintmax_t)UINT64_MAX);
                    goto out;
                }
                break;
            case 'j':
                o->json = true;
                break;
            case OPT_STRICT:
                o->strict = true;
                break;
            case OPT_GPUS:
                o->gpus = arg;
                break;
            case OPT_NIC:
                o->nic = true;
                o->nic_name = arg;
                break;
        }
    }
    if (c < 0) {
        *status = p.status;
        goto out;
    }
    if (cmdopt_no_operands (&p) < 0)
        goto out;
    if (!o->policy) {
        cmd_error (NAME, "missing --policy; known: %s", place_policy_list ());
        goto out;
    }
    rc = 0;
out:
    cmdopt_fini (&p);
    return rc;
}

/* Parse a CPU list option.  PUs that are not in the topology stay in the
 * set: place_compute() never uses them. */
static hwloc_bitmap_t parse_cpus (const char *flag, const char *list)
{
    pin_error_t err = {""};
    hwloc_bitmap_t set;

    if (!(set = hwloc_bitmap_alloc ())) {
        cmd_error (NAME, "%s", strerror (errno));
        return NULL;
    }
    if (topo_list_parse (list, set, &err) < 0) {
        cmd_error (NAME, "%s: %s", flag, err.text);
        hwloc_bitmap_free (set);
        return NULL;
    }
    return set;
}

/* The devices of a plan: GPU positions in the topology (gpu[d] is the
 * topo_dev position of place_request.near[d]) and the NIC's (-1: none). */
struct plan_devs {
    unsigned ngpus;
    int gpu[PLACE_MAX_NEAR];
    int nic;
};

/* "0(0000:3b:00.0),1(0000:5e:00.0)" for the GPUs of mask */
static void gpus_text (const topo_t *t,
                       const struct plan_devs *dv,
                       uint64_t mask,
                       char *buf,
                       size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned d = 0; d < dv->ngpus && len < n; d++) {
        if (!((mask >> d) & 1))
            continue;
        const struct topo_dev *g = topo_dev (t, (unsigned)dv->gpu[d]);
        len += (size_t)snprintf (buf + len,
                                 n - len,
                                 "%s%u(%s)",
                                 len ? "," : "",
                                 g->index,
                                 g->busid[0] ? g->busid : g->name);
    }
}

static int print_text (const topo_t *t,
                       const struct plan_devs *dv,
                       const struct place_plan *plan,
                       FILE *f)
{
    for (unsigned i = 0; i < plan->ntasks; i++) {
        const struct place_task *task = &plan->tasks[i];
        char *cpus = topo_list_format (task->cpus);
        char *mems = topo_list_format (task->mems);
        char fb[128];

        if (!cpus || !mems) {
            free (cpus);
            free (mems);
            cmd_error (NAME, "cannot format the plan: out of memory");
            return -1;
        }
        fprintf (f, "task %u: cpus=%s mems=%s", i, cpus, mems);
        if (dv->ngpus) {
            char g[1024];
            gpus_text (t, dv, task->near, g, sizeof (g));
            fprintf (f, " gpus=%s", g);
        }
        if (dv->nic >= 0)
            fprintf (f, " nic=%s", topo_dev (t, (unsigned)dv->nic)->name);
        if (task->fallback)
            fprintf (f,
                     " fallback=%s",
                     place_fallback_string (task->fallback, fb, sizeof (fb)));
        fputc ('\n', f);
        free (cpus);
        free (mems);
    }
    return 0;
}

static json_object *json_set (hwloc_const_bitmap_t set)
{
    char *s = topo_list_format (set);
    json_object *o = s ? json_object_new_string (s) : NULL;
    free (s);
    return o;
}

static json_object *dev_json (const struct topo_dev *d)
{
    json_object *o = json_object_new_object ();
    if (!o || cmd_json_add (o, "index", json_object_new_int64 (d->index), false) < 0
        || cmd_json_add (o, "name", json_object_new_string (d->name), false) < 0
        || cmd_json_add (o,
                         "pci_busid",
                         d->busid[0] ? json_object_new_string (d->busid)
                                     : NULL,
                         true)
               < 0
        || cmd_json_add (o, "cpus", json_set (d->cpuset), false) < 0) {
        json_object_put (o);
        return NULL;
    }
    return o;
}

static json_object *plan_to_json (const topo_t *t,
                                  const struct plan_devs *dv,
                                  const struct place_plan *plan)
{
    json_object *root = json_object_new_object ();
    json_object *tasks = json_object_new_array ();

    if (!root || !tasks)
        goto nomem;
    if (cmd_json_add (root,
                      "policy",
                      json_object_new_string (
                          place_policy_name (plan->policy)),
                      false)
            < 0
        || cmd_json_add (root,
                         "ntasks",
                         json_object_new_int64 (plan->ntasks),
                         false)
               < 0
        || cmd_json_add (root,
                         "cpus_per_task",
                         json_object_new_int64 (plan->cpus_per_task),
                         false)
               < 0)
        goto nomem;
    for (unsigned i = 0; i < plan->ntasks; i++) {
        const struct place_task *task = &plan->tasks[i];
        json_object *tj = json_object_new_object ();
        json_object *fbj = NULL;
        char fb[128];

        if (!tj || json_object_array_add (tasks, tj) < 0) {
            json_object_put (tj);
            goto nomem;
        }
        if (task->fallback) {
            place_fallback_string (task->fallback, fb, sizeof (fb));
            if (!(fbj = json_object_new_string (fb)))
                goto nomem;
        }
        if (cmd_json_add (tj, "task", json_object_new_int64 (i), false) < 0
            || cmd_json_add (tj, "cpus", json_set (task->cpus), false) < 0
            || cmd_json_add (tj, "mems", json_set (task->mems), false) < 0
            || cmd_json_add (tj, "fallback", fbj, true) < 0)
            goto nomem;
        if (dv->ngpus) {
            json_object *ga = json_object_new_array ();
            if (!ga || json_object_object_add (tj, "gpus", ga) < 0) {
                json_object_put (ga);
                goto nomem;
            }
            for (unsigned d = 0; d < dv->ngpus; d++)
                if ((task->near >> d) & 1) {
                    json_object *g =
                        dev_json (topo_dev (t, (unsigned)dv->gpu[d]));
                    if (!g || json_object_array_add (ga, g) < 0) {
                        json_object_put (g);
                        goto nomem;
                    }
                }
        }
        if (dv->nic >= 0
            && cmd_json_add (tj,
                             "nic",
                             dev_json (topo_dev (t, (unsigned)dv->nic)),
                             false)
                   < 0)
            goto nomem;
    }
    if (json_object_object_add (root, "tasks", tasks) < 0)
        goto nomem;
    return root;
nomem:
    json_object_put (tasks);
    json_object_put (root);
    errno = ENOMEM;
    return NULL;
}

/* --gpus and --nic, resolved on t: near[] gets the GPUs (or the NIC when
 * there are no GPUs). */
static int parse_devs (const topo_t *t,
                       const struct plan_opts *o,
                       struct plan_devs *dv,
                       struct place_near *near)
{
    pin_error_t err = {""};

    if (o->gpus) {
        char buf[1024], *save = NULL;
        if (!*o->gpus || strlen (o->gpus) >= sizeof (buf)) {
            cmd_error (NAME,
                       "--gpus=%s: expected GPU indexes or PCI bus ids, ','"
                       " separated",
                       shown (o->gpus));
            return -1;
        }
        strcpy (buf, o->gpus);
        for (char *g = strtok_r (buf, ",", &save); g;
             g = strtok_r (NULL, ",", &save)) {
            int i = topo_dev_find (t, TOPO_DEV_GPU, g, &err);
            if (i < 0) {
                cmd_error (NAME, "--gpus: %s", err.text);
                return -1;
            }
            for (unsigned k = 0; k < dv->ngpus; k++)
                if (dv->gpu[k] == i) {
                    cmd_error (NAME, "--gpus=%s: GPU '%s' given twice", o->gpus, g);
                    return -1;
                }
            if (dv->ngpus == PLACE_MAX_NEAR) {
                cmd_error (NAME, "--gpus: at most %d GPUs", PLACE_MAX_NEAR);
                return -1;
            }
            near[dv->ngpus].cpus = topo_dev (t, (unsigned)i)->cpuset;
            near[dv->ngpus].numa = topo_dev (t, (unsigned)i)->numa;
            dv->gpu[dv->ngpus++] = i;
        }
        if (!dv->ngpus) {
            cmd_error (NAME, "--gpus=%s: no GPU given", o->gpus);
            return -1;
        }
    }
    if (o->nic) {
        int i = topo_dev_find (t, TOPO_DEV_NIC, o->nic_name, &err);
        if (i < 0) {
            cmd_error (NAME, "--nic: %s", err.text);
            return -1;
        }
        dv->nic = i;
        if (!dv->ngpus) {
            near[0].cpus = topo_dev (t, (unsigned)i)->cpuset;
            near[0].numa = topo_dev (t, (unsigned)i)->numa;
        }
    }
    return 0;
}

int cmd_plan (int argc, char **argv)
{
    struct plan_opts o;
    struct place_request req;
    struct place_plan *plan = NULL;
    pin_error_t err = {""};
    enum place_policy policy;
    topo_t *t = NULL;
    hwloc_bitmap_t allowed = NULL;
    hwloc_bitmap_t busy = NULL;
    struct plan_devs dv = {.nic = -1};
    struct place_near near[PLACE_MAX_NEAR];
    int rc = 1;

    if (parse_args (argc, argv, &o, &rc) < 0)
        return rc;
    if (place_policy_parse (o.policy, &policy, &err) < 0) {
        cmd_error (NAME,
                   "--policy=%s: unknown policy; known: %s",
                   shown (o.policy),
                   place_policy_list ());
        return 1;
    }
    if (!*o.topology) {
        cmd_error (NAME,
                   "--topology='': empty; expected 'system', an "
                   "hwloc XML file or a synthetic description");
        return 1;
    }
    if (!(t = topo_load (o.topology, 0, &err))) {
        cmd_error (NAME,
                   "%s; --topology takes 'system', an hwloc XML "
                   "file or a synthetic description",
                   err.text);
        return 1;
    }
    if (o.allowed) {
        if (!(allowed = parse_cpus ("--allowed", o.allowed)))
            goto done;
        if (!hwloc_bitmap_intersects (allowed, topo_cpuset (t))) {
            char *all = topo_list_format (topo_cpuset (t));
            cmd_error (NAME,
                       "--allowed=%s: no CPU of the topology is in "
                       "this list; the topology has %s",
                       shown (o.allowed),
                       all ? all : "?");
            free (all);
            goto done;
        }
    }
    if (o.busy && !(busy = parse_cpus ("--busy", o.busy)))
        goto done;
    memset (&req, 0, sizeof (req));
    req.policy = policy;
    req.ntasks = o.ntasks;
    req.cpus_per_task = o.cpus_per_task;
    req.allowed = allowed;
    req.busy = busy;
    req.seed = o.seed;
    if (o.strict)
        req.refuse = PLACE_REFUSE_SHARE | PLACE_REFUSE_OVERSUBSCRIBE;
    if (parse_devs (t, &o, &dv, near) < 0)
        goto done;
    if (dv.ngpus) {
        req.nnear = dv.ngpus;
        req.near = near;
        req.near_fallback = PLACE_FB_GPU_REMOTE;
    } else if (dv.nic >= 0) {
        req.nnear = 1;
        req.near = near;
        req.near_fallback = PLACE_FB_NIC_REMOTE;
    }
    if (!(plan = place_compute (t, &req, &err))) {
        cmd_error (NAME, "%s", err.text);
        goto done;
    }
    if (dv.nic >= 0 && dv.ngpus)
        place_mark_near (plan,
                         topo_dev (t, (unsigned)dv.nic)->cpuset,
                         PLACE_FB_NIC_REMOTE);
    if ((o.json ? cmd_print_json (NAME, plan_to_json (t, &dv, plan), stdout)
                : print_text (t, &dv, plan, stdout))
            < 0
        || cmd_flush_stdout (NAME) < 0)
        goto done;
    rc = 0;
done:
    place_plan_destroy (plan);
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (allowed);
    topo_destroy (t);
    return rc;
}
