/* devices.c - the step's GPUs and NIC (see step.h, pin_step_set_devices)
 *
 * The plugin knows which GPUs Slurm gave the step and, for each, the PCI
 * bus id behind its gres.conf device file or its gres.conf Cores=
 * (gpus.h); here they become the plan's device locality: a bus id found
 * in the topology gives the GPU's local PUs (libtopo's device table), a
 * Cores= list the PUs of those cores.  A GPU with neither is left out of
 * the placement, and the sink says so: the step still runs.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "step_private.h"

/* "; "-joined into the step's device note (verbose output) */
static void note_add (pin_step_t *s, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static void note_add (pin_step_t *s, const char *fmt, ...)
{
    size_t len = strlen (s->dev_note);
    va_list ap;

    if (len + 3 >= sizeof (s->dev_note))
        return;
    if (len)
        len += (size_t)snprintf (s->dev_note + len,
                                 sizeof (s->dev_note) - len,
                                 "; ");
    va_start (ap, fmt);
    vsnprintf (s->dev_note + len, sizeof (s->dev_note) - len, fmt, ap);
    va_end (ap);
}

static void rec_add (char *buf, size_t n, const char *item)
{
    size_t len = strlen (buf);
    if (len + strlen (item) + 2 > n)
        return;
    snprintf (buf + len, n - len, "%s%s", len ? "," : "", item);
}

int pin_step_set_devices (pin_step_t *s,
                          const struct pin_step_devices *d,
                          pin_error_t *errp)
{
    pin_error_t err = {""};
    int nic = -1;

    if (!s || !d)
        return errprintf (errp, "pin_step_set_devices: missing argument");
    if (!s->topo)
        return errprintf (errp, "the step's devices: no topology loaded");
    s->nnear = 0;
    s->near_is_nic = false;
    s->nic_cpus = NULL;
    s->rec_gpus[0] = s->rec_nic[0] = s->dev_note[0] = '\0';
    for (unsigned k = 0; k < d->ngpus && s->nnear < PLACE_MAX_NEAR; k++) {
        const struct pin_step_gpu *g = &d->gpus[k];
        char item[32];
        int i = -1;

        if (g->busid && *g->busid)
            i = topo_dev_find (s->topo, TOPO_DEV_GPU, g->busid, &err);
        if (i >= 0) {
            const struct topo_dev *dev = topo_dev (s->topo, (unsigned)i);
            s->near[s->nnear].cpus = dev->cpuset;
            s->near[s->nnear].numa = dev->numa;
            snprintf (s->near_label[s->nnear],
                      sizeof (s->near_label[0]),
                      "%s",
                      dev->busid);
            s->nnear++;
            rec_add (s->rec_gpus, sizeof (s->rec_gpus), dev->busid);
            steplog (&s->log,
                     STEPLOG_DEBUG,
                     "pin: step %s: GPU %u is %s (%s), near CPUs of NUMA "
                     "domain %d",
                     s->stepname,
                     g->index,
                     dev->busid,
                     dev->name,
                     dev->numa);
            continue;
        }
        if (g->cores && *g->cores) {
            hwloc_bitmap_t set = hwloc_bitmap_alloc ();
            pin_error_t cerr = {""};
            if (!set)
                return errprintf (errp, "out of memory");
            if (topo_slurm_cores_to_cpuset (s->topo, g->cores, set, &cerr) == 0
                && !hwloc_bitmap_iszero (set)) {
                hwloc_bitmap_free (s->near_own[s->nnear]);
                s->near_own[s->nnear] = set;
                s->near[s->nnear].cpus = set;
                s->near[s->nnear].numa = -1;
                snprintf (item, sizeof (item), "gres:%u", g->index);
                snprintf (s->near_label[s->nnear],
                          sizeof (s->near_label[0]),
                          "%s",
                          item);
                s->nnear++;
                rec_add (s->rec_gpus, sizeof (s->rec_gpus), item);
                note_add (s,
                          "GPU %u (%s) located by gres.conf Cores=%.64s",
                          g->index,
                          item,
                          g->cores);
                steplog (&s->log,
                         STEPLOG_INFO,
                         "pin: step %s: GPU %u located by gres.conf "
                         "Cores=%s (%s)",
                         s->stepname,
                         g->index,
                         g->cores,
                         g->busid && *g->busid ? err.text
                                               : "no PCI device known");
                continue;
            }
            hwloc_bitmap_free (set);
            steplog (&s->log,
                     STEPLOG_ERROR,
                     "pin: step %s: GPU %u: gres.conf Cores=%s: %s",
                     s->stepname,
                     g->index,
                     g->cores,
                     cerr.text);
        }
        note_add (s, "GPU %u not located: placed without it", g->index);
        steplog (&s->log,
                 STEPLOG_ERROR,
                 "pin: step %s: GPU %u: not located (%s); its tasks are "
                 "placed without it",
                 s->stepname,
                 g->index,
                 g->busid && *g->busid ? err.text
                                       : "no PCI device and no Cores= in "
                                         "gres.conf");
    }
    if (d->nic) {
        nic = topo_dev_find (s->topo, TOPO_DEV_NIC, d->nic_name, &err);
        if (nic < 0) {
            note_add (s, "%.200s: not placed near a NIC", err.text);
            steplog (&s->log,
                     STEPLOG_ERROR,
                     "pin: step %s: %s; tasks are not placed near a NIC",
                     s->stepname,
                     err.text);
        } else {
            const struct topo_dev *dev = topo_dev (s->topo, (unsigned)nic);
            snprintf (s->rec_nic, sizeof (s->rec_nic), "%s", dev->name);
            if (s->nnear)
                s->nic_cpus = dev->cpuset;
            else {
                s->near[0].cpus = dev->cpuset;
                s->near[0].numa = dev->numa;
                s->nnear = 1;
                s->near_is_nic = true;
            }
        }
    }
    s->near_fallback = d->ngpus && s->rec_gpus[0] ? PLACE_FB_GPU_REMOTE
                                                  : PLACE_FB_NIC_REMOTE;
    return 0;
}

const char *pin_step_task_devices (const pin_step_t *s,
                                   int id,
                                   char *buf,
                                   size_t n)
{
    size_t len = 0;
    const struct place_task *t = pin_step_task (s, id);

    if (n)
        buf[0] = '\0';
    if (!s || !n)
        return buf;
    if (s->nnear && !s->near_is_nic) {
        len += (size_t)snprintf (buf, n, " gpus=");
        bool first = true;
        for (unsigned d = 0; d < s->nnear && len < n; d++) {
            if (t && !((t->near >> d) & 1))
                continue;
            len += (size_t)snprintf (buf + len,
                                     n - len,
                                     "%s%s",
                                     first ? "" : ",",
                                     s->near_label[d]);
            first = false;
        }
    }
    if (s->rec_nic[0] && len < n)
        snprintf (buf + len, n - len, " nic=%s", s->rec_nic);
    return buf;
}

const char *pin_step_gpus_text (const pin_step_t *s)
{
    return s ? s->rec_gpus : "";
}

const char *pin_step_devices_note (const pin_step_t *s)
{
    return s ? s->dev_note : "";
}

const char *pin_step_nic_text (const pin_step_t *s)
{
    return s ? s->rec_nic : "";
}
