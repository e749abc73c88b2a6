/* OBJ, PLY and XYZ readers on round trips and broken files; STEP through
 * gmsh on a box with a bore, and the message when gmsh is missing. */
#include "check.h"
#include "kernels/meshgen.h"

#include "engi/error.h"
#include "engi/mesh.h"
#include "engi/meshio.h"

#include <stdlib.h>
#include <unistd.h>

#define PI 3.14159265358979323846

static char dir[64];

static const char *tmp(const char *name)
{
	static char path[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

static struct engi_mesh_report analyze(struct engi_mesh *m)
{
	struct engi_mesh_report r;
	memset(&r, 0, sizeof(r));
	CHECK_INT(engi_mesh_weld(m, 0, NULL), 0);
	CHECK_INT(engi_mesh_analyze(m, &r, NULL), 0);
	return r;
}

/* The torus as OBJ: normals and texture lines, v/vt/vn corners, relative
 * indices, and its faces paired back into quads. */
static void write_obj(const char *path, const struct engi_mesh *m)
{
	FILE *f = fopen(path, "w");
	fprintf(f, "# torus\nmtllib x.mtl\no torus\n");
	for (size_t v = 0; v < m->nverts; v++)
		fprintf(f, "v %.17g %.17g %.17g\nvn 0 0 1\nvt 0.5 0.5\n", m->xyz[3 * v],
			m->xyz[3 * v + 1], m->xyz[3 * v + 2]);
	fprintf(f, "g all\nusemtl steel\ns off\n");
	for (size_t t = 0; t + 1 < m->ntris; t += 2) {
		const uint32_t *a = m->tri + 3 * t;
		/* gen_torus emits (a b c) (a c d): one quad a b c d */
		uint32_t d = m->tri[3 * t + 5];
		if (t % 4 == 0)
			fprintf(f, "f %u/1/1 %u/1/1 %u//1 %u\r\n", a[0] + 1, a[1] + 1, a[2] + 1,
				d + 1);
		else
			fprintf(f, "f %ld %ld %ld %ld\n", (long)a[0] - (long)m->nverts,
				(long)a[1] - (long)m->nverts, (long)a[2] - (long)m->nverts,
				(long)d - (long)m->nverts);
	}
	fclose(f);
}

static void test_obj(void)
{
	struct engi_mesh src, m;
	engi_mesh_init(&src);
	engi_mesh_init(&m);
	gen_torus(&src, 10, 3, 32, 16);
	struct engi_mesh_report want;
	CHECK_INT(engi_mesh_analyze(&src, &want, NULL), 0);
	write_obj(tmp("t.obj"), &src);
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(engi_obj_read(tmp("t.obj"), &m, 100000, 100000, &e), 0);
	CHECK_INT(m.ntris, src.ntris);
	struct engi_mesh_report r = analyze(&m);
	CHECK_NEAR(r.volume, want.volume, 1e-12 * want.volume);
	CHECK_INT(r.genus, 1);
	CHECK_INT(r.inconsistent_edges, 0);

	static const struct {
		const char *text, *msg;
		int code;
	} bad[] = {
	    {"v 0 0 0\nv 1 0 0\nv 0 1 nan\nf 1 2 3\n",
	     "cannot read OBJ 'b.obj': line 3: vertex 3: coordinate z = nan is not finite",
	     ENGI_EPARSE},
	    {"v 0 0 0\nv 1 0 0\nf 1 2 3\nv 0 1 0\n",
	     "cannot read OBJ 'b.obj': line 3: face refers to vertex 3, but 2 are defined above it",
	     ENGI_EPARSE},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -4\n",
	     "cannot read OBJ 'b.obj': line 4: face refers to vertex -4, but 3 are defined above "
	     "it",
	     ENGI_EPARSE},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n",
	     "cannot read OBJ 'b.obj': line 4: face refers to vertex 0, but 3 are defined above it",
	     ENGI_EPARSE},
	    {"v 0 0\n", "cannot read OBJ 'b.obj': line 1: vertex 1: coordinate z is not a number",
	     ENGI_EPARSE},
	    {"v 0 0 0\nv 1 0 0\nf 1 2\n",
	     "cannot read OBJ 'b.obj': line 3: face has 2 corners, fewer than 3", ENGI_EPARSE},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\n",
	     "cannot read OBJ 'b.obj': line 4: more than 3 vertices", ENGI_ETOOBIG},
	    {"# nothing\n", "cannot read OBJ 'b.obj': no vertices", ENGI_EPARSE},
	    {"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 x 3\n",
	     "cannot read OBJ 'b.obj': line 4: face corner 2 is not a vertex index", ENGI_EPARSE},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		engi_error_init(&e);
		CHECK_INT(engi_obj_parse(bad[i].text, strlen(bad[i].text), "b.obj", &m, 3, 10, &e),
			  bad[i].code);
		CHECK_STR(e.msg, bad[i].msg);
		CHECK_INT(m.nverts, 0);
	}
	engi_error_init(&e);
	CHECK_INT(engi_obj_read(tmp("missing.obj"), &m, 10, 10, &e), ENGI_EIO);
	engi_mesh_release(&src);
	engi_mesh_release(&m);
}

