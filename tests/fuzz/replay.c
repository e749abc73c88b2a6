/*
 * Corpus replay: runs a fuzz target's entry point on every file of the
 * folders named on the command line, in name order, so that gcc builds
 * (and the sanitizer build) exercise the corpus in ctest without
 * libFuzzer. With --mutate N it also runs every truncation of each file
 * and N copies of it with three bytes changed (a fixed xorshift series, the
 * first byte kept: targets read a mode from it). Exits non-zero when a
 * folder is empty or unreadable; a target that finds a bug aborts.
 * Usage: replay [--mutate N] DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_FILES_MAX 4096

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The whole file, malloc'd (at least one byte, so that size 0 has a
 * buffer), or NULL. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return NULL;
	}
	size_t cap = 1 << 16, got;
	uint8_t *buf = malloc(cap);
	*len = 0;
	while (buf && (got = fread(buf + *len, 1, cap - *len, f)) > 0) {
		*len += got;
		if (*len == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	return buf;
}

static unsigned long long replay_mutations(const uint8_t *buf, size_t n, long flips,
					   unsigned long long *seed)
{
	unsigned long long runs = 0;
	uint8_t *mut = malloc(n ? n : 1);
	if (!mut)
		abort();
	for (size_t k = 0; k < n; k++, runs++) {
		uint8_t *cut = malloc(k ? k : 1); /* its own size, for ASan */
		if (!cut)
			abort();
		memcpy(cut, buf, k);
		LLVMFuzzerTestOneInput(cut, k);
		free(cut);
	}
	for (long i = 0; i < flips && n > 1; i++, runs++) {
		memcpy(mut, buf, n);
		for (int j = 0; j < 3; j++) {
			*seed ^= *seed << 13;
			*seed ^= *seed >> 7;
			*seed ^= *seed << 17;
			mut[1 + *seed % (n - 1)] = (uint8_t)(*seed >> 32);
		}
		LLVMFuzzerTestOneInput(mut, n);
	}
	free(mut);
	return runs;
}

int main(int argc, char **argv)
{
	unsigned long long total = 0, seed = 88172645463325252ULL;
	long flips = -1;
	int first = 1;
	if (argc > 2 && !strcmp(argv[1], "--mutate")) {
		flips = strtol(argv[2], NULL, 10);
		first = 3;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: %s [--mutate N] DIR...\n", argv[0]);
		return 2;
	}
	for (int i = first; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		static char *names[REPLAY_FILES_MAX];
		size_t n = 0;
		struct dirent *de;
		while ((de = readdir(d)))
			if (de->d_name[0] != '.') {
				if (n == REPLAY_FILES_MAX) {
					fprintf(stderr, "%s: over %d files\n", argv[i],
						REPLAY_FILES_MAX);
					return 1;
				}
				names[n++] = strdup(de->d_name);
			}
		closedir(d);
		qsort(names, n, sizeof(names[0]), cmp_str);
		if (n == 0) {
			fprintf(stderr, "%s: empty corpus\n", argv[i]);
			return 1;
		}
		for (size_t k = 0; k < n; k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]);
			size_t len;
			uint8_t *buf = slurp(path, &len);
			if (!buf)
				return 1;
			LLVMFuzzerTestOneInput(buf, len);
			total++;
			if (flips >= 0)
				total += replay_mutations(buf, len, flips, &seed);
			free(buf);
			free(names[k]);
		}
	}
	printf("replayed %llu inputs\n", total);
	return 0;
}
