/*
 * reader.h - what the mesh readers share (private to kernels/io): reading a
 * whole file under a byte cap (engi/slurp.h), a line cursor over bytes,
 * number parsing without locale or NUL-termination surprises, and a mesh
 * under construction with capped growth.
 */
#ifndef ENGI_IO_READER_H
#define ENGI_IO_READER_H

#include <stddef.h>
#include <stdint.h>

#include "engi/mesh.h"
#include "engi/slurp.h" /* engi_io_slurp */

struct engi_error;

struct io_lines {
	const char *p, *end;
	size_t lineno;
};

/* Next line without its end-of-line; 0 at the end of input. */
int engi_io_next_line(struct io_lines *l, const char **s, size_t *n);

/* Parses a number from [*s, end), skipping leading blanks; advances *s.
 * Returns 0, or -1 when there is no number there. */
int engi_io_number(const char **s, const char *end, double *out);
/* An integer (optionally signed) the same way. */
int engi_io_integer(const char **s, const char *end, long long *out);
/* Skips blanks (space, tab, \r, and commas when commas is set). */
void engi_io_skip_blanks(const char **s, const char *end, int commas);

struct io_mesh {
	struct engi_mesh *m;
	size_t alloc_v, alloc_t;
	size_t max_verts, max_tris;
};

void engi_io_mesh_start(struct io_mesh *b, struct engi_mesh *m, size_t max_verts, size_t max_tris);
/* ENGI_ETOOBIG past the caps, ENGI_ENOMEM; no message (the caller words it). */
int engi_io_add_vertex(struct io_mesh *b, const double p[3]);
int engi_io_add_tri(struct io_mesh *b, uint32_t a, uint32_t c, uint32_t d);
/* On error: empties the mesh. */
void engi_io_mesh_abort(struct io_mesh *b);

#endif
