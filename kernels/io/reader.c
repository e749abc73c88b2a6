/*
 * Shared reader helpers: capped file reading, lines, numbers, mesh growth.
 */
#include "reader.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NUMBER_MAX 80

int engi_io_slurp(const char *path, const char *name, const char *fmt, size_t cap, char **buf,
		  size_t *len, struct engi_error *err)
{
	if (!name)
		name = path;
	*buf = NULL;
	*len = 0;
	FILE *fp = fopen(path, "rb");
	if (!fp)
		RAISE(err, ENGI_EIO, "cannot read %s '%s': %s", fmt, name, strerror(errno));
	struct stat st;
	if (fstat(fileno(fp), &st) < 0 || !S_ISREG(st.st_mode)) {
		fclose(fp);
		RAISE(err, ENGI_EIO, "cannot read %s '%s': not a regular file", fmt, name);
	}
	if ((unsigned long long)st.st_size > cap) {
		fclose(fp);
		RAISE(err, ENGI_ETOOBIG, "cannot read %s '%s': %lld bytes, over the cap of %zu",
		      fmt, name, (long long)st.st_size, cap);
	}
	size_t n = (size_t)st.st_size;
	char *b = engi_malloc(n + 1);
	if (!b) {
		fclose(fp);
		RAISE(err, ENGI_ENOMEM, "cannot read %s '%s': out of memory for %zu bytes", fmt,
		      name, n);
	}
	size_t got = fread(b, 1, n, fp);
	int bad = ferror(fp);
	fclose(fp);
	if (bad || got != n) {
		engi_free(b);
		RAISE(err, ENGI_EIO, "cannot read %s '%s': short read", fmt, name);
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

int engi_io_next_line(struct io_lines *l, const char **s, size_t *n)
{
	if (l->p >= l->end)
		return 0;
	const char *e = memchr(l->p, '\n', (size_t)(l->end - l->p));
	if (!e)
		e = l->end;
	*s = l->p;
	*n = (size_t)(e - l->p);
	if (*n && (*s)[*n - 1] == '\r')
		(*n)--;
	l->p = e < l->end ? e + 1 : e;
	l->lineno++;
	return 1;
}

void engi_io_skip_blanks(const char **s, const char *end, int commas)
{
	while (*s < end && (**s == ' ' || **s == '\t' || **s == '\r' || **s == '\f' ||
			    **s == '\v' || (commas && **s == ',')))
		(*s)++;
}

static size_t token(const char **s, const char *end, char out[NUMBER_MAX])
{
	engi_io_skip_blanks(s, end, 0);
	size_t n = 0;
	const char *p = *s;
	while (p < end && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n' && *p != ',' &&
	       *p != '/' && *p != '\f' && *p != '\v') {
		if (n + 1 >= NUMBER_MAX)
			return 0;
		out[n++] = *p++;
	}
	out[n] = 0;
	if (n)
		*s = p;
	return n;
}

int engi_io_number(const char **s, const char *end, double *out)
{
	char t[NUMBER_MAX];
	const char *p = *s;
	if (!token(&p, end, t))
		return -1;
	char *e;
	double v = strtod(t, &e);
	if (e == t || *e)
		return -1;
	*out = v;
	*s = p;
	return 0;
}

int engi_io_integer(const char **s, const char *end, long long *out)
{
	char t[NUMBER_MAX];
	const char *p = *s;
	size_t n = token(&p, end, t);
	if (!n)
		return -1;
	char *e;
	errno = 0;
	long long v = strtoll(t, &e, 10);
	if (e == t || *e || errno)
		return -1;
	*out = v;
	*s = p;
	return 0;
}

void engi_io_mesh_start(struct io_mesh *b, struct engi_mesh *m, size_t max_verts, size_t max_tris)
{
	engi_mesh_release(m);
	b->m = m;
	b->alloc_v = b->alloc_t = 0;
	/* 32-bit vertex indices */
	size_t idx_cap = (size_t)UINT32_MAX - 1;
	b->max_verts = max_verts < idx_cap ? max_verts : idx_cap;
	b->max_tris = max_tris < idx_cap / 3 ? max_tris : idx_cap / 3;
}

int engi_io_add_vertex(struct io_mesh *b, const double p[3])
{
	struct engi_mesh *m = b->m;
	if (m->nverts >= b->max_verts)
		return ENGI_ETOOBIG;
	if (m->nverts == b->alloc_v) {
		size_t na = b->alloc_v ? 2 * b->alloc_v : 1024;
		if (na > b->max_verts)
			na = b->max_verts;
		double *x = engi_reallocarray(m->xyz, na, 3 * sizeof(double));
		if (!x)
			return ENGI_ENOMEM;
		m->xyz = x;
		b->alloc_v = na;
	}
	memcpy(m->xyz + 3 * m->nverts, p, 3 * sizeof(double));
	m->nverts++;
	return 0;
}

int engi_io_add_tri(struct io_mesh *b, uint32_t a, uint32_t c, uint32_t d)
{
	struct engi_mesh *m = b->m;
	if (m->ntris >= b->max_tris)
		return ENGI_ETOOBIG;
	if (m->ntris == b->alloc_t) {
		size_t na = b->alloc_t ? 2 * b->alloc_t : 1024;
		if (na > b->max_tris)
			na = b->max_tris;
		uint32_t *t = engi_reallocarray(m->tri, na, 3 * sizeof(uint32_t));
		if (!t)
			return ENGI_ENOMEM;
		m->tri = t;
		b->alloc_t = na;
	}
	m->tri[3 * m->ntris] = a;
	m->tri[3 * m->ntris + 1] = c;
	m->tri[3 * m->ntris + 2] = d;
	m->ntris++;
	return 0;
}

void engi_io_mesh_abort(struct io_mesh *b)
{
	engi_mesh_release(b->m);
}
