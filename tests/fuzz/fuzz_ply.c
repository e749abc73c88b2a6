/* Fuzz target: the PLY reader on arbitrary bytes. */
#include "fuzz_readers.h"

#include "engi/meshio.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct engi_mesh m;
	struct engi_error e;
	engi_mesh_init(&m);
	engi_error_init(&e);
	int rc = engi_ply_parse((const char *)data, size, "fuzz.ply", &m, FUZZ_MAX_VERTS,
				FUZZ_MAX_TRIS, &e);
	fuzz_check(rc, &m, &e, "cannot read PLY 'fuzz.ply': ");
	engi_mesh_release(&m);
	return 0;
}
