/*
 * STL reader, binary and ASCII.
 *
 * The format is decided from content: a file whose size is exactly
 * 84 + 50 * (the count in bytes 80..83) is binary even when its header starts
 * with "solid" (many exporters write that); otherwise a file that starts with
 * "solid" and holds only text in its first kilobyte is ASCII; anything else is
 * a binary file with a bad size. Every message starts with
 * "cannot read STL '<path>': ".
 */
#include "engi/mesh.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define STL_HEADER	 84
#define STL_FACET	 50
#define STL_SNIFF	 1024
#define STL_TOKEN_MAX	 256
#define STL_CHUNK_FACETS 65536
#define STL_TRIS_MAX	 ((size_t)(UINT32_MAX - 1) / 3) /* 32-bit vertex indices */

__attribute__((format(printf, 4, 5))) static int stl_fail(struct engi_error *err, int code,
							  const char *path, const char *fmt, ...)
{
	char msg[ENGI_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return engi_raise(err, code, "cannot read STL '%s': %s", path, msg);
}

static float le_float(const unsigned char *p)
{
	uint32_t u =
	    (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Grows the mesh arrays to hold `want` triangles (3 vertices each). */
static int reserve(struct engi_mesh *m, size_t *alloc, size_t want)
{
	if (want <= *alloc)
		return 0;
	double *x = engi_reallocarray(m->xyz, want, 9 * sizeof(*x));
	if (!x)
		return ENGI_ENOMEM;
	m->xyz = x;
	uint32_t *t = engi_reallocarray(m->tri, want, 3 * sizeof(*t));
	if (!t)
		return ENGI_ENOMEM;
	m->tri = t;
	*alloc = want;
	return 0;
}

static void add_facet(struct engi_mesh *m, const double v[9])
{
	size_t f = m->ntris++;
	memcpy(m->xyz + 9 * f, v, 9 * sizeof(*v));
	for (int k = 0; k < 3; k++)
		m->tri[3 * f + k] = (uint32_t)(3 * f + (size_t)k);
	m->nverts += 3;
}

static int read_binary(FILE *fp, const char *path, uint64_t n, struct engi_mesh *m,
		       struct engi_error *err)
{
	size_t alloc = 0;
	if (reserve(m, &alloc, n ? (size_t)n : 1) < 0)
		return stl_fail(err, ENGI_ENOMEM, path, "out of memory for %llu triangles",
				(unsigned long long)n);
	unsigned char *buf = engi_malloc(STL_CHUNK_FACETS * STL_FACET);
	if (!buf)
		return stl_fail(err, ENGI_ENOMEM, path, "out of memory");
	int rc = 0;
	for (uint64_t done = 0; done < n && rc == 0;) {
		size_t k = n - done < STL_CHUNK_FACETS ? (size_t)(n - done) : STL_CHUNK_FACETS;
		if (fread(buf, STL_FACET, k, fp) != k) {
			rc = stl_fail(err, ENGI_EIO, path, "truncated at facet %llu",
				      (unsigned long long)done);
			break;
		}
		for (size_t i = 0; i < k; i++) {
			const unsigned char *p = buf + i * STL_FACET + 12; /* skip normal */
			double v[9];
			for (int c = 0; c < 9; c++) {
				v[c] = le_float(p + 4 * c);
				if (!engi_coord_ok(v[c])) {
					rc =
					    stl_fail(err, ENGI_EPARSE, path,
						     "facet %llu, vertex %d: coordinate %c = %g %s",
						     (unsigned long long)(done + i), c / 3 + 1,
						     "xyz"[c % 3], v[c], engi_coord_problem(v[c]));
					break;
				}
			}
			if (rc)
				break;
			add_facet(m, v);
		}
		done += k;
	}
	engi_free(buf);
	return rc;
}

/* ---- ASCII ---- */

struct lexer {
	FILE *fp;
	const char *path;
	unsigned char buf[65536];
	size_t pos, len;
	int eof;
	size_t line;
	char tok[STL_TOKEN_MAX + 1];
};

static int lex_getc(struct lexer *lx)
{
	if (lx->pos == lx->len) {
		if (lx->eof)
			return EOF;
		lx->len = fread(lx->buf, 1, sizeof(lx->buf), lx->fp);
		lx->pos = 0;
		if (lx->len == 0) {
			lx->eof = 1;
			return EOF;
		}
	}
	return lx->buf[lx->pos++];
}

/* Next whitespace-separated token into lx->tok; 0 at end of file. */
static int lex_next(struct lexer *lx, struct engi_error *err)
{
	int c;
	do {
		c = lex_getc(lx);
		if (c == '\n')
			lx->line++;
	} while (c != EOF && isspace(c));
	if (c == EOF)
		return 0;
	size_t n = 0;
	while (c != EOF && !isspace(c)) {
		if (c == 0)
			return stl_fail(err, ENGI_EPARSE, lx->path,
					"line %zu: NUL byte in ASCII STL", lx->line);
		if (n == STL_TOKEN_MAX)
			return stl_fail(err, ENGI_EPARSE, lx->path,
					"line %zu: token longer than %d characters", lx->line,
					STL_TOKEN_MAX);
		lx->tok[n++] = (char)c;
		c = lex_getc(lx);
	}
	lx->tok[n] = '\0';
	if (c == '\n')
		lx->pos--; /* let the next call count the line */
	return 1;
}

/* Skips the rest of the current line (a solid's name). */
static void lex_skip_line(struct lexer *lx)
{
	int c;
	while ((c = lex_getc(lx)) != EOF && c != '\n')
		;
	if (c == '\n')
		lx->line++;
}

static int expect(struct lexer *lx, const char *word, struct engi_error *err)
{
	int rc = lex_next(lx, err);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return stl_fail(err, ENGI_EPARSE, lx->path,
				"line %zu: expected '%s', found end of file", lx->line, word);
	if (strcasecmp(lx->tok, word))
		return stl_fail(err, ENGI_EPARSE, lx->path, "line %zu: expected '%s', found '%s'",
				lx->line, word, lx->tok);
	return 0;
}

static int number(struct lexer *lx, double *out, struct engi_error *err)
{
	int rc = lex_next(lx, err);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return stl_fail(err, ENGI_EPARSE, lx->path,
				"line %zu: expected a number, found end of file", lx->line);
	char *end;
	errno = 0;
	*out = strtod(lx->tok, &end);
	if (end == lx->tok || *end)
		return stl_fail(err, ENGI_EPARSE, lx->path,
				"line %zu: expected a number, found '%s'", lx->line, lx->tok);
	return 0;
}

static int read_facet(struct lexer *lx, double v[9], size_t facet, struct engi_error *err)
{
	double nrm;
	TRY(expect(lx, "normal", err));
	for (int k = 0; k < 3; k++)
		TRY(number(lx, &nrm, err));
	TRY(expect(lx, "outer", err));
	TRY(expect(lx, "loop", err));
	for (int k = 0; k < 3; k++) {
		TRY(expect(lx, "vertex", err));
		for (int c = 0; c < 3; c++) {
			TRY(number(lx, &v[3 * k + c], err));
			if (!engi_coord_ok(v[3 * k + c]))
				return stl_fail(
				    err, ENGI_EPARSE, lx->path,
				    "line %zu: facet %zu, vertex %d: coordinate %c = %g %s",
				    lx->line, facet, k + 1, "xyz"[c], v[3 * k + c],
				    engi_coord_problem(v[3 * k + c]));
		}
	}
	TRY(expect(lx, "endloop", err));
	TRY(expect(lx, "endfacet", err));
	return 0;
}

static int read_ascii(FILE *fp, const char *path, size_t max_tris, struct engi_mesh *m,
		      struct engi_error *err)
{
	struct lexer *lx = engi_calloc(1, sizeof(*lx));
	if (!lx)
		return stl_fail(err, ENGI_ENOMEM, path, "out of memory");
	lx->fp = fp;
	lx->path = path;
	lx->line = 1;
	size_t alloc = 0;
	int rc = expect(lx, "solid", err);
	int in_solid = 1;
	if (rc == 0)
		lex_skip_line(lx);
	while (rc == 0) {
		rc = lex_next(lx, err);
		if (rc < 0)
			break;
		if (rc == 0) {
			if (in_solid)
				rc = stl_fail(err, ENGI_EPARSE, path,
					      "line %zu: end of file before 'endsolid'", lx->line);
			break;
		}
		rc = 0;
		if (!in_solid) {
			/* Some exporters write several solids into one file. */
			if (strcasecmp(lx->tok, "solid")) {
				rc = stl_fail(
				    err, ENGI_EPARSE, path,
				    "line %zu: expected 'solid' or end of file, found '%s'",
				    lx->line, lx->tok);
				break;
			}
			lex_skip_line(lx);
			in_solid = 1;
			continue;
		}
		if (!strcasecmp(lx->tok, "endsolid")) {
			lex_skip_line(lx);
			in_solid = 0;
			continue;
		}
		if (strcasecmp(lx->tok, "facet")) {
			rc = stl_fail(err, ENGI_EPARSE, path,
				      "line %zu: expected 'facet' or 'endsolid', found '%s'",
				      lx->line, lx->tok);
			break;
		}
		if (m->ntris == max_tris) {
			rc = stl_fail(err, ENGI_ETOOBIG, path, "more than %zu triangles", max_tris);
			break;
		}
		if (m->ntris == alloc) {
			size_t want = alloc ? 2 * alloc : 1024;
			if (want > max_tris)
				want = max_tris;
			if (reserve(m, &alloc, want) < 0) {
				rc = stl_fail(err, ENGI_ENOMEM, path, "out of memory at facet %zu",
					      m->ntris);
				break;
			}
		}
		double v[9];
		rc = read_facet(lx, v, m->ntris, err);
		if (rc == 0)
			add_facet(m, v);
	}
	if (rc == 0 && ferror(fp))
		rc = stl_fail(err, ENGI_EIO, path, "%s", strerror(errno));
	engi_free(lx);
	return rc;
}

static int looks_ascii(const unsigned char *p, size_t n)
{
	size_t i = 0;
	while (i < n && isspace(p[i]))
		i++;
	if (n - i < 5 || strncasecmp((const char *)p + i, "solid", 5))
		return 0;
	for (; i < n; i++)
		if (p[i] == 0 || (p[i] < 32 && !isspace(p[i])))
			return 0;
	return 1;
}

int engi_stl_read(const char *path, struct engi_mesh *m, size_t max_tris, struct engi_error *err)
{
	engi_mesh_release(m);
	if (max_tris > STL_TRIS_MAX)
		max_tris = STL_TRIS_MAX;
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return stl_fail(err, ENGI_EIO, path, "%s", strerror(errno));
	struct stat st;
	int rc = 0;
	if (fstat(fileno(fp), &st) < 0) {
		rc = stl_fail(err, ENGI_EIO, path, "%s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = stl_fail(err, ENGI_EIO, path, "not a regular file");
		goto out;
	}
	uint64_t size = (uint64_t)st.st_size;
	if (size == 0) {
		rc = stl_fail(err, ENGI_EPARSE, path, "empty file");
		goto out;
	}
	unsigned char head[STL_SNIFF];
	size_t nhead = fread(head, 1, sizeof(head), fp);
	if (nhead < (size < sizeof(head) ? size : sizeof(head))) {
		rc = stl_fail(err, ENGI_EIO, path, "short read");
		goto out;
	}
	uint64_t count = 0, need = 0;
	if (size >= STL_HEADER) {
		count = (uint64_t)head[80] | (uint64_t)head[81] << 8 | (uint64_t)head[82] << 16 |
			(uint64_t)head[83] << 24;
		need = STL_HEADER + STL_FACET * count;
	}
	if (size >= STL_HEADER && size == need) {
		if (count > max_tris) {
			rc =
			    stl_fail(err, ENGI_ETOOBIG, path, "%llu triangles, over the cap of %zu",
				     (unsigned long long)count, max_tris);
			goto out;
		}
		if (fseek(fp, STL_HEADER, SEEK_SET) < 0) {
			rc = stl_fail(err, ENGI_EIO, path, "%s", strerror(errno));
			goto out;
		}
		rc = read_binary(fp, path, count, m, err);
	} else if (looks_ascii(head, nhead)) {
		rewind(fp);
		rc = read_ascii(fp, path, max_tris, m, err);
	} else if (size < STL_HEADER) {
		rc = stl_fail(
		    err, ENGI_EPARSE, path,
		    "neither ASCII STL nor binary STL (%llu bytes, shorter than the %d-byte "
		    "binary header)",
		    (unsigned long long)size, STL_HEADER);
	} else {
		rc =
		    stl_fail(err, ENGI_EPARSE, path,
			     "%s: the binary header says %llu triangles (%llu bytes) but the "
			     "file has %llu bytes",
			     size < need ? "truncated" : "trailing data", (unsigned long long)count,
			     (unsigned long long)need, (unsigned long long)size);
	}
out:
	fclose(fp);
	if (rc < 0)
		engi_mesh_release(m);
	return rc;
}
