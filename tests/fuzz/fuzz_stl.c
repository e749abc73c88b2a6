/* Fuzz target: the STL reader, which reads files, on arbitrary bytes written
 * to a file. STEP files reach it too: gmsh tessellates them to STL
 * (src/core/step.c), so gmsh's output is part of the corpus. */
#include "fuzz_file.h"
#include "fuzz_readers.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	fuzz_write_file("in.stl", data, size, path, sizeof(path));
	struct engi_mesh m;
	struct engi_error e;
	engi_mesh_init(&m);
	engi_error_init(&e);
	int rc = engi_stl_read(path, &m, FUZZ_MAX_TRIS, &e);
	char prefix[160];
	snprintf(prefix, sizeof(prefix), "cannot read STL '%s': ", path);
	fuzz_check(rc, &m, &e, prefix);
	engi_mesh_release(&m);
	return 0;
}
