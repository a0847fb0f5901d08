/* conf.h - one parser for pin.conf and plugstack.conf arguments
 *
 * Every component (SPANK plugin, job_submit plugin, slurm-pin command)
 * reads site settings through this parser.  pin.conf is a slurm.conf-like
 * file: `Key=Value` per line, keys case-insensitive, `#` starts a comment,
 * blank lines ignored.  plugstack.conf arguments use the same keys
 * (`pin.so conf=/etc/slurm/pin.conf default_policy=numa-local`); keys
 * there are matched case-insensitively with '_' ignored, so
 * `default_policy` and `DefaultPolicy` are the same key.  Arguments given
 * in plugstack.conf override pin.conf.
 *
 * Errors are one line with the file and line number:
 *   "/etc/slurm/pin.conf:12: DefaultPolicy=numa-locl: unknown policy ..."
 * Lines are read into a bounded buffer (PIN_CONF_LINE_MAX): a longer line,
 * a NUL byte or a control character other than TAB is an error, never a
 * silent truncation.  '#' starts a comment anywhere on a line, so values
 * cannot contain '#'.  Paths must be absolute, without '..' components.
 * Every load works on a copy: on failure `conf` is left as it was.
 * The full reference is doc/pin.conf.5.
 */
#ifndef PIN_CONF_H
#define PIN_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "libutil/errprintf.h"

#define PIN_CONF_DEFAULT_PATH "/etc/slurm/pin.conf"
#define PIN_CONF_DEFAULT_TOPOLOGY_CACHE "/var/cache/slurm-pin/topology.xml"
#define PIN_CONF_DEFAULT_STATE_DIR "/run/slurm-pin"
#ifndef PIN_BINDIR
#define PIN_BINDIR "/usr/local/bin"
#endif
#define PIN_CONF_DEFAULT_DELIVER_COMMAND PIN_BINDIR "/slurm-pin"
#define PIN_CONF_DEFAULT_JOURNAL_DIR "/var/lib/slurm-pin/journal"
#define PIN_CONF_DEFAULT_PROFILE_DIR "/var/lib/slurm-pin/profile"
/* Profile= / --pin-profile: the sampling interval of `yes` (or of the
 * option given without a value), and the range of an interval. */
#define PIN_CONF_PROFILE_DEFAULT_US 1000000LL
#define PIN_CONF_PROFILE_MIN_US 100000LL
#define PIN_CONF_PROFILE_MAX_US 3600000000LL

/* A pin.conf line may hold at most PIN_CONF_LINE_MAX - 1 characters. */
#define PIN_CONF_LINE_MAX 8192

/* allowed_policies for AllowedPolicies=all: every policy, present or
 * future. */
#define PIN_CONF_ALLOW_ALL (~0u)

/* PartitionName= lines (job_submit_pin.so rules, doc/job-submit.md). */
#define PIN_CONF_PARTITIONS_MAX 64
#define PIN_CONF_PARTITION_NAME_MAX 64 /* name + NUL */
/* NoneUsers= / NoneAccounts= text, comma-separated names. */
#define PIN_CONF_NAMES_MAX 1024

/* Which keys a PartitionName= line set (pin_conf_partition.set).  Keys a
 * line leaves out inherit the global value, so a per-partition key is
 * added by one bit, one field of that name in struct pin_conf_partition
 * and struct pin_conf_rules (and struct pin_conf unless only partitions
 * have it) and the key's descriptor in conf.c's keys[]. */
enum {
    PIN_CONF_PART_DEFAULT = 1,          /* DefaultPolicy= */
    PIN_CONF_PART_ALLOWED = 2,          /* AllowedPolicies= */
    PIN_CONF_PART_FORCED = 4,           /* ForcedPolicy= */
    PIN_CONF_PART_DYN_OVERUSE = 8,      /* DynamicOveruse= */
    PIN_CONF_PART_DYN_GRACE = 16,       /* DynamicGrace= */
    PIN_CONF_PART_DYN_INTERVAL = 32,    /* DynamicInterval= */
    PIN_CONF_PART_DYN_CONFINE = 64,     /* DynamicConfine= */
    PIN_CONF_PART_SPREAD_SOCKETS = 128, /* SpreadSockets= */
    PIN_CONF_PART_PROFILE = 256,        /* Profile= */
    PIN_CONF_PART_GPU_BINDING = 512,    /* GpuBinding= */
    PIN_CONF_PART_EXPERIMENT = 1024,    /* Experiment= */
    PIN_CONF_PART_EXP_POLICIES = 2048,  /* ExperimentPolicies= */
    PIN_CONF_PART_EXP_SHARE = 4096,     /* ExperimentShare= */
    PIN_CONF_PART_EXP_UNTIL = 8192,     /* ExperimentUntil= */
    PIN_CONF_PART_EXP_SEED = 16384,     /* ExperimentSeed= */
    PIN_CONF_PART_EXP_NAMES = 32768,    /* ExperimentJobNames= */
    PIN_CONF_PART_EXP_ACCOUNTS = 65536, /* ExperimentAccounts= */
};

