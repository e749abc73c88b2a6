/*
 * Fuzz target: models.json (sweepdef_load_models, src/core/matrix.c) on
 * arbitrary bytes written to a file, and each language model's entry it
 * accepts through the provider settings parser (provider_config_parse), as
 * a sweep does before its first request. Errors must carry a message;
 * anything else aborts.
 */
#include "fuzz_file.h"

#include "matrix.h"
#include "provider.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[128];
	fuzz_write_file("models.json", data, size, path, sizeof(path));
	struct sweepdef d;
	struct engi_error e;
	sweepdef_init(&d);
	engi_error_init(&e);
	int rc = sweepdef_load_models(&d, path, &e);
	fuzz_note("models", rc, e.msg);
	if (rc > 0 || (rc < 0 && (e.code != rc || !e.msg[0])))
		abort();
	for (size_t i = 0; rc == 0 && i < d.nmodels; i++) {
		const struct model *m = &d.models[i];
		if (!m->name || !m->agent || !m->settings || !m->entry || m->max_concurrent < 0)
			abort();
		if (strcmp(m->agent, "model"))
			continue;
		struct provider_config c;
		engi_error_init(&e);
		int prc = provider_config_parse(&c, m->entry, &e);
		if (prc > 0 || (prc < 0 && (e.code != prc || !e.msg[0])))
			abort();
		if (prc == 0)
			provider_config_release(&c);
	}
	sweepdef_release(&d);
	return 0;
}
