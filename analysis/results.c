#include "engi/results.h"

#include "engi/alloc.h"

#include <string.h>

void engi_results_init(struct engi_results *r)
{
	memset(r, 0, sizeof(*r));
}

void engi_results_release(struct engi_results *r)
{
	engi_free(r->tasks);
	engi_free(r->models);
	engi_free(r->conditions);
	engi_free(r->episodes);
	engi_free(r->assertions);
	engi_free(r->metrics);
	engi_free(r->artifacts);
	engi_free(r->task_meta);
	engi_free(r->config_json);
	engi_free(r->sweep_id);
	engi_results_init(r);
}