/* Policy experiments (doc/experiments.md): Experiment=NAME */
#define PIN_CONF_EXP_NAME_MAX 33 /* 32 characters + NUL */
/* ExperimentPolicies=: 2 to PIN_CONF_ARMS_MAX arms, the first the
 * control */
#define PIN_CONF_ARMS_MAX 5
/* ExperimentJobNames= / ExperimentAccounts= text */
#define PIN_CONF_EXP_LIST_MAX 256

struct pin_conf_arms {
    int n;                          /* 0: none given */
    int policy[PIN_CONF_ARMS_MAX]; /* enum place_policy, in order */
};

/* One `PartitionName=NAME Key=Value ...` line. */
struct pin_conf_partition {
    char name[PIN_CONF_PARTITION_NAME_MAX];
    unsigned set; /* PIN_CONF_PART_* */
    int default_policy;
    unsigned allowed_policies;
    int forced_policy;
    double dynamic_overuse;
    long long dynamic_grace_us;
    long long dynamic_interval_us;
    int dynamic_confine;
    int spread_sockets;
    long long profile_us;
    int gpu_binding;
    /* policy experiment (doc/experiments.md); experiment "": none */
    char experiment[PIN_CONF_EXP_NAME_MAX];
    struct pin_conf_arms experiment_policies;
    double experiment_share;       /* 0 < share <= 1 */
    long long experiment_until;    /* epoch seconds; 0: no end */
    long long experiment_seed;     /* -1: a hash of the name */
    char experiment_job_names[PIN_CONF_EXP_LIST_MAX]; /* "" all */
    char experiment_accounts[PIN_CONF_EXP_LIST_MAX];  /* "" all */
};

/* The rules for the jobs of one partition (pin_conf_rules_for()). */
struct pin_conf_rules {
    int default_policy; /* enum place_policy */
    unsigned allowed_policies;
    int forced_policy;   /* enum place_policy, -1 if not forced */
    bool from_partition; /* a PartitionName= line matched */
    /* policy dynamic: the global Dynamic* values or the partition's */
    double dynamic_overuse;
    long long dynamic_grace_us;
    long long dynamic_interval_us;
    int dynamic_confine; /* PIN_CONFINE_* */
    /* job_submit: sockets per node a one-task numa-spread job that srun
     * creates is spread over (doc/job-submit.md); 0: never reshaped */
    int spread_sockets;
    /* profiling (doc/profiling.md): the sampling interval of a step that
     * does not say --pin-profile; 0: not profiled */
    long long profile_us;
    /* job_submit: PIN_GPU_BINDING_* (doc/job-submit.md, "GPUs") */
    int gpu_binding;
    /* policy experiment (doc/experiments.md); experiment "": none */
    char experiment[PIN_CONF_EXP_NAME_MAX];
    struct pin_conf_arms experiment_policies;
    double experiment_share;       /* 0 < share <= 1 */
    long long experiment_until;    /* epoch seconds; 0: no end */
    long long experiment_seed;     /* -1: a hash of the name */
    char experiment_job_names[PIN_CONF_EXP_LIST_MAX]; /* "" all */
    char experiment_accounts[PIN_CONF_EXP_LIST_MAX];  /* "" all */
};