static void put_f32(FILE *f, float v)
{
	fwrite(&v, 4, 1, f); /* the test machines are little-endian */
}

/* Torus as PLY with normals, colours, an extra element and quads. */
static void write_ply(const char *path, const struct engi_mesh *m, int binary)
{
	FILE *f = fopen(path, "wb");
	fprintf(f, "ply\nformat %s 1.0\ncomment made by the tests\n",
		binary ? "binary_little_endian" : "ascii");
	fprintf(f,
		"element vertex %zu\nproperty double x\nproperty double y\nproperty double z\n"
		"property float nx\nproperty uchar red\n",
		m->nverts);
	fprintf(f, "element face %zu\nproperty list uchar int vertex_indices\nproperty int flags\n",
		m->ntris / 2);
	fprintf(f, "element camera 1\nproperty float view\nend_header\n");
	for (size_t v = 0; v < m->nverts; v++) {
		if (binary) {
			fwrite(m->xyz + 3 * v, 8, 3, f);
			put_f32(f, 0.5f);
			fputc(200, f);
		} else {
			fprintf(f, "%.17g %.17g %.17g 0.5 200\n", m->xyz[3 * v], m->xyz[3 * v + 1],
				m->xyz[3 * v + 2]);
		}
	}
	for (size_t t = 0; t + 1 < m->ntris; t += 2) {
		int32_t q[4] = {(int32_t)m->tri[3 * t], (int32_t)m->tri[3 * t + 1],
				(int32_t)m->tri[3 * t + 2], (int32_t)m->tri[3 * t + 5]};
		if (binary) {
			fputc(4, f);
			fwrite(q, 4, 4, f);
			int32_t fl = 7;
			fwrite(&fl, 4, 1, f);
		} else {
			fprintf(f, "4 %d %d %d %d 7\n", q[0], q[1], q[2], q[3]);
		}
	}
	if (binary)
		put_f32(f, 1.0f);
	else
		fprintf(f, "1.0\n");
	fclose(f);
}

