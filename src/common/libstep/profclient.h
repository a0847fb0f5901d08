/* profclient.h - the step's profile recorder as a client of its watcher
 *
 * libprof records (record.h); this feeds it from the watcher's loop: its
 * descriptors and timeout into the poll, prof_rec_process after it, and
 * prof_rec_finish with the step's wait status (the profile's last line)
 * when the watcher stops.  A recorder that fails stops recording and is
 * finished at once; the step goes on.
 */
#ifndef PIN_PROFCLIENT_H
#define PIN_PROFCLIENT_H

#include "libutil/errprintf.h"
#include "steplog.h"
#include "stepwatch.h"

struct prof_rec;
typedef struct profclient profclient_t;

/* Takes `prof` (finished when the watcher ends, or by
 * profclient_destroy).  NULL (ENOMEM) with errp; then prof is still the
 * caller's. */
profclient_t *profclient_create (struct prof_rec *prof,
                                 const char *stepname,
                                 const struct steplog *log,
                                 pin_error_t *errp);

/* Its stepwatch client (arg: the profclient_t). */
void profclient_client (profclient_t *p, struct stepwatch_client *client);

/* Write a mark (a JSON object, not taken) into the profile, in the
 * watcher thread; 0 when the recorder has stopped.  -1 with errp. */
struct json_object;
int profclient_mark (profclient_t *p,
                     struct json_object *o,
                     pin_error_t *errp);

/* Finishes the recorder if the watcher never did (status -1); NULL is
 * fine; keeps errno. */
void profclient_destroy (profclient_t *p);

#endif /* !PIN_PROFCLIENT_H */
