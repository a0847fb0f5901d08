/* The one place where slurm-pin meets the differences of Slurm's API
 * between 22.05 and 26.05.  Every choice is made by configure against the
 * installed headers (configure.ac, "Slurm's API"), never by version number;
 * code elsewhere uses only the names below.
 *
 *   list_t, list_itr_t  the list types of 23.02 on (List and ListIterator,
 *                       their pointer typedefs, were removed in 24.05);
 *   pin_hostlist_t      the hostlist struct: use pin_hostlist_t * (23.11
 *                       made hostlist_t the struct; before, the pointer);
 *   pin_hostlist_ranged()  "n[1-2]" as malloc'd text (23.11 removed
 *                       slurm_hostlist_ranged_string_malloc; the
 *                       fixed-buffer call exists in every release);
 *   pin_load_job()      slurm_load_job() of one job id (26.05 takes a
 *                       slurm_step_id_t, a job id or a SLUID);
 *   pin_job_desc_set_job_id()  the job a job_desc_msg_t update names
 *                       (26.05 replaced job_id with step_id);
 *   pin_job_rec_init()  a slurmdb_job_rec_t with every "not set" field
 *                       (26.05 removed lft).
 */
#ifndef PIN_SLURM_COMPAT_H
#define PIN_SLURM_COMPAT_H

#include <errno.h>
#include <slurm/slurm.h>
#include <slurm/slurmdb.h>
#include <stdlib.h>
#include <string.h>

#ifndef HAVE_SLURM_LIST_T
typedef __typeof__ (*(List)0) list_t;
typedef __typeof__ (*(ListIterator)0) list_itr_t;
#endif

#ifdef PIN_HOSTLIST_T_IS_POINTER
typedef __typeof__ (*(hostlist_t)0) pin_hostlist_t;
#else
typedef hostlist_t pin_hostlist_t;
#endif

/* HL's ranged form, malloc'd (free()); NULL with errno on failure. */
static inline char *pin_hostlist_ranged (pin_hostlist_t *hl)
{
    for (size_t n = 256; n <= (size_t)1 << 24; n *= 2) {
        char *buf = malloc (n);
        ssize_t len;

        if (!buf)
            return NULL;
        len = slurm_hostlist_ranged_string (hl, n, buf);
        if (len >= 0 && (size_t)len < n)
            return buf;
        free (buf);
    }
    errno = E2BIG;
    return NULL;
}

/* slurm_load_job() of JOB_ID.  A caller that needs slurm_load_job weak
 * (pin.so) says "#pragma weak slurm_load_job" itself. */
static inline int pin_load_job (job_info_msg_t **resp,
                                uint32_t job_id,
                                uint16_t show_flags)
{
#ifdef PIN_LOAD_JOB_STEP_ID
    slurm_step_id_t id;

    memset (&id, 0, sizeof (id)); /* sluid 0: by job id */
    id.job_id = job_id;
    id.step_het_comp = NO_VAL;
    id.step_id = NO_VAL;
    return slurm_load_job (resp, id, show_flags);
#else
    return slurm_load_job (resp, job_id, show_flags);
#endif
}

/* DESC (an update) names job JOB_ID. */
static inline void pin_job_desc_set_job_id (job_desc_msg_t *desc,
                                            uint32_t job_id)
{
#ifdef HAVE_JOB_DESC_MSG_T_JOB_ID
    desc->job_id = job_id;
#else
    desc->step_id.job_id = job_id; /* sluid 0 (slurm_init_job_desc_msg) */
#endif
}

/* REC for slurmdb_job_modify(): nothing set, every id field "not set". */
static inline void pin_job_rec_init (slurmdb_job_rec_t *rec)
{
    memset (rec, 0, sizeof (*rec));
    rec->array_task_id = NO_VAL;
    rec->derived_ec = NO_VAL;
    rec->requid = (uint32_t)-1;
#ifdef HAVE_SLURMDB_JOB_REC_T_LFT
    rec->lft = NO_VAL;
#endif
    rec->resvid = NO_VAL;
}

#endif
