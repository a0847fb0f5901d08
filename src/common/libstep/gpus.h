/* gpus.h - which GPUs a step holds, and which PCI devices they are
 *
 * Pure helpers for pin.so (doc/policies.md, "GPUs and NICs"; the rules
 * in doc/admin-guide.md, "GPUs and NICs"): the GPU indexes Slurm gave the
 * job on this node (slurmctld's gres_detail_str) and the step
 * (SLURM_STEP_GPUS, which slurmstepd's gres/gpu plugin sets or unsets in
 * every step), gres.conf's GPU device files of this node in Slurm's
 * index order, and the PCI bus id behind a device file.  Nothing here
 * reads the job's environment or logs; every error is one line in errp.
 */
#ifndef PIN_STEP_GPUS_H
#define PIN_STEP_GPUS_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

#include "libutil/errprintf.h"

/* Most GPU devices of one node kept from gres.conf. */
#define GPUS_MAX 64
/* Largest gres.conf read. */
#define GPUS_CONF_MAX (1u << 20)

struct gpus_dev {
    char file[256];  /* the device file, "" when the line has no File= */
    char cores[256]; /* its line's Cores= (Slurm core ids), "" if none */
};

struct gpus_conf {
    unsigned n;      /* devices: index 0 .. n-1 */
    struct gpus_dev dev[GPUS_MAX];
    bool autodetect; /* an AutoDetect= other than off was seen */
};

/* Does NodeName= expression `expr` ("node[01-04],login1") name this
 * node?  The plugin passes libslurm's hostlist; tests their own. */
typedef bool (*gpus_node_match_f) (const char *expr, void *arg);

/* The Name=gpu devices gres.conf text gives this node, in the order of
 * the file (a File= with one bracket range, "/dev/nvidia[0-3]", is one
 * device per number, each with the line's Cores=): Slurm's GPU index
 * order with AutoDetect=off.  Lines of other GRES, of other nodes
 * (NodeName= that `match` rejects) and comments are skipped.  -1 with
 * errp naming the line for a malformed one (a bracket that does not
 * close, a range of more than GPUS_MAX, an over-long value); `out` is then
 * unusable. */
int gpus_conf_parse (const char *text,
                     gpus_node_match_f match,
                     void *arg,
                     struct gpus_conf *out,
                     pin_error_t *errp);

/* gres.conf's "Include PATH" lines: read(PATH) returns the file's text
 * (malloc'd; the caller's checks: whose file, how large, where a relative
 * PATH lies) or NULL with errp.  Included text is parsed in place of the
 * line, to GPUS_INCLUDE_DEPTH levels. */
#define GPUS_INCLUDE_DEPTH 4
struct gpus_include {
    char *(*read) (const char *path, void *arg, pin_error_t *errp);
    void *arg;
};

/* gpus_conf_parse, with Include lines read by `inc` (NULL: an Include
 * line is an error, as in gpus_conf_parse).  Errors name the file and
 * line: "gres.conf line 3: ...", "/etc/slurm/gres.d/n1.conf line 2: ...". */
int gpus_conf_parse_inc (const char *text,
                         const struct gpus_include *inc,
                         gpus_node_match_f match,
                         void *arg,
                         struct gpus_conf *out,
                         pin_error_t *errp);

/* The GPU indexes of slurmctld's gres_detail_str for this node
 * ("gpu:2(IDX:0-1)", "gpu:a100:1(IDX:3),shard:...", "gpu(CNT:0)",
 * "N/A"), OR-ed into idx.  Other GRES are ignored; a gpu entry without
 * an IDX list adds nothing.  -1 with errp if an IDX list is malformed. */
int gpus_detail_parse (const char *detail,
                       hwloc_bitmap_t idx,
                       pin_error_t *errp);

/* The PCI bus id ("0000:3b:00.0") of GPU device file `file`: its char
 * device's ROOT/sys/dev/char/MAJ:MIN/device link, or for NVIDIA's device
 * files, which the driver does not register with sysfs, the
 * ROOT/proc/driver/nvidia/gpus/BUSID/information whose "Device Minor" is
 * the file's minor.  `root` "" or NULL: "/".  *via names the source
 * ("sysfs", "nvidia").  -1 with errp (ENOENT where neither knows it). */
int gpus_device_busid (const char *root,
                       const char *file,
                       char *busid,
                       size_t n,
                       const char **via,
                       pin_error_t *errp);

#endif /* !PIN_STEP_GPUS_H */
