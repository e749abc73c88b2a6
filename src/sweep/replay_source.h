/*
 * replay_source.h - finds the recorded trace a `replay:RESULTS.h5` agent
 * plays back: in that results file, the episode of the same task whose
 * trace holds model replies, the same trial preferred, else the lowest
 * trial (models in name order). The episode runner hands this loader to
 * the agent; it reads HDF5 through the store under a process-wide lock, as
 * rank 0 runs episodes in threads. *jsonl is the decompressed trace, the
 * caller's (engi_free).
 */
#ifndef ENGI_REPLAY_SOURCE_H
#define ENGI_REPLAY_SOURCE_H

#include <stddef.h>

#include "engi/error.h"

int replay_source_load(const char *results_path, const char *task_id, int trial, char **jsonl,
		       size_t *len, struct engi_error *err);

#endif
