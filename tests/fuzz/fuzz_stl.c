/* Fuzz target: the STL reader, which reads files, on arbitrary bytes
 * written to a temporary file. */
#include "fuzz_readers.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/engi-fuzz-stl-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		abort();
	FILE *f = fdopen(fd, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	struct engi_mesh m;
	struct engi_error e;
	engi_mesh_init(&m);
	engi_error_init(&e);
	int rc = engi_stl_read(path, &m, FUZZ_MAX_TRIS, &e);
	unlink(path);
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "cannot read STL '%s': ", path);
	fuzz_check(rc, &m, &e, prefix);
	engi_mesh_release(&m);
	return 0;
}