struct pin_conf {
    char path[PATH_MAX];        /* pin.conf in use ("" if none) */
    int default_policy;         /* enum place_policy; DefaultPolicy=none */
    unsigned allowed_policies;  /* bit (1 << policy); AllowedPolicies=all */
    char cgroup_root[PATH_MAX]; /* CgroupRoot=auto: the cgroup2 mount */
    char cgroup_base[NAME_MAX]; /* CgroupBase=slurm-pin (standalone tree) */
    char topology_cache
        [PATH_MAX]; /* TopologyCache=/var/cache/slurm-pin/topology.xml
                     */
    char state_dir[PATH_MAX]; /* StateDir=/run/slurm-pin (lock, claims) */
    bool verbose;             /* Verbose=no: as if every step said ,verbose */
    bool oversubscribe;       /* Oversubscribe=allow: a step asking for
                                 more CPUs than allocated (srun -O) is
                                 placed, tasks sharing CPUs; refuse:
                                 the step fails */
    char deliver_command[PATH_MAX]; /* DeliverCommand=BINDIR/slurm-pin: run as
                                      'CMD deliver --job N' at job end
                                      (accounting to slurmdbd); "" = none */
    bool share_with_steps;          /* ShareWithSteps=allow: a step that does
                                       not fit beside the running steps shares
                                       their CPUs; refuse: the step fails */
    bool none_restricted;           /* NoneUsers= or NoneAccounts= given:
                                       only those may ask for `none` */
    char none_users[PIN_CONF_NAMES_MAX];    /* NoneUsers=a,b ("" none) */
    char none_accounts[PIN_CONF_NAMES_MAX]; /* NoneAccounts=x,y */
    int npartitions;
    struct pin_conf_partition partitions[PIN_CONF_PARTITIONS_MAX];
    bool accounting;            /* Accounting=yes: a record per step */
    char journal_dir[PATH_MAX]; /* JournalDir=/var/lib/slurm-pin/journal */
    unsigned long long journal_max_size; /* JournalMaxSize=64M; 0: never
                                     rotate */
    /* policy dynamic (libwatch/watch.h, doc/policies.md) */
    double dynamic_overuse;        /* DynamicOveruse=1.2 (x allocated CPUs) */
    long long dynamic_grace_us;    /* DynamicGrace=60s */
    long long dynamic_interval_us; /* DynamicInterval=5s */
    int dynamic_confine;           /* DynamicConfine=cpuset (PIN_CONFINE_*) */
    int spread_sockets;            /* SpreadSockets=0 (off): job_submit's
                                      numa-spread reshape, doc/job-submit.md */
    /* profiling (doc/profiling.md) */
    long long profile_us;       /* Profile=no (0), yes (1 s) or an
                                   interval: steps profiled by default */
    char profile_dir[PATH_MAX]; /* ProfileDir=/var/lib/slurm-pin/profile */
    unsigned long long profile_max_size; /* ProfileMaxSize=256M per profile */
    int profile_taskstats; /* ProfileTaskstats=auto (PIN_PROFILE_TS_*) */
    int gpu_binding; /* GpuBinding=no: job_submit adds
                        --gres-flags=enforce-binding with enforce */
    /* policy experiment (doc/experiments.md); experiment "": none */
    char experiment[PIN_CONF_EXP_NAME_MAX];
    struct pin_conf_arms experiment_policies;
    double experiment_share;       /* 0 < share <= 1 */
    long long experiment_until;    /* epoch seconds; 0: no end */
    long long experiment_seed;     /* -1: a hash of the name */
    char experiment_job_names[PIN_CONF_EXP_LIST_MAX]; /* "" all */
    char experiment_accounts[PIN_CONF_EXP_LIST_MAX];  /* "" all */
    /* test only (doc/testing.md), never in production: the step uses
     * this hwloc XML instead of the node's topology, and reads
     * TestDeviceRoot/sys/dev/char and TestDeviceRoot/proc/driver/nvidia
     * instead of /sys/... and /proc/...; "" (none) by default */
    char test_topology[PATH_MAX];
    char test_device_root[PATH_MAX];
};

/* GpuBinding= values */
enum { PIN_GPU_BINDING_NO = 0, PIN_GPU_BINDING_ENFORCE = 1 };
/* ProfileTaskstats= (doc/profiling.md, "Fork storms") */
enum {
    PIN_PROFILE_TS_AUTO = 0, /* paused while the step forks fast */
    PIN_PROFILE_TS_ON = 1,
    PIN_PROFILE_TS_OFF = 2,
};

/* DynamicConfine= values */
enum { PIN_CONFINE_CPUSET = 0, PIN_CONFINE_QUOTA = 1 };

