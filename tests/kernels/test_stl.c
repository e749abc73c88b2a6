/* STL reader: round trips, format detection, and broken files. */
#include "check.h"
#include "kernels/meshgen.h"

#include "engi/error.h"
#include "engi/mesh.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[64];

static const char *tmp(const char *name)
{
	static char path[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

static int read_stl(const char *path, struct engi_mesh *m, size_t cap, struct engi_error *e)
{
	engi_error_init(e);
	return engi_stl_read(path, m, cap, e);
}

static void test_round_trip(void)
{
	struct engi_mesh src, bin, asc;
	struct engi_error e;
	engi_mesh_init(&src);
	engi_mesh_init(&bin);
	engi_mesh_init(&asc);
	gen_torus(&src, 10, 3, 24, 12);
	CHECK_INT(gen_write_stl_binary(tmp("t.stl"), &src, "binary torus"), 0);
	CHECK_INT(gen_write_stl_ascii(tmp("t-ascii.stl"), &src), 0);
	CHECK_INT(read_stl(tmp("t.stl"), &bin, 1000, &e), 0);
	CHECK_INT(read_stl(tmp("t-ascii.stl"), &asc, 1000, &e), 0);
	CHECK_INT(bin.ntris, src.ntris);
	CHECK_INT(asc.ntris, src.ntris);
	CHECK_INT(bin.nverts, 3 * src.ntris);
	int same_bin = 1, same_asc = 1;
	for (size_t f = 0; f < src.ntris; f++)
		for (int k = 0; k < 3; k++)
			for (int c = 0; c < 3; c++) {
				double want = src.xyz[3 * (size_t)src.tri[3 * f + k] + c];
				size_t at = 3 * (3 * f + (size_t)k) + (size_t)c;
				same_bin &= bin.xyz[at] == (double)(float)want;
				same_asc &= asc.xyz[at] == want;
			}
	CHECK(same_bin);
	CHECK(same_asc);
	CHECK_INT(engi_mesh_weld(&asc, 0, NULL), 0);
	CHECK_INT(asc.nverts, src.nverts);
	struct engi_mesh_report r1, r2;
	CHECK_INT(engi_mesh_analyze(&src, &r1, NULL), 0);
	CHECK_INT(engi_mesh_analyze(&asc, &r2, NULL), 0);
	CHECK_NEAR(r2.volume, r1.volume, 1e-12 * r1.volume);
	CHECK_INT(r2.genus, 1);
	engi_mesh_release(&src);
	engi_mesh_release(&bin);
	engi_mesh_release(&asc);
}

static void test_detection(void)
{
	struct engi_mesh src, m;
	struct engi_error e;
	engi_mesh_init(&src);
	engi_mesh_init(&m);
	gen_box(&src, 0, 0, 0, 1, 2, 3);

	/* A binary file whose header starts with "solid". */
	CHECK_INT(gen_write_stl_binary(tmp("solidbin.stl"), &src, "solid exported by a CAD tool"),
		  0);
	CHECK_INT(read_stl(tmp("solidbin.stl"), &m, 100, &e), 0);
	CHECK_INT(m.ntris, 12);
	CHECK_NEAR(m.xyz[3 * 7 + 2], 3, 0); /* facet 2 is box corners 4 5 7: 5 is at z = 3 */

	/* An empty binary file: 84 bytes, no triangles. */
	struct engi_mesh none;
	engi_mesh_init(&none);
	CHECK_INT(gen_write_stl_binary(tmp("empty.stl"), &none, NULL), 0);
	CHECK_INT(read_stl(tmp("empty.stl"), &m, 100, &e), 0);
	CHECK_INT(m.ntris, 0);

	/* ASCII in capitals, CRLF, two solids, a name with spaces. */
	const char *txt =
	    "  SOLID part one\r\n"
	    "FACET NORMAL 0 0 1\r\n OUTER LOOP\r\n"
	    "  VERTEX 0 0 0\r\n  VERTEX 1 0 0\r\n  VERTEX 0 1 0\r\n"
	    " ENDLOOP\r\nENDFACET\r\n"
	    "ENDSOLID part one\r\n"
	    "solid two\nfacet normal 0 0 1 outer loop vertex 0 0 1e1 vertex 1.5e-1 0 10 "
	    "vertex 0 -1 +10 endloop endfacet endsolid\n";
	CHECK_INT(gen_write_file(tmp("two.stl"), txt, strlen(txt)), 0);
	CHECK_INT(read_stl(tmp("two.stl"), &m, 100, &e), 0);
	CHECK_INT(m.ntris, 2);
	CHECK_NEAR(m.xyz[9 + 2], 10, 0);
	CHECK_NEAR(m.xyz[12], 0.15, 0);
	CHECK_NEAR(m.xyz[16], -1, 0);

	/* An ASCII solid without facets is an empty mesh. */
	CHECK_INT(gen_write_file(tmp("nothing.stl"), "solid\nendsolid\n", 15), 0);
	CHECK_INT(read_stl(tmp("nothing.stl"), &m, 100, &e), 0);
	CHECK_INT(m.ntris, 0);
	engi_mesh_release(&src);
	engi_mesh_release(&m);
}

static void expect_error(const char *name, size_t cap, int code, const char *msg)
{
	struct engi_mesh m;
	struct engi_error e;
	engi_mesh_init(&m);
	const char *path = tmp(name);
	int rc = read_stl(path, &m, cap, &e);
	CHECK_INT(rc, code);
	char want[600];
	snprintf(want, sizeof(want), "cannot read STL '%s': %s", path, msg);
	CHECK_STR(e.msg, want);
	CHECK(m.xyz == NULL && m.tri == NULL && m.ntris == 0);
	engi_mesh_release(&m);
}

static void test_errors(void)
{
	struct engi_mesh src;
	engi_mesh_init(&src);
	gen_box(&src, 0, 0, 0, 1, 1, 1);
	CHECK_INT(gen_write_stl_binary(tmp("cube.stl"), &src, NULL), 0);

	/* Truncated binary. */
	FILE *f = fopen(tmp("cube.stl"), "rb");
	unsigned char buf[684];
	CHECK_INT(fread(buf, 1, sizeof(buf), f), 684);
	fclose(f);
	CHECK_INT(gen_write_file(tmp("short.stl"), buf, 674), 0);
	expect_error("short.stl", 100, ENGI_EPARSE,
		     "truncated: the binary header says 12 triangles (684 bytes) but the file "
		     "has 674 bytes");
	/* A count that cannot be right. */
	unsigned char bad[684];
	memcpy(bad, buf, sizeof(bad));
	gen_put_le32(bad + 80, 0xffffffffu);
	CHECK_INT(gen_write_file(tmp("count.stl"), bad, sizeof(bad)), 0);
	expect_error("count.stl", 100, ENGI_EPARSE,
		     "truncated: the binary header says 4294967295 triangles (214748364834 "
		     "bytes) but the file has 684 bytes");
	/* Trailing bytes. */
	unsigned char longer[700];
	memset(longer, 0, sizeof(longer));
	memcpy(longer, buf, sizeof(buf));
	CHECK_INT(gen_write_file(tmp("long.stl"), longer, sizeof(longer)), 0);
	expect_error("long.stl", 100, ENGI_EPARSE,
		     "trailing data: the binary header says 12 triangles (684 bytes) but the "
		     "file has 700 bytes");
	/* NaN in facet 3. */
	memcpy(bad, buf, sizeof(bad));
	float nan = NAN;
	memcpy(bad + 84 + 3 * 50 + 12 + 4, &nan, 4);
	CHECK_INT(gen_write_file(tmp("nan.stl"), bad, sizeof(bad)), 0);
	expect_error("nan.stl", 100, ENGI_EPARSE,
		     "facet 3, vertex 1: coordinate y = nan is not finite");
	/* Over the cap. */
	expect_error("cube.stl", 11, ENGI_ETOOBIG, "12 triangles, over the cap of 11");

	/* ASCII problems. */
	const char *inf = "solid x\nfacet normal 0 0 0\nouter loop\nvertex 0 0 0\n"
			  "vertex inf 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid x\n";
	CHECK_INT(gen_write_file(tmp("inf.stl"), inf, strlen(inf)), 0);
	expect_error("inf.stl", 100, ENGI_EPARSE,
		     "line 5: facet 0, vertex 2: coordinate x = inf is not finite");
	const char *cut = "solid x\nfacet normal 0 0 0\nouter loop\nvertex 0 0 0\nvertex 1 0";
	CHECK_INT(gen_write_file(tmp("cut.stl"), cut, strlen(cut)), 0);
	expect_error("cut.stl", 100, ENGI_EPARSE, "line 5: expected a number, found end of file");
	const char *noend = "solid x\nfacet normal 0 0 0\nouter loop\nvertex 0 0 0\n"
			    "vertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\n";
	CHECK_INT(gen_write_file(tmp("noend.stl"), noend, strlen(noend)), 0);
	expect_error("noend.stl", 100, ENGI_EPARSE, "line 9: end of file before 'endsolid'");
	const char *quad =
	    "solid x\nfacet normal 0 0 0\nouter loop\nvertex 0 0 0\n"
	    "vertex 1 0 0\nvertex 0 1 0\nvertex 1 1 0\nendloop\nendfacet\nendsolid\n";
	CHECK_INT(gen_write_file(tmp("quad.stl"), quad, strlen(quad)), 0);
	expect_error("quad.stl", 100, ENGI_EPARSE, "line 7: expected 'endloop', found 'vertex'");
	const char *word = "solid x\nfacet normal 0 0 0\nouter loop\nvertex 0 0 zero\n";
	CHECK_INT(gen_write_file(tmp("word.stl"), word, strlen(word)), 0);
	expect_error("word.stl", 100, ENGI_EPARSE, "line 4: expected a number, found 'zero'");
	const char *after = "solid x\nendsolid x\nsolid y\nendsolid\ngarbage\n";
	CHECK_INT(gen_write_file(tmp("after.stl"), after, strlen(after)), 0);
	expect_error("after.stl", 100, ENGI_EPARSE,
		     "line 5: expected 'solid' or end of file, found 'garbage'");
	char big[1200];
	memset(big, 'a', sizeof(big));
	memcpy(big, "solid x\nfacet ", 14);
	CHECK_INT(gen_write_file(tmp("token.stl"), big, sizeof(big)), 0);
	expect_error("token.stl", 100, ENGI_EPARSE, "line 2: token longer than 256 characters");
	gen_write_stl_ascii(tmp("cube-ascii.stl"), &src);
	expect_error("cube-ascii.stl", 5, ENGI_ETOOBIG, "more than 5 triangles");

	/* Not STL at all. */
	CHECK_INT(gen_write_file(tmp("empty"), "", 0), 0);
	expect_error("empty", 100, ENGI_EPARSE, "empty file");
	CHECK_INT(gen_write_file(tmp("hello.txt"), "hello\n", 6), 0);
	expect_error("hello.txt", 100, ENGI_EPARSE,
		     "neither ASCII STL nor binary STL (6 bytes, shorter than the 84-byte binary "
		     "header)");
	expect_error("missing.stl", 100, ENGI_EIO, "No such file or directory");
	expect_error("", 100, ENGI_EIO, "not a regular file");
	engi_mesh_release(&src);
}

/* Random bytes, with and without a "solid" start: errors, never crashes. */
static void test_garbage(void)
{
	unsigned long long x = 88172645463325252ULL;
	unsigned char buf[4096];
	int errors = 0;
	for (int round = 0; round < 300; round++) {
		size_t n = 1 + (size_t)(round * 37 % 4000);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (unsigned char)x;
			if (round % 3 == 0) /* text-like */
				buf[i] = (unsigned char)(" \nfacetnormalvertex0.1e-+"[x % 24]);
		}
		if (round % 2 == 0 && n > 6)
			memcpy(buf, "solid ", 6);
		if (round % 5 == 0 && n >= 84) { /* a count that matches the size */
			gen_put_le32(buf + 80, (uint32_t)((n - 84) / 50));
			n = 84 + (n - 84) / 50 * 50;
		}
		CHECK_INT(gen_write_file(tmp("junk.stl"), buf, n), 0);
		struct engi_mesh m;
		struct engi_error e;
		engi_mesh_init(&m);
		int rc = read_stl(tmp("junk.stl"), &m, 1000, &e);
		errors += rc < 0;
		CHECK(rc == 0 || (rc < 0 && strncmp(e.msg, "cannot read STL '", 17) == 0));
		engi_mesh_release(&m);
	}
	CHECK(errors > 100);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/engi-stl-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_round_trip();
	test_detection();
	test_errors();
	test_garbage();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_exit();
}
