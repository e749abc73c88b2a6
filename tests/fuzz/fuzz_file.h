/*
 * fuzz_file.h - for targets whose reader takes a path: the input written to
 * a file in a private folder made once per process (removed at exit), so
 * that every run reads the bytes it was given. Any failure to write aborts.
 * With FUZZ_VERBOSE set in the environment, fuzz_note prints what each
 * input gave (to see how deep a corpus file gets).
 */
#ifndef ENGI_FUZZ_FILE_H
#define ENGI_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir_path[64];

static void fuzz_dir_remove(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fuzz_dir_path);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", fuzz_dir_path);
}

/* The private folder, made on first use. */
static inline const char *fuzz_dir(void)
{
	if (!fuzz_dir_path[0]) {
		snprintf(fuzz_dir_path, sizeof(fuzz_dir_path), "/tmp/engi-fuzz-XXXXXX");
		if (!mkdtemp(fuzz_dir_path))
			abort();
		atexit(fuzz_dir_remove);
	}
	return fuzz_dir_path;
}

/* Writes size bytes to fuzz_dir()/name; the path goes to out. */
static inline void fuzz_write_file(const char *name, const uint8_t *data, size_t size, char *out,
				   size_t cap)
{
	if ((size_t)snprintf(out, cap, "%s/%s", fuzz_dir(), name) >= cap)
		abort();
	FILE *f = fopen(out, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
}

/* Prints rc and the message when FUZZ_VERBOSE is set. */
static inline void fuzz_note(const char *what, int rc, const char *msg)
{
	static int verbose = -1;
	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (verbose)
		fprintf(stderr, "%s: %d %s\n", what, rc, rc < 0 ? msg : "ok");
}

#endif
