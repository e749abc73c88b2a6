/*
 * Fuzz target for the providers' reply parsers: the first byte picks the API
 * and tool mode ('o' OpenAI, 'a' Anthropic, 't' OpenAI with the text
 * fallback, anything else by its low bits), the rest is a reply body. Any
 * input must parse or fail with an error code, never crash or leak.
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
	struct provider_config c;
	memset(&c, 0, sizeof(c));
	snprintf(c.name, sizeof(c.name), "fuzz");
	c.api = data[0] == 'a' || (data[0] != 'o' && data[0] != 't' && (data[0] & 1))
		    ? PROVIDER_ANTHROPIC
		    : PROVIDER_OPENAI;
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
