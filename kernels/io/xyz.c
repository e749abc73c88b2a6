/*
 * XYZ point lists: one point a line, x y z first, further columns (normals,
 * colours) ignored; blanks or commas separate; '#' starts a comment.
 */
#include "engi/meshio.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/mesh.h"
#include "reader.h"

#include <math.h>

int engi_xyz_parse(const char *buf, size_t len, const char *name, struct engi_mesh *m,
		   size_t max_verts, struct engi_error *err)
{
	struct io_mesh b;
	engi_io_mesh_start(&b, m, max_verts, 0);
	struct io_lines l = {buf, buf + len, 0};
	const char *s;
	size_t n;
	int rc = 0;
	while (rc == 0 && engi_io_next_line(&l, &s, &n)) {
		const char *end = s + n;
		engi_io_skip_blanks(&s, end, 1);
		if (s == end || *s == '#')
			continue;
		double p[3];
		for (int d = 0; d < 3 && rc == 0; d++) {
			engi_io_skip_blanks(&s, end, 1);
			if (engi_io_number(&s, end, &p[d]) < 0)
				rc = engi_raise(err, ENGI_EPARSE,
						"cannot read XYZ '%s': line %zu: coordinate %c of "
						"point %zu is not a number",
						name, l.lineno, "xyz"[d], m -> nverts + 1);
		}
		if (rc)
			break;
		int bad = 0;
		while (bad < 3 && engi_coord_ok(p[bad]))
			bad++;
		if (bad < 3) {
			rc =
			    engi_raise(err, ENGI_EPARSE,
				       "cannot read XYZ '%s': line %zu: point %zu: coordinate %c = "
				       "%g %s",
				       name, l.lineno, m->nverts + 1, "xyz"[bad], p[bad],
				       engi_coord_problem(p[bad]));
			break;
		}
		rc = engi_io_add_vertex(&b, p);
		if (rc == ENGI_ETOOBIG)
			rc = engi_raise(err, rc, "cannot read XYZ '%s': more than %zu points", name,
					b.max_verts);
		else if (rc < 0)
			rc = engi_raise(err, rc, "cannot read XYZ '%s': out of memory", name);
	}
	if (rc == 0 && m->nverts == 0)
		rc = engi_raise(err, ENGI_EPARSE, "cannot read XYZ '%s': no points", name);
	if (rc < 0)
		engi_io_mesh_abort(&b);
	return rc;
}

int engi_xyz_read(const char *path, struct engi_mesh *m, size_t max_verts, struct engi_error *err)
{
	char *buf;
	size_t len;
	engi_mesh_release(m);
	TRY(engi_io_slurp(path, NULL, "XYZ", ENGI_MESHIO_BYTES_MAX, &buf, &len, err));
	int rc = engi_xyz_parse(buf, len, path, m, max_verts, err);
	engi_free(buf);
	return rc;
}
