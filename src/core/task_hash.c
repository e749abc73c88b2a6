/*
 * The hash of a task: its canonical JSON and the content of every file of
 * its folder it names (inputs, drawings, a verifier's reference), so that
 * a changed file is a changed task.
 */
#include "task_load.h"

#include "fsutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void task_hash_add_file(struct engi_sha256 *files, const char *rel, const char *hex)
{
	engi_sha256_update(files, rel, strlen(rel) + 1);
	engi_sha256_update(files, hex, 64);
}

/* Files a verifier kind reads from the task's folder (a reference mesh, frozen
 * truth) decide verdicts as much as the criteria do, so their content goes
 * into the task hash too: every string in the verifier object that names a
 * regular file inside the task's folder. */
void task_hash_verifier_files(struct engi_sha256 *files, const char *dir, json_t *v)
{
	if (json_is_object(v)) {
		const char *key;
		json_t *x;
		json_object_foreach(v, key, x) task_hash_verifier_files(files, dir, x);
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) task_hash_verifier_files(files, dir, x);
	} else if (json_is_string(v)) {
		const char *rel = json_string_value(v);
		char abs[PATH_MAX];
		struct engi_error e;
		engi_error_init(&e);
		if (fs_env_path_check(rel, &e) < 0 ||
		    snprintf(abs, sizeof(abs), "%s/%s", dir, rel) >= (int)sizeof(abs) ||
		    !fs_path_is_file(abs))
			return;
		char *real = realpath(abs, NULL);
		size_t dl = strlen(dir);
		int inside = real && !strncmp(real, dir, dl) && real[dl] == '/';
		free(real);
		char hex[65];
		if (inside && fs_sha256_regular_file(abs, hex, &e) == 0) {
			task_hash_add_file(files, rel, hex);
		}
	}
}

void task_hash_final(const char *canon, struct engi_sha256 *files, char hex[65])
{
	struct engi_sha256 h;
	unsigned char d[32], fd[32];
	engi_sha256_final(files, fd);
	engi_sha256_init(&h);
	engi_sha256_update(&h, canon, strlen(canon));
	engi_sha256_update(&h, fd, sizeof(fd));
	engi_sha256_final(&h, d);
	engi_sha256_hex(d, hex);
}
