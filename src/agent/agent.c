#include "agent.h"

#include "engi/alloc.h"

#include <string.h>

extern const struct agent_desc agent_reference;
extern const struct agent_desc agent_flawed;
extern const struct agent_desc agent_noop;
extern const struct agent_desc agent_model;
extern const struct agent_desc agent_replay;

static const struct agent_desc *const registry[] = {&agent_reference, &agent_flawed, &agent_noop,
						    &agent_model,     &agent_replay, NULL};

const struct agent_desc *const *agent_all(void)
{
	return registry;
}

const struct agent_desc *agent_lookup(const char *spec, struct engi_error *err)
{
	const char *colon = strchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
	char names[256] = "";
	for (const struct agent_desc *const *d = registry; *d; d++) {
		if (strlen((*d)->name) == n && !strncmp((*d)->name, spec, n)) {
			if (!(*d)->ops) {
				engi_raise(err, ENGI_ENOTSUP,
					   "agent '%s' is not built into this binary%s%s",
					   (*d)->name, (*d)->not_built_hint ? ": " : "",
					   (*d)->not_built_hint ? (*d)->not_built_hint : "");
				return NULL;
			}
			if ((*d)->takes_variant && (!colon || !colon[1])) {
				engi_raise(err, ENGI_EINVALID,
					   "agent '%s' needs a variant: '%s:NAME'", (*d)->name,
					   (*d)->name);
				return NULL;
			}
			if (!(*d)->takes_variant && colon) {
				engi_raise(err, ENGI_EINVALID, "agent '%s' takes no ':' variant",
					   (*d)->name);
				return NULL;
			}
			return *d;
		}
		if (names[0])
			strncat(names, ", ", sizeof(names) - strlen(names) - 1);
		strncat(names, (*d)->name, sizeof(names) - strlen(names) - 1);
	}
	engi_raise(err, ENGI_ENOTFOUND, "unknown agent '%.*s' (valid: %s)", (int)n, spec, names);
	return NULL;
}

int agent_start(const struct agent_desc *d, const struct agent_ctx *ctx, struct agent **out,
		struct engi_error *err)
{
	*out = NULL;
	struct agent *a = engi_calloc(1, sizeof(*a));
	if (!a)
		RAISE(err, ENGI_ENOMEM, "out of memory starting agent '%s'", d->name);
	a->desc = d;
	if (d->priv_size && !(a->priv = engi_calloc(1, d->priv_size))) {
		engi_free(a);
		RAISE(err, ENGI_ENOMEM, "out of memory starting agent '%s'", d->name);
	}
	int rc = d->ops->start ? d->ops->start(a, ctx, err) : 0;
	if (rc < 0) {
		if (d->ops->stop)
			d->ops->stop(a);
		engi_free(a->priv);
		engi_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

int agent_next(struct agent *a, const struct observation *obs, struct agent_turn *turn,
	       struct engi_error *err)
{
	memset(turn, 0, sizeof(*turn));
	return a->desc->ops->next(a, obs, turn, err);
}

void agent_stop(struct agent **a)
{
	if (!*a)
		return;
	if ((*a)->desc->ops->stop)
		(*a)->desc->ops->stop(*a);
	engi_free((*a)->priv);
	engi_free(*a);
	*a = NULL;
}
