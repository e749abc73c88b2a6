/*
 * wire.h - what the provider files share: the action tools every request
 * declares and the tool calls of a reply. Each provider's request builder
 * and reply parser are its struct provider_ops (provider.h). Internal to
 * src/provider.
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

/* Appends one tool call (strings copied). */
int wire_add_call(struct preply *r, const char *id, const char *name, const char *args_json,
		  struct engi_error *err);

#endif
