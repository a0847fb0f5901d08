/* effective.c - a step's effective settings from pin.conf and its request
 *
 * The one place that decides between an asked, a default and a forced
 * policy (conf.h, pin_conf_resolve()): job_submit_pin.so, pin.so and
 * slurm-pin check all call it, so that what a job is told at submission,
 * what its steps get and what an admin is shown agree.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "pinopt.h"

/* Partition names are shown up to this many characters. */
#define QUOTE 64

void pin_conf_narrow (struct pin_conf *conf,
                      const struct pin_conf_rules *rules)
{
    size_t n, i;
    const struct pin_conf_key *k = pin_conf_keys (&n);

    for (i = 0; i < n; i++) {
        if (k[i].conf_off < 0 || k[i].rules_off < 0)
            continue;
        memcpy ((char *)conf + k[i].conf_off,
                (const char *)rules + k[i].rules_off,
                k[i].size);
    }
}

/* The rules for a partition list "a,b" (NULL: the default partition,
 * whose name is not known: the global rules).  Allowed is the
 * intersection; a forced policy must be the same in every listed
 * partition, else -1; *defaults_differ when their defaults are not. */
static int combined_rules (const struct pin_conf *conf,
                           const char *parts,
                           struct pin_conf_rules *out,
                           bool *defaults_differ,
                           pin_error_t *errp)
{
    char name[PIN_CONF_PARTITION_NAME_MAX + 1];
    const char *p = parts;
    bool first = true;

    *defaults_differ = false;
    pin_conf_rules_for (conf, NULL, out);
    if (!parts || !*parts)
        return 0;
    while (*p) {
        struct pin_conf_rules r;
        size_t len = strcspn (p, ",");

        if (len == 0 || len >= sizeof (name))
            name[0] = '\0'; /* no line can match: global rules */
        else {
            memcpy (name, p, len);
            name[len] = '\0';
        }
        pin_conf_rules_for (conf, name[0] ? name : NULL, &r);
        if (first) {
            *out = r;
            first = false;
        } else {
            out->allowed_policies &= r.allowed_policies;
            if (r.default_policy != out->default_policy)
                *defaults_differ = true;
            if (r.forced_policy != out->forced_policy) {
                char q[QUOTE + 8];
                errno = EINVAL;
                return errprintf (errp,
                                  "partitions %s: their pin.conf "
                                  "ForcedPolicy differs; submit to one "
                                  "partition",
                                  pinopt_quote (parts, QUOTE, q, sizeof (q)));
            }
            out->from_partition |= r.from_partition;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

int pin_conf_resolve (const struct pin_conf *conf,
                      const struct pin_conf_request *req,
                      struct pin_conf_effective *eff,
                      pin_error_t *errp)
{
    const struct pin_conf_rules *r = &eff->rules;
    int rc;

    if (!conf || !req || !eff) {
        errno = EINVAL;
        return errprintf (errp, "pin_conf_resolve: invalid arguments");
    }
    memset (eff, 0, sizeof (*eff));
    rc = combined_rules (conf,
                         req->partitions,
                         &eff->rules,
                         &eff->defaults_differ,
                         errp);
    if (r->forced_policy >= 0) {
        eff->policy = r->forced_policy;
        eff->forced_over_option =
            req->policy_given && req->policy != r->forced_policy;
        eff->source = req->policy_given && !eff->forced_over_option
                          ? PIN_CONF_FROM_OPTION
                          : PIN_CONF_FROM_FORCED;
    } else if (req->policy_given) {
        eff->policy = req->policy;
        eff->source = PIN_CONF_FROM_OPTION;
    } else {
        eff->policy = r->default_policy;
        eff->source = r->from_partition ? PIN_CONF_FROM_PARTITION_DEFAULT
                                        : PIN_CONF_FROM_SITE_DEFAULT;
    }
    eff->verbose = (req->policy_given && req->verbose) || conf->verbose;
    eff->profile_us = req->profile_given ? req->profile_us : r->profile_us;
    return rc;
}

const char *pin_conf_source_name (enum pin_conf_source source)
{
    switch (source) {
        case PIN_CONF_FROM_OPTION:
            return "--pin-policy";
        case PIN_CONF_FROM_SITE_DEFAULT:
            return "pin.conf DefaultPolicy";
        case PIN_CONF_FROM_PARTITION_DEFAULT:
            return "the partition's default";
        case PIN_CONF_FROM_FORCED:
            return "forced by the partition";
    }
    return "unknown";
}

/* vi: ts=4 sw=4 expandtab
 */