/* ---- the keys ------------------------------------------------------------
 *
 * pin.conf's keys are one table of descriptors (conf.c's keys[]), from
 * which come the parsing of pin.conf lines and plugstack arguments, the
 * keys a PartitionName= line may set and pin_conf_rules_for()'s
 * overrides, pin_conf_defaults(), and the lists of known keys in error
 * messages.  pin.conf(5)'s KEYS section is checked against it
 * (test/test_keys.c): a key added to one and not the other fails.
 */
enum {
    PIN_CONF_KEY_GLOBAL = 1,    /* a pin.conf line, a plugstack argument */
    PIN_CONF_KEY_PARTITION = 2, /* valid on a PartitionName= line */
    PIN_CONF_KEY_LINE = 4,      /* PartitionName= itself: a line of keys */
    PIN_CONF_KEY_DESCRIBED = 8, /* `defval` describes the default in
                                   words ("(anyone)"): the field starts
                                   empty */
};

/* A value parser: `value` (not empty) into the field `dst` of `size`
 * bytes; -1 with `why` (size n) saying what is wrong and what is valid,
 * the field untouched. */
typedef int (*pin_conf_parse_f) (const char *value,
                                 void *dst,
                                 size_t size,
                                 char *why,
                                 size_t n);

struct pin_conf_key {
    const char *name;       /* canonical spelling: "DefaultPolicy" */
    const char *type;       /* the value as pin.conf(5) writes it:
                               "policy", "{allow|refuse}" */
    unsigned where;         /* PIN_CONF_KEY_* */
    pin_conf_parse_f parse; /* NULL for PIN_CONF_KEY_LINE */
    const char *defval;     /* the default, as pin.conf would say it */
    const char *help;       /* one line: what it decides */
    /* the field the value goes to: offsets in struct pin_conf, struct
     * pin_conf_partition and struct pin_conf_rules (-1: none there), its
     * size (the same in each), and its PIN_CONF_PART_* bit */
    long conf_off;
    long part_off;
    long rules_off;
    size_t size;
    unsigned part_bit;
};

/* The table, *n entries (n may be NULL).  Static: nothing to free. */
const struct pin_conf_key *pin_conf_keys (size_t *n);

/* The names of the keys valid `where` (PIN_CONF_KEY_* bits, any of them),
 * in the table's order, as "A, B, C" into buf (size n; if too small, the
 * names that fit whole).  Returns buf. */
const char *pin_conf_key_names (unsigned where, char *buf, size_t n);

/* Fill with the documented defaults (doc/pin.conf.5). */
void pin_conf_defaults (struct pin_conf *conf);

/* Read a pin.conf file over the current values.  A missing file is an
 * error only if `must_exist` (otherwise 0 and `conf` unchanged).  Returns -1
 * with errno EINVAL and errp "FILE:LINE: Key=Value: what is wrong; what is
 * valid" on the first bad line (unknown or duplicate key, bad or empty
 * value, missing '=', over-long line, NUL or control character), or when
 * DefaultPolicy is not in AllowedPolicies after the whole file.  On
 * success conf->path is set to `path`.  Nothing to free.
 */
int pin_conf_load_file (struct pin_conf *conf,
                        const char *path,
                        bool must_exist,
                        pin_error_t *errp);

/* Apply plugstack.conf arguments (argv as SPANK passes them).  `conf=PATH`
 * (absolute) loads that file first (it must exist); the other arguments
 * override it, each key at most once.  Without conf=, PIN_CONF_DEFAULT_PATH
 * is read if it exists.  DefaultPolicy is checked against AllowedPolicies
 * once everything is applied.  av is not modified; nothing to free.
 * Errors: "plugstack.conf argument 'foo=1': unknown key; known: ...".
 */
int pin_conf_load_args (struct pin_conf *conf,
                        int ac,
                        char **av,
                        pin_error_t *errp);

/* Is `policy` (an enum place_policy) allowed by the site? */
bool pin_conf_policy_allowed (const struct pin_conf *conf, int policy);

/* The rules for jobs of `partition` (NULL or "": the global ones): the
 * global DefaultPolicy and AllowedPolicies, replaced by what the
 * partition's PartitionName= line sets (names match exactly, as Slurm's
 * do).  A ForcedPolicy line has forced_policy >= 0. */
void pin_conf_rules_for (const struct pin_conf *conf,
                         const char *partition,
                         struct pin_conf_rules *rules);

