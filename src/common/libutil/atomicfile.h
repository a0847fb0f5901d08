/* atomicfile.h - replace a file's contents all at once
 *
 * A reader (another slurmstepd, slurm-pin check) must see either the old
 * file or the new one, never a half-written one: the contents go to a
 * temporary file beside the target, which is fsynced and then renamed
 * over it.  Used for the topology caches (libtopo) and open to any file
 * that is rewritten while others may read it.
 */
#ifndef PIN_ATOMICFILE_H
#define PIN_ATOMICFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Write `len` bytes of `buf` to `path`: a temporary file "PATH.XXXXXX"
 * (mkstemp, in path's directory, which must exist), chmod `mode`, fsync,
 * close, rename over `path`.  The directory is not checked here: callers
 * that run as root check it first (libutil/safefile.h).  0, or -1 with
 * errno set (ENAMETOOLONG, or that of mkstemp, write, fchmod, fsync,
 * close or rename); on failure the temporary file is removed and `path`
 * is as it was. */
int write_file_atomic (const char *path,
                       const void *buf,
                       size_t len,
                       mode_t mode);

#endif /* !PIN_ATOMICFILE_H */
