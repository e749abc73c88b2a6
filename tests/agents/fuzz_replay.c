/*
 * Replays the reply corpus through the fuzz target, then every truncation
 * and a fixed series of byte flips of each file, so that ctest exercises
 * the parsers on malformed input with any compiler (the sanitizer build
 * included). Usage: agents_fuzz_replay CORPUS_DIR.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_FLIPS 2000

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	DIR *d = opendir(argv[1]);
	if (!d) {
		perror(argv[1]);
		return 1;
	}
	struct dirent *de;
	int files = 0;
	unsigned long long runs = 0, seed = 88172645463325252ULL;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", argv[1], de->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		static uint8_t buf[1 << 16], mut[1 << 16];
		size_t n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		files++;
		for (size_t k = 0; k <= n; k++, runs++)
			LLVMFuzzerTestOneInput(buf, k);
		for (int i = 0; i < REPLAY_FLIPS && n > 1; i++, runs++) {
			memcpy(mut, buf, n);
			for (int j = 0; j < 3; j++) {
				seed ^= seed << 13;
				seed ^= seed >> 7;
				seed ^= seed << 17;
				mut[1 + seed % (n - 1)] = (uint8_t)(seed >> 32);
			}
			LLVMFuzzerTestOneInput(mut, n);
		}
	}
	closedir(d);
	printf("%d files, %llu inputs\n", files, runs);
	return files > 0 ? 0 : 1;
}
