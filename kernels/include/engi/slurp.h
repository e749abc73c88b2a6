/*
 * slurp.h - reading a whole file under a byte cap: the one file reader of
 * the mesh readers (kernels/io) and the verifiers that read an agent's
 * output themselves (verifiers/kind_ccx_dat.c).
 */
#ifndef ENGI_SLURP_H
#define ENGI_SLURP_H

#include <stddef.h>

struct engi_error;

/*
 * Reads the regular file path, at most cap bytes, into a NUL-terminated
 * buffer (*buf, engi_malloc'd, the caller engi_free's it; *len without the
 * NUL). Messages read "cannot read <fmt> '<name>': <what>" (fmt: "OBJ",
 * "CalculiX output"; name: what the caller calls the file, path when NULL).
 * Returns 0, ENGI_EIO (missing, unreadable, not a regular file, short read),
 * ENGI_ETOOBIG (over cap) or ENGI_ENOMEM; *buf is NULL on error.
 */
int engi_io_slurp(const char *path, const char *name, const char *fmt, size_t cap, char **buf,
		  size_t *len, struct engi_error *err);

#endif
