/*
 * Corpus replay: runs a fuzz target's entry point on every file of the
 * folders named on the command line, so that gcc builds (and the sanitizer
 * build) exercise the corpus in ctest without libFuzzer. Exits non-zero
 * when a folder is empty or unreadable; a target that finds a bug aborts.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	size_t total = 0;
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d) {
			perror(argv[i]);
			return 1;
		}
		char *names[4096];
		size_t n = 0;
		struct dirent *de;
		while ((de = readdir(d)) && n < 4096)
			if (de->d_name[0] != '.')
				names[n++] = strdup(de->d_name);
		closedir(d);
		qsort(names, n, sizeof(names[0]), cmp_str);
		if (n == 0) {
			fprintf(stderr, "%s: empty corpus\n", argv[i]);
			return 1;
		}
		for (size_t k = 0; k < n; k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]);
			FILE *f = fopen(path, "rb");
			if (!f) {
				perror(path);
				return 1;
			}
			size_t cap = 1 << 16, len = 0;
			uint8_t *buf = malloc(cap);
			size_t got;
			while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
				len += got;
				if (len == cap) {
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
			if (!buf)
				return 1;
			LLVMFuzzerTestOneInput(buf, len);
			free(buf);
			free(names[k]);
			total++;
		}
	}
	printf("replayed %zu inputs\n", total);
	return 0;
}
