/*
 * wire.h - what the provider files share: the action tools every request
 * declares, and the per-API request builders and reply parsers that
 * provider.c dispatches to. Internal to src/provider.
 */
#ifndef ENGI_PROVIDER_WIRE_H
#define ENGI_PROVIDER_WIRE_H

#include <jansson.h>

#include "provider.h"

struct wire_tool {
	const char *name;
	const char *description;
	const char *schema_json; /* JSON Schema of the arguments */
};

/* The tools declared for c (read_image only with image_tool, ask_user only
 * with ask_tool); out has room for 8. */
size_t wire_tools(const struct provider_config *c, const struct wire_tool **out);

json_t *openai_build(const struct provider_config *c, const struct pconv *conv,
		     struct engi_error *err);
int openai_parse(json_t *root, struct preply *r, struct engi_error *err);
json_t *anthropic_build(const struct provider_config *c, const struct pconv *conv,
			struct engi_error *err);
int anthropic_parse(json_t *root, struct preply *r, struct engi_error *err);

/* Appends one tool call (strings copied). */
int wire_add_call(struct preply *r, const char *id, const char *name, const char *args_json,
		  struct engi_error *err);

#endif