/* Replace conf's values of the keys a PartitionName= line may set by
 * those of `rules` (pin_conf_rules_for(), pin_conf_resolve()), so that a
 * reader of conf sees the settings of the partition (the table says
 * which fields). */
void pin_conf_narrow (struct pin_conf *conf,
                      const struct pin_conf_rules *rules);

/* ---- a step's effective settings -----------------------------------------
 *
 * One resolver for job_submit_pin.so (at submission), pin.so (for each
 * step, the steps job_submit does not see included) and slurm-pin check:
 * from pin.conf, the PartitionName= line of the job's partition and what
 * the job or step asked for, the policy and where it came from, the
 * profile interval and the policy-dynamic keys.
 */

/* Where the policy came from. */
enum pin_conf_source {
    PIN_CONF_FROM_OPTION = 0,        /* --pin-policy (the same as a forced
                                        policy, if there is one) */
    PIN_CONF_FROM_SITE_DEFAULT,      /* pin.conf DefaultPolicy: no
                                        PartitionName= line matched */
    PIN_CONF_FROM_PARTITION_DEFAULT, /* the partition's line: its
                                        DefaultPolicy, or the global one
                                        it keeps */
    PIN_CONF_FROM_FORCED,            /* the partition's ForcedPolicy */
};

/* What a job or step asks for. */
struct pin_conf_request {
    /* The partition (slurmctld's, never the user's environment), or
     * Slurm's comma list of a job submitted to several; NULL or "": not
     * known, the global rules. */
    const char *partitions;
    bool policy_given;    /* --pin-policy=POLICY[,verbose] */
    int policy;           /* enum place_policy, if given */
    bool verbose;         /* ",verbose" was given */
    bool profile_given;   /* --pin-profile[=INTERVAL] */
    long long profile_us; /* its interval (0: off), if given */
};

struct pin_conf_effective {
    /* The partition's rules; for a list, the first partition's, with
     * AllowedPolicies the intersection and from_partition true if any
     * line matched.  The dynamic keys are rules.dynamic_*. */
    struct pin_conf_rules rules;
    int policy; /* enum place_policy */
    enum pin_conf_source source;
    bool forced_over_option; /* --pin-policy asked for another policy
                                than the partition forces (policy is
                                the forced one) */
    bool defaults_differ;    /* a list whose partitions' DefaultPolicy
                                differ (policy is the first's) */
    bool verbose;            /* asked, or pin.conf's Verbose=yes */
    long long profile_us;    /* --pin-profile's, else Profile= of the
                                partition or pin.conf; 0: off */
};

/* Resolve `req` against `conf` into *eff.  Whether the policy asked for
 * is allowed (AllowedPolicies, NoneUsers) is the caller's to check, with
 * eff->rules.allowed_policies.  Returns 0, or -1 with errno EINVAL and
 * errp "partitions a,b: their pin.conf ForcedPolicy differs; submit to
 * one partition" when the listed partitions force different policies;
 * *eff is filled either way (on -1 with the first partition's rules).
 * Nothing to free. */
int pin_conf_resolve (const struct pin_conf *conf,
                      const struct pin_conf_request *req,
                      struct pin_conf_effective *eff,
                      pin_error_t *errp);

/* Words for a source, as pin.so's messages say it: "--pin-policy",
 * "pin.conf DefaultPolicy", "the partition's default", "forced by the
 * partition". */
const char *pin_conf_source_name (enum pin_conf_source source);

/* A Profile= or --pin-profile value: yes/on or empty or NULL (the default
 * interval, PIN_CONF_PROFILE_DEFAULT_US), no/off (0) or an interval
 * ("500ms", "2s", "1m") of PIN_CONF_PROFILE_MIN_US to _MAX_US.  -1 with
 * `why` (size n) saying what is valid; *interval_us only written on
 * success. */
int pin_conf_parse_profile (const char *value,
                            long long *interval_us,
                            char *why,
                            size_t n);

/* May a job of `user` charged to `account` (either may be NULL) ask for
 * policy `none` explicitly?  Always, unless NoneUsers= or NoneAccounts=
 * is set: then only the users and accounts listed there (exact names).
 * A default or forced `none` is the site's choice and is not checked. */
bool pin_conf_none_permitted (const struct pin_conf *conf,
                              const char *user,
                              const char *account);

#endif /* !PIN_CONF_H */
