/*
 * step.h - STEP files through gmsh: the STEP file is tessellated by the
 * `gmsh` program (a host tool, Debian package gmsh; started with
 * child_spawn) into an STL in a private temporary folder, which the STL
 * reader of kernels/ then reads. gmsh runs with its standard output and
 * error sent to a log file in that folder, in a process group of its own,
 * under a time limit; the last line of its log ends up in the message when
 * it fails.
 *
 * kernels/ start no programs: engi_mesh_read reads a .step or .stp file
 * through the converter step_install() hands it (engi_meshio_set_step), so
 * that the verifiers and the kernel commands of this program read STEP as
 * before.
 */
#ifndef ENGI_STEP_H
#define ENGI_STEP_H

#include <stddef.h>

#include "engi/error.h"

struct engi_mesh;

#define STEP_GMSH_TIMEOUT_S 600

/*
 * Tessellates the STEP file path with elements of at most tol (0: gmsh's
 * default size) into m (released first), at most max_tris triangles.
 * Returns 0, ENGI_EINVALID (negative tol), ENGI_EIO (unreadable file, no
 * temporary folder), ENGI_EENV (gmsh not on PATH, cannot start),
 * ENGI_ETIMEOUT, ENGI_EPARSE (gmsh failed) or what engi_stl_read returns.
 */
int step_tessellate(const char *path, double tol, struct engi_mesh *m, size_t max_tris,
		    struct engi_error *err);

/* Makes engi_mesh_read read STEP files with step_tessellate. */
void step_install(void);

#endif
