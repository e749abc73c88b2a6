/*
 * Fuzz target for the providers' reply parsers: the first byte picks the
 * provider of the registry and the tool mode ('o' OpenAI, 'a' Anthropic,
 * 't' OpenAI with the text fallback; anything else: the provider by its
 * value modulo their number, text tools with bit 1), the rest is a reply
 * body. Any input must parse or fail with an error code, never crash or
 * leak.
 */
#include "provider.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t n = 0;
	while (provider_registry[n])
		n++;
	const struct provider_ops *ops = data[0] == 'a' ? provider_lookup("anthropic", NULL)
					 : data[0] == 'o' || data[0] == 't'
					     ? provider_lookup("openai", NULL)
					     : provider_registry[data[0] % n];
	struct provider_config c;
	provider_config_init(&c, ops, "fuzz", "fuzz");
	c.tool_mode = data[0] == 't' || (data[0] & 2) ? TOOLS_TEXT : TOOLS_NATIVE;
	struct preply r;
	memset(&r, 0, sizeof(r));
	struct engi_error e;
	engi_error_init(&e);
	int rc = provider_parse_reply(&c, (const char *)data + 1, size - 1, &r, &e);
	if (rc < 0 && !e.msg[0])
		__builtin_trap(); /* an error always says what failed */
	preply_release(&r);
	return 0;
}
