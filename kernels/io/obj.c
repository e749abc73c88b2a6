/*
 * Wavefront OBJ reader: `v` lines give vertices, `f` lines faces (index,
 * index/uv, index//normal or index/uv/normal; negative indices count back
 * from the latest vertex). Everything else (normals, texture coordinates,
 * groups, materials, lines) is skipped. Faces may refer only to vertices
 * defined above them, as the format says.
 */
#include "engi/meshio.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/mesh.h"
#include "reader.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 5, 6))) static int
obj_fail(struct engi_error *err, int code, const char *name, size_t line, const char *fmt, ...)
{
	char msg[ENGI_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line)
		return engi_raise(err, code, "cannot read OBJ '%s': line %zu: %s", name, line, msg);
	return engi_raise(err, code, "cannot read OBJ '%s': %s", name, msg);
}

static int keyword(const char *s, size_t n, const char *kw)
{
	size_t k = strlen(kw);
	return n >= k && !memcmp(s, kw, k) && (n == k || s[k] == ' ' || s[k] == '\t');
}

static int parse_face(struct io_mesh *b, const char *s, const char *end, const char *name,
		      size_t line, struct engi_error *err)
{
	uint32_t idx[ENGI_MESHIO_POLYGON_MAX];
	size_t n = 0;
	size_t nv = b->m->nverts;
	for (;;) {
		engi_io_skip_blanks(&s, end, 0);
		if (s >= end || *s == '#')
			break;
		long long v;
		if (engi_io_integer(&s, end, &v) < 0)
			return obj_fail(err, ENGI_EPARSE, name, line,
					"face corner %zu is not a vertex index", n + 1);
		/* skip /uv/normal */
		while (s < end && *s != ' ' && *s != '\t')
			s++;
		long long abs_idx = v > 0 ? v : (long long)nv + v + 1;
		if (v == 0 || abs_idx < 1 || abs_idx > (long long)nv)
			return obj_fail(err, ENGI_EPARSE, name, line,
					"face refers to vertex %lld, but %zu are defined above it",
					v, nv);
		if (n == ENGI_MESHIO_POLYGON_MAX)
			return obj_fail(err, ENGI_ETOOBIG, name, line,
					"face has more than %d corners", ENGI_MESHIO_POLYGON_MAX);
		idx[n++] = (uint32_t)(abs_idx - 1);
	}
	if (n < 3)
		return obj_fail(err, ENGI_EPARSE, name, line, "face has %zu corners, fewer than 3",
				n);
	for (size_t k = 1; k + 1 < n; k++) {
		int rc = engi_io_add_tri(b, idx[0], idx[k], idx[k + 1]);
		if (rc == ENGI_ETOOBIG)
			return obj_fail(err, rc, name, line, "more than %zu triangles",
					b->max_tris);
		if (rc < 0)
			return obj_fail(err, rc, name, line, "out of memory");
	}
	return 0;
}

int engi_obj_parse(const char *buf, size_t len, const char *name, struct engi_mesh *m,
		   size_t max_verts, size_t max_tris, struct engi_error *err)
{
	struct io_mesh b;
	engi_io_mesh_start(&b, m, max_verts, max_tris);
	struct io_lines l = {buf, buf + len, 0};
	const char *s;
	size_t n;
	int rc = 0;
	while (rc == 0 && engi_io_next_line(&l, &s, &n)) {
		const char *end = s + n;
		engi_io_skip_blanks(&s, end, 0);
		n = (size_t)(end - s);
		if (keyword(s, n, "v")) {
			s += 1;
			double p[3];
			for (int d = 0; d < 3 && rc == 0; d++)
				if (engi_io_number(&s, end, &p[d]) < 0)
					rc = obj_fail(err, ENGI_EPARSE, name, l.lineno,
						      "vertex %zu: coordinate %c is not a number",
						      m->nverts + 1, "xyz"[d]);
			if (rc)
				break;
			int bad = 0;
			while (bad < 3 && engi_coord_ok(p[bad]))
				bad++;
			if (bad < 3) {
				rc = obj_fail(err, ENGI_EPARSE, name, l.lineno,
					      "vertex %zu: coordinate %c = %g %s", m->nverts + 1,
					      "xyz"[bad], p[bad], engi_coord_problem(p[bad]));
				break;
			}
			rc = engi_io_add_vertex(&b, p);
			if (rc == ENGI_ETOOBIG)
				rc = obj_fail(err, rc, name, l.lineno, "more than %zu vertices",
					      b.max_verts);
			else if (rc < 0)
				rc = obj_fail(err, rc, name, l.lineno, "out of memory");
		} else if (keyword(s, n, "f")) {
			rc = parse_face(&b, s + 1, end, name, l.lineno, err);
		}
	}
	if (rc == 0 && m->ntris == 0 && m->nverts == 0)
		rc = obj_fail(err, ENGI_EPARSE, name, 0, "no vertices");
	if (rc < 0)
		engi_io_mesh_abort(&b);
	return rc;
}

int engi_obj_read(const char *path, struct engi_mesh *m, size_t max_verts, size_t max_tris,
		  struct engi_error *err)
{
	char *buf;
	size_t len;
	engi_mesh_release(m);
	TRY(engi_io_slurp(path, NULL, "OBJ", ENGI_MESHIO_BYTES_MAX, &buf, &len, err));
	int rc = engi_obj_parse(buf, len, path, m, max_verts, max_tris, err);
	engi_free(buf);
	return rc;
}
