#include "engi/results.h"

#include "engi/alloc.h"

#include "strtab.h"

#include <stdio.h>
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
	engi_strpool_free(&r->texts);
	engi_results_init(r);
}

const char *engi_res_str(const struct engi_results *r, const char *field)
{
	if (field[0] != ENGI_RES_LONG || !field[1])
		return field;
	size_t i = 0;
	for (const char *p = field + 1; *p; p++) {
		if (*p < '0' || *p > '9' || i > SIZE_MAX / 10 - 1)
			return field;
		i = 10 * i + (size_t)(*p - '0');
	}
	const char *s = engi_strpool_get(r->texts, i);
	return s ? s : field;
}

int engi_res_set(struct engi_results *r, char *field, size_t size, const char *text,
		 struct engi_error *err)
{
	size_t n = strlen(text);
	if (n < size && text[0] != ENGI_RES_LONG) {
		memcpy(field, text, n + 1);
		return 0;
	}
	size_t i;
	TRY(engi_strpool_add(&r->texts, text, NULL, &i, err));
	char alias[32];
	int k = snprintf(alias, sizeof alias, "%c%zu", ENGI_RES_LONG, i);
	if (k < 0 || (size_t)k >= size)
		RAISE(err, ENGI_EINVALID, "a field of %zu bytes cannot hold the alias of text %zu",
		      size, i);
	memcpy(field, alias, (size_t)k + 1);
	return 0;
}

int engi_res_copy(char *dst, size_t size, const char *src, const char *what, struct engi_error *err)
{
	size_t n = strlen(src);
	if (n >= size)
		RAISE(err, ENGI_EINVALID,
		      "%s '%.40s...' is longer than %zu bytes, the width the "
		      "results file keeps",
		      what, src, size - 1);
	memcpy(dst, src, n + 1);
	return 0;
}