static void test_ply(void)
{
	struct engi_mesh src, m;
	engi_mesh_init(&src);
	engi_mesh_init(&m);
	gen_torus(&src, 10, 3, 32, 16);
	struct engi_mesh_report want;
	CHECK_INT(engi_mesh_analyze(&src, &want, NULL), 0);
	struct engi_error e;
	for (int binary = 0; binary < 2; binary++) {
		const char *p = tmp(binary ? "b.ply" : "a.ply");
		write_ply(p, &src, binary);
		engi_error_init(&e);
		int rc = engi_ply_read(p, &m, 100000, 100000, &e);
		CHECK_INT(rc, 0);
		if (rc)
			fprintf(stderr, "%s\n", e.msg);
		CHECK_INT(m.ntris, src.ntris);
		struct engi_mesh_report r = analyze(&m);
		CHECK_NEAR(r.volume, want.volume, 1e-12 * want.volume);
		CHECK_INT(r.genus, 1);
	}
	static const char cloud[] =
	    "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\n"
	    "property float y\nproperty float z\nend_header\n1 2 3\n4 5 6\n";
	engi_error_init(&e);
	CHECK_INT(engi_ply_parse(cloud, strlen(cloud), "c.ply", &m, 10, 10, &e), 0);
	CHECK_INT(m.nverts, 2);
	CHECK_INT(m.ntris, 0);
	CHECK_NEAR(m.xyz[5], 6, 0);

	static const char hdr[] = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
				  "property float y\nproperty float z\nelement face 1\n"
				  "property list uchar int vertex_indices\nend_header\n";
	static const struct {
		const char *body, *msg;
		int code;
	} bad[] = {
	    {"0 0 0\n1 0 0\n0 inf 0\n3 0 1 2\n",
	     "cannot read PLY 'b.ply': vertex 2: coordinate y = inf is not finite", ENGI_EPARSE},
	    {"0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n",
	     "cannot read PLY 'b.ply': face 0 refers to vertex 3, but there are 3", ENGI_EPARSE},
	    {"0 0 0\n1 0 0\n0 1 0\n3 0 1\n",
	     "cannot read PLY 'b.ply': face 0: list 'vertex_indices' is truncated", ENGI_EPARSE},
	    {"0 0 0\n1 0\n",
	     "cannot read PLY 'b.ply': vertex 1: property 'z' is missing or not a number",
	     ENGI_EPARSE},
	    {"0 0 0\n1 0 0\n0 1 0\n2000 0 1 2\n",
	     "cannot read PLY 'b.ply': face 0: list 'vertex_indices' has 2000 items, over the cap "
	     "of "
	     "1024",
	     ENGI_ETOOBIG},
	};
	char text[1024];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", hdr, bad[i].body);
		engi_error_init(&e);
		CHECK_INT(engi_ply_parse(text, strlen(text), "b.ply", &m, 10, 10, &e), bad[i].code);
		CHECK_STR(e.msg, bad[i].msg);
		CHECK_INT(m.nverts, 0);
	}
	static const struct {
		const char *text, *msg;
		int code;
	} badh[] = {
	    {"plx\n", "cannot read PLY 'b.ply': does not start with 'ply'", ENGI_EPARSE},
	    {"ply\nformat binary_big_endian 1.0\nend_header\n",
	     "cannot read PLY 'b.ply': header line 2: binary big-endian PLY is not supported "
	     "(convert it to little-endian or ASCII)",
	     ENGI_ENOTSUP},
	    {"ply\nformat ascii 1.0\nelement vertex 2\n",
	     "cannot read PLY 'b.ply': header has no 'end_header'", ENGI_EPARSE},
	    {"ply\nformat ascii 1.0\nelement vertex 20\nproperty float x\nproperty float y\n"
	     "property float z\nend_header\n",
	     "cannot read PLY 'b.ply': 20 vertices, over the cap of 10", ENGI_ETOOBIG},
	    {"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
	     "end_header\n",
	     "cannot read PLY 'b.ply': element 'vertex' lacks property x, y or z", ENGI_EPARSE},
	    {"ply\nformat ascii 1.0\nelement vertex 1\nproperty quad x\nend_header\n",
	     "cannot read PLY 'b.ply': header line 4: unknown type 'quad'", ENGI_EPARSE},
	};
	for (size_t i = 0; i < sizeof(badh) / sizeof(badh[0]); i++) {
		engi_error_init(&e);
		CHECK_INT(
		    engi_ply_parse(badh[i].text, strlen(badh[i].text), "b.ply", &m, 10, 10, &e),
		    badh[i].code);
		CHECK_STR(e.msg, badh[i].msg);
	}
	/* binary, truncated in the middle of a vertex */
	write_ply(tmp("c.ply"), &src, 1);
	FILE *f = fopen(tmp("c.ply"), "rb");
	char *buf = malloc(1 << 20);
	size_t n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	const char *body = strstr(buf, "end_header\n") + 11;
	size_t cut = (size_t)(body - buf) + 10 * 29 + 5;
	CHECK(cut < n);
	engi_error_init(&e);
	CHECK_INT(engi_ply_parse(buf, cut, "c.ply", &m, 100000, 100000, &e), ENGI_EPARSE);
	CHECK_STR(e.msg,
		  "cannot read PLY 'c.ply': vertex 10: property 'x' is missing or not a number");
	free(buf);
	engi_mesh_release(&src);
	engi_mesh_release(&m);
}

