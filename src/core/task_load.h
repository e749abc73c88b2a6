/*
 * task_load.h - what the suite shares with the task file parser (task.c)
 * and the task hash (task_hash.c); private to src/core.
 */
#ifndef ENGI_TASK_LOAD_H
#define ENGI_TASK_LOAD_H

#include "arena.h"
#include "engi/error.h"
#include "engi/sha256.h"
#include "task.h"

#include <jansson.h>

/* A task from its JSON (root, borrowed), named file in messages, its
 * relative paths resolved against absdir; strings in a. */
int task_from_json(struct arena *a, const char *file, const char *absdir, json_t *root,
		   struct task *t, struct engi_error *err);
/* Frees what t holds outside the arena (criteria, compiled patterns). */
void task_release(struct task *t);

/* A file of the task's folder, rel its path there and hex its SHA-256,
 * into the hash of the task's files. */
void task_hash_add_file(struct engi_sha256 *files, const char *rel, const char *hex);
/* Files a verifier kind reads from the task's folder (dir, absolute) go
 * into files: every string in v that names one. */
void task_hash_verifier_files(struct engi_sha256 *files, const char *dir, json_t *v);
/* The task's hash: canon (its canonical JSON) and files, as hex. */
void task_hash_final(const char *canon, struct engi_sha256 *files, char hex[65]);

#endif
