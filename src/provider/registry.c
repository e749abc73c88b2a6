/*
 * The providers built in: each one's descriptor lives in its own file; a new
 * provider is that file and its line here.
 */
#include "provider.h"

#include "engi/json.h"

#include <stdio.h>
#include <string.h>

extern const struct provider_ops openai_ops;
extern const struct provider_ops anthropic_ops;

const struct provider_ops *const provider_registry[] = {
    &openai_ops,
    &anthropic_ops,
    NULL,
};

void provider_names(char *buf, size_t n)
{
	const char *names[sizeof(provider_registry) / sizeof(*provider_registry)];
	size_t k = 0;
	for (const struct provider_ops *const *p = provider_registry; *p; p++)
		names[k++] = (*p)->name;
	engi_json_join(buf, n, names, k);
}

const struct provider_ops *provider_lookup(const char *name, struct engi_error *err)
{
	for (const struct provider_ops *const *p = provider_registry; *p; p++)
		if (name && !strcmp((*p)->name, name))
			return *p;
	char names[256];
	provider_names(names, sizeof(names));
	engi_raise(err, ENGI_EINVALID, "'%s' is not one of %s", name ? name : "", names);
	return NULL;
}
