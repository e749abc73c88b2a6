/*
 * STEP files through gmsh (src/core/step.c): a box with a bore made by gmsh
 * itself, tessellated at the default and at a fine element size, read
 * through engi_mesh_read once step_install has handed it the converter;
 * gmsh missing from PATH, a file that is not STEP, a negative size.
 */
#include "check.h"
#include "kernels/meshgen.h"
#include "step.h"

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

static void test_step(void)
{
	static const char geo[] =
	    "SetFactory(\"OpenCASCADE\");\n"
	    "Box(1) = {0, 0, 0, 10, 20, 30};\n"
	    "Cylinder(2) = {5, 10, -1, 0, 0, 32, 3};\n"
	    "BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };\n";
	CHECK_INT(gen_write_file(tmp("part.geo"), geo, strlen(geo)), 0);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "gmsh %s -0 -o %s -v 0 >/dev/null 2>&1", tmp("part.geo"),
		 tmp("part.step"));
	CHECK_INT(system(cmd), 0);
	struct engi_mesh m;
	engi_mesh_init(&m);
	struct engi_error e;
	engi_error_init(&e);
	/* the default element size: coarse, but closed; refused until the
	 * converter is installed */
	CHECK_INT(engi_mesh_read(tmp("part.step"), &m, 1000000, 1000000, &e), ENGI_ENOTSUP);
	step_install();
	engi_error_init(&e);
	CHECK_INT(engi_mesh_read(tmp("part.step"), &m, 1000000, 1000000, &e), 0);
	CHECK_INT(engi_mesh_weld(&m, 1e-9, NULL), 0);
	struct engi_mesh_report r;
	CHECK_INT(engi_mesh_analyze(&m, &r, NULL), 0);
	CHECK_INT(r.watertight, 1);
	/* elements of at most 0.5: the bore's polygon is within 0.1 % */
	engi_error_init(&e);
	int rc = step_tessellate(tmp("part.step"), 0.5, &m, 1000000, &e);
	CHECK_INT(rc, 0);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	CHECK_INT(engi_mesh_weld(&m, 1e-9, NULL), 0);
	CHECK_INT(engi_mesh_analyze(&m, &r, NULL), 0);
	double want = 10 * 20 * 30 - PI * 9 * 30;
	printf("STEP box with bore: %zu triangles, volume %.3f (solid %.3f), genus %ld\n", r.ntris,
	       r.volume, want, r.genus);
	CHECK_INT(r.watertight, 1);
	CHECK_INT(r.genus, 1);
	CHECK_NEAR(r.volume, want, 0.002 * want);

	/* without gmsh on PATH */
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	setenv("PATH", dir, 1);
	engi_error_init(&e);
	CHECK_INT(step_tessellate(tmp("part.step"), 0, &m, 1000, &e), ENGI_EENV);
	char want_msg[512];
	snprintf(want_msg, sizeof(want_msg),
		 "cannot tessellate STEP '%s': gmsh is not installed or not on PATH (on Debian: "
		 "apt-get install gmsh)",
		 tmp("part.step"));
	CHECK_STR(e.msg, want_msg);
	if (saved) {
		setenv("PATH", saved, 1);
		free(saved);
	}
	/* not a STEP file */
	CHECK_INT(gen_write_file(tmp("junk.step"), "hello\n", 6), 0);
	engi_error_init(&e);
	CHECK_INT(step_tessellate(tmp("junk.step"), 0, &m, 1000, &e), ENGI_EPARSE);
	CHECK(strstr(e.msg, "gmsh failed") != NULL);
	engi_error_init(&e);
	CHECK_INT(step_tessellate(tmp("part.step"), -1, &m, 1000, &e), ENGI_EINVALID);
	engi_mesh_release(&m);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/engi-step-test-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_step();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_exit();
}
