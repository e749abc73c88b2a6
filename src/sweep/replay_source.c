#include "replay_source.h"

#include "engi/alloc.h"
#include "store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define REPLAY_MAX_TRIES 64

static pthread_mutex_t replay_lock = PTHREAD_MUTEX_INITIALIZER;

struct cand {
	const struct engi_res_episode *e;
	int same_trial;
};

static int cmp_cand(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	if (a->same_trial != b->same_trial)
		return b->same_trial - a->same_trial;
	if (a->e->trial != b->e->trial)
		return a->e->trial < b->e->trial ? -1 : 1;
	int c = strcmp(a->e->model, b->e->model);
	return c ? c : strcmp(a->e->cell, b->e->cell);
}

static int load_locked(const char *path, const char *task_id, int trial, char **jsonl, size_t *len,
		       struct engi_error *err)
{
	struct engi_results res;
	TRY(store_read(path, &res, err));
	struct cand *c = engi_calloc(res.nepisodes ? res.nepisodes : 1, sizeof(*c));
	if (!c) {
		engi_results_release(&res);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	size_t n = 0;
	for (size_t i = 0; i < res.nepisodes; i++)
		if (!strcmp(res.episodes[i].task_id, task_id) && res.episodes[i].turns > 0) {
			c[n].e = &res.episodes[i];
			c[n++].same_trial = res.episodes[i].trial == trial;
		}
	qsort(c, n, sizeof(*c), cmp_cand);
	int rc = ENGI_ENOTFOUND;
	for (size_t i = 0; i < n && i < REPLAY_MAX_TRIES; i++) {
		char *t = NULL;
		size_t tl = 0;
		struct engi_error e;
		engi_error_init(&e);
		if (store_read_trace(path, c[i].e->cell, &t, &tl, &e) < 0)
			continue;
		if (strstr(t, "\"ev\":\"model_reply\"")) {
			*jsonl = t;
			*len = tl;
			rc = 0;
			break;
		}
		engi_free(t);
	}
	if (rc < 0)
		engi_raise(err, rc, "'%s' has no episode of task '%s' with model replies", path,
			   task_id);
	engi_free(c);
	engi_results_release(&res);
	return rc;
}

int replay_source_load(const char *results_path, const char *task_id, int trial, char **jsonl,
		       size_t *len, struct engi_error *err)
{
	*jsonl = NULL;
	*len = 0;
	pthread_mutex_lock(&replay_lock);
	int rc = load_locked(results_path, task_id, trial, jsonl, len, err);
	pthread_mutex_unlock(&replay_lock);
	return rc;
}