static void test_xyz(void)
{
	struct engi_mesh m;
	engi_mesh_init(&m);
	static const char ok[] = "# scan\n1 2 3\n\n4,5,6, 0,0,1\r\n  7\t8\t9 255 0 0\n";
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(engi_xyz_parse(ok, strlen(ok), "p.xyz", &m, 10, &e), 0);
	CHECK_INT(m.nverts, 3);
	CHECK_NEAR(m.xyz[3], 4, 0);
	CHECK_NEAR(m.xyz[8], 9, 0);
	static const char nan_pt[] = "1 2 3\n4 NaN 6\n";
	engi_error_init(&e);
	CHECK_INT(engi_xyz_parse(nan_pt, strlen(nan_pt), "p.xyz", &m, 10, &e), ENGI_EPARSE);
	CHECK_STR(e.msg,
		  "cannot read XYZ 'p.xyz': line 2: point 2: coordinate y = nan is not finite");
	static const char short_pt[] = "1 2\n";
	engi_error_init(&e);
	CHECK_INT(engi_xyz_parse(short_pt, strlen(short_pt), "p.xyz", &m, 10, &e), ENGI_EPARSE);
	CHECK_STR(e.msg,
		  "cannot read XYZ 'p.xyz': line 1: coordinate z of point 1 is not a number");
	engi_error_init(&e);
	CHECK_INT(engi_xyz_parse(ok, strlen(ok), "p.xyz", &m, 2, &e), ENGI_ETOOBIG);
	CHECK_STR(e.msg, "cannot read XYZ 'p.xyz': more than 2 points");
	CHECK_INT(gen_write_file(tmp("p.xyz"), ok, strlen(ok)), 0);
	engi_error_init(&e);
	CHECK_INT(engi_cloud_read(tmp("p.xyz"), &m, 10, &e), 0);
	CHECK_INT(m.nverts, 3);
	engi_error_init(&e);
	CHECK_INT(engi_mesh_read(tmp("p.dxf"), &m, 10, 10, &e), ENGI_ENOTSUP);
	engi_mesh_release(&m);
}

/* kernels/ start no programs: a STEP file without the converter the
 * program installs is refused (tests/core/test_step.c runs gmsh). */
static void test_step_refused(void)
{
	CHECK_INT(gen_write_file(tmp("part.step"), "ISO-10303-21;\n", 14), 0);
	struct engi_mesh m;
	engi_mesh_init(&m);
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(engi_mesh_read(tmp("part.step"), &m, 1000, 1000, &e), ENGI_ENOTSUP);
	CHECK(strstr(e.msg, "STEP files need a tessellating program") != NULL);
	CHECK(m.nverts == 0 && m.ntris == 0);
	engi_error_init(&e);
	CHECK_INT(engi_cloud_read(tmp("part.step"), &m, 1000, &e), ENGI_ENOTSUP);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/engi-meshio-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_obj();
	test_ply();
	test_xyz();
	test_step_refused();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_exit();
}
