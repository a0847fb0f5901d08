/* summary.h - the job summary kept in slurmdbd's AdminComment
 *
 * A job summary holds every record (acct.h, step and job kinds) of every
 * node of one job, each node's records as the node's journal has them.
 * In the AdminComment field it is one token
 *
 *     slurm-pin/1:<base64 of gzip of compact JSON>
 *
 * with the JSON {"v":1,"nodes":{"NODE":[record,...],...}} (nodes sorted by
 * name, each node's records in a canonical order, so that the same records
 * always give the same text), plus "truncated":{"NODE":N} when N step
 * records of NODE were left out to keep the field under its bound (the
 * job records, which carry the node's sums, are always kept).
 *
 * Other tools' text in the field is kept byte for byte.  When there is
 * some, our token follows it after one space in a second form,
 *
 *     {~}<base 16 of the same gzip bytes, digits "!#()*,.:;<>?@[]^">
 *
 * in which no character is of the base64 alphabet (A-Z a-z 0-9 + / =, nor
 * the URL-safe - _): a lenient base64 decoder that reads everything after
 * its own prefix (jobstats decodes data[4:] after "JS1:" with Python's
 * base64.b64decode) skips every character of ours, whatever its version,
 * so jobstats still reads exactly its data.  (Earlier writers put the
 * base64 token after " AA== ", which relied on Python <= 3.12 stopping at
 * padding; Python 3.13 reads on.  That form is still read.)  Twice the
 * gzip bytes instead of 4/3: the bound below applies to the whole field as
 * written, so step records are left out sooner in that form.
 *
 * The field is: OTHER, or TOKEN, or OTHER " " TOKEN16; read also: OTHER
 * " AA== " TOKEN (old).
 *
 * Pure: no I/O, no logging; errors through pin_error_t.
 */
#ifndef PIN_ACCT_SUMMARY_H
#define PIN_ACCT_SUMMARY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "libutil/errprintf.h"

#define ACCT_SUMMARY_VERSION 1
#define ACCT_SUMMARY_PREFIX "slurm-pin/1:"
/* after other tools' text (base 16 over punctuation, digits 0 to 15) */
#define ACCT_SUMMARY_PREFIX_B16 "{~}"
#define ACCT_SUMMARY_B16_DIGITS "!#()*,.:;<>?@[]^"
/* what the old form put between other text and a base64 token (read) */
#define ACCT_SUMMARY_GUARD " AA== "

/* slurmdbd keeps AdminComment in a MySQL TEXT column (65535 bytes). */
#define ACCT_SUMMARY_MAX 60000

struct acct_summary;

/* An empty summary; NULL with errno ENOMEM.  Destroy accepts NULL. */
struct acct_summary *acct_summary_create (void);
void acct_summary_destroy (struct acct_summary *s);

/* Split FIELD (NULL or "" for an empty field) into other tools' text
 * (*other, malloc'd, the caller frees) and the slurm-pin summary (*sp, the
 * caller destroys; empty if the field has none).
 * Returns 0; 1 when a token of ours (either form) was there but did not
 * decode (it is dropped: *sp is what the other tokens held, errp says why);
 * -1 with errno ENOMEM. */
int acct_summary_parse (const char *field,
                        char **other,
                        struct acct_summary **sp,
                        pin_error_t *errp);

/* True if FIELD holds a token of ours (either form; it may not decode). */
bool acct_summary_present (const char *field);

/* Replace NODE's records in S by RECORDS[0..n-1], each the JSON text of
 * one record (one journal line).  Records that are not JSON objects are
 * refused (-1, errp names the index).  n == 0 removes NODE. */
int acct_summary_set_node (struct acct_summary *s,
                           const char *node,
                           const char *const *records,
                           size_t n,
                           pin_error_t *errp);

/* The field for OTHER (may be NULL) and S: malloc'd, the caller frees.
 * When it would be longer than MAX bytes, step records are left out (the
 * latest nodes' first, ...) and counted in "truncated"; NULL with errp if
 * even then it does not fit (or ENOMEM). */
char *acct_summary_format (const char *other,
                           const struct acct_summary *s,
                           size_t max,
                           pin_error_t *errp);

/* parse + set_node + format: FIELD with NODE's part replaced by RECORDS.
 * Merging the same records twice gives the same text. */
char *acct_summary_merge (const char *field,
                          const char *node,
                          const char *const *records,
                          size_t n,
                          size_t max,
                          pin_error_t *errp);

/* True if FIELD's summary holds exactly RECORDS for NODE (the same
 * records, order aside), or all its job records and a "truncated" count
 * for the rest when that was needed. */
bool acct_summary_has_node (const char *field,
                            const char *node,
                            const char *const *records,
                            size_t n);

/* Nodes and records: cb is called for each record, nodes in name order;
 * non-zero from cb stops and is returned. */
typedef int (*acct_summary_cb) (const char *node,
                                json_object *record,
                                void *arg);
int acct_summary_foreach (const struct acct_summary *s,
                          acct_summary_cb cb,
                          void *arg);
size_t acct_summary_node_count (const struct acct_summary *s);

/* Step records of NODE left out for size (0 if none). */
unsigned acct_summary_truncated (const struct acct_summary *s,
                                 const char *node);

#endif /* !PIN_ACCT_SUMMARY_H */
