/* tmptree.h - a private temporary directory for a unit test, and the
 * files in it (uses check's assertions: call from a test or fixture)
 *
 * tmptree_setup ("test_x") makes $TMPDIR/test_x.XXXXXX (/tmp without
 * TMPDIR); the other calls take paths relative to it; tmptree_teardown
 * removes it and everything in it (not following symlinks).
 */
#ifndef PIN_TMPTREE_H
#define PIN_TMPTREE_H

#include <stdbool.h>
#include <stddef.h>

void tmptree_setup (const char *name);
void tmptree_teardown (void);

/* The directory (valid between setup and teardown). */
const char *tmptree_root (void);

/* root/rel into buf. */
void tmptree_path (char *buf, size_t size, const char *rel);

/* mkdir -p (mode 0700) of the directory part of rel, and of rel itself
 * if last_too. */
void tmptree_mkdirs (const char *rel, bool last_too);

/* Write `content` to root/rel, making its directories. */
void tmptree_put (const char *rel, const char *content);

/* The contents of root/rel, or "<missing>"; a static buffer (4 KiB). */
const char *tmptree_get (const char *rel);

/* Does root/rel exist (lstat)? */
bool tmptree_exists (const char *rel);

/* rm -rf of an absolute path (not following symlinks). */
void tmptree_rm_rf (const char *path);

#endif /* !PIN_TMPTREE_H */
