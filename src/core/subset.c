/*
 * Stratified subsets of a suite: the way the benchmark papers draw their
 * evaluated subsets (4 or 5 tasks from each software x type x interface
 * stratum, plus every open-environment task), seeded and reproducible.
 */
#include "task.h"

#include "source.h"
#include "task_load.h"

#include "engi/alloc.h"
#include "engi/sha256.h"
#include "fsutil.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUBSET_KEYS 4

enum key { KEY_SOFTWARE, KEY_TYPE, KEY_INTERFACE, KEY_DOMAIN };
static const char *const key_names[] = {"software", "type", "interface", "domain"};

static const char *key_of(const struct task *t, int key)
{
	switch (key) {
	case KEY_SOFTWARE:
		return t->software[0];
	case KEY_TYPE:
		return task_type_name(t->type);
	case KEY_INTERFACE:
		return task_interface_name(t->interface);
	default:
		return t->domain;
	}
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct spec {
	int keys[SUBSET_KEYS];
	int nkeys;
	long per_min, per_max;
	uint64_t seed;
	int all_key; /* -1: none */
	char all_value[64];
};

static int parse_key(const char *s, size_t n, int *out)
{
	for (int k = 0; k < SUBSET_KEYS; k++)
		if (strlen(key_names[k]) == n && !strncmp(key_names[k], s, n)) {
			*out = k;
			return 0;
		}
	return -1;
}

static const char *const spec_words[] = {"strata", "per", "seed", "all", NULL};

static int parse_spec(const char *text, struct spec *sp, struct engi_error *err)
{
	memset(sp, 0, sizeof(*sp));
	sp->all_key = -1;
	sp->per_min = sp->per_max = -1;
	char *copy = engi_strdup(text), *save = NULL;
	if (!copy)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	int rc = 0;
	unsigned seen = 0;
	for (char *tok = strtok_r(copy, " ", &save); tok && rc == 0;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq) {
			rc = engi_raise(err, ENGI_EINVALID, "--subset: '%s' is not key=value", tok);
			break;
		}
		*eq = '\0';
		const char *v = eq + 1;
		int which = 0;
		while (spec_words[which] && strcmp(spec_words[which], tok))
			which++;
		if (spec_words[which] && (seen & (1u << which))) {
			rc = engi_raise(err, ENGI_EINVALID, "--subset: '%s' is given twice", tok);
			break;
		}
		seen |= 1u << which;
		if (!strcmp(tok, "strata")) {
			const char *p = v;
			while (*p && rc == 0) {
				size_t n = strcspn(p, ",");
				if (sp->nkeys == SUBSET_KEYS ||
				    parse_key(p, n, &sp->keys[sp->nkeys]) < 0)
					rc = engi_raise(err, ENGI_EINVALID,
							"--subset: strata '%.*s' is not software, "
							"type, interface or domain",
							(int)n, p);
				for (int k = 0; rc == 0 && k < sp->nkeys; k++)
					if (sp->keys[k] == sp->keys[sp->nkeys])
						rc = engi_raise(
						    err, ENGI_EINVALID,
						    "--subset: strata '%.*s' is named twice",
						    (int)n, p);
				sp->nkeys++;
				p += n + (p[n] == ',');
			}
		} else if (!strcmp(tok, "per")) {
			char *end;
			errno = 0;
			sp->per_min = strtol(v, &end, 10);
			sp->per_max = *end == '-' ? strtol(end + 1, &end, 10) : sp->per_min;
			if (errno || *end || *v < '0' || *v > '9' || sp->per_min < 1 ||
			    sp->per_max < sp->per_min || sp->per_max > 1000000)
				rc = engi_raise(err, ENGI_EINVALID,
						"--subset: per='%s' is not N or MIN-MAX", v);
		} else if (!strcmp(tok, "seed")) {
			char *end;
			errno = 0;
			sp->seed = strtoull(v, &end, 10);
			if (errno || *end || *v < '0' || *v > '9')
				rc = engi_raise(err, ENGI_EINVALID,
						"--subset: seed='%s' is not a number", v);
		} else if (!strcmp(tok, "all")) {
			const char *colon = strchr(v, ':');
			if (!colon || parse_key(v, (size_t)(colon - v), &sp->all_key) < 0 ||
			    strlen(colon + 1) >= sizeof(sp->all_value))
				rc = engi_raise(err, ENGI_EINVALID,
						"--subset: all='%s' is not KEY:VALUE", v);
			else
				strcpy(sp->all_value, colon + 1);
		} else {
			rc = engi_raise(err, ENGI_EINVALID,
					"--subset: unknown '%s' (valid: strata, per, seed, all)",
					tok);
		}
	}
	engi_free(copy);
	if (rc == 0 && (sp->nkeys == 0 || sp->per_min < 0))
		rc = engi_raise(err, ENGI_EINVALID, "--subset needs strata=... and per=...");
	return rc;
}

static const struct suite *g_sort_suite;
static const struct spec *g_sort_spec;

/* stratum key order, then task id: a stable order independent of the files */
static int cmp_stratum(const void *a, const void *b)
{
	const struct task *x = &g_sort_suite->tasks[*(const size_t *)a];
	const struct task *y = &g_sort_suite->tasks[*(const size_t *)b];
	for (int k = 0; k < g_sort_spec->nkeys; k++) {
		int c = strcmp(key_of(x, g_sort_spec->keys[k]), key_of(y, g_sort_spec->keys[k]));
		if (c)
			return c;
	}
	return strcmp(x->id, y->id);
}

static int same_stratum(const struct spec *sp, const struct task *x, const struct task *y)
{
	for (int k = 0; k < sp->nkeys; k++)
		if (strcmp(key_of(x, sp->keys[k]), key_of(y, sp->keys[k])))
			return 0;
	return 1;
}

/* Keeps the tasks marked in keep, in order; what the others hold outside
 * the arena (criteria, their follow-ups', compiled patterns) freed. */
static void keep_tasks(struct suite *s, const unsigned char *keep)
{
	size_t w = 0;
	for (size_t i = 0; i < s->ntasks; i++) {
		if (keep[i])
			s->tasks[w++] = s->tasks[i];
		else
			task_release(&s->tasks[i]);
	}
	s->ntasks = w;
}

int suite_refuse_task(struct suite *s, size_t i, const char *category, const char *reason)
{
	if (i >= s->ntasks)
		return -1;
	if (suite_refuse(s, s->tasks[i].file, ENGI_EINVALID, category, reason) < 0)
		return -1;
	unsigned char *keep = engi_malloc(s->ntasks);
	if (!keep)
		return -1;
	memset(keep, 1, s->ntasks);
	keep[i] = 0;
	keep_tasks(s, keep);
	engi_free(keep);
	return 0;
}

#define SELECT_FILE_CAP ((size_t)16 << 20)

int suite_select_file(struct suite *s, const char *path, size_t *unmatched, struct engi_error *err)
{
	*unmatched = 0;
	char *text = NULL;
	size_t len = 0;
	TRY(fs_read_file(path, SELECT_FILE_CAP, &text, &len, err));
	size_t n = s->ntasks;
	unsigned char *keep = engi_calloc(n ? n : 1, 1);
	if (!keep) {
		engi_free(text);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	int rc = 0;
	size_t lineno = 0, listed = 0;
	char *p = text;
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	while (rc == 0 && p < text + len) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		char *end = nl ? nl : text + len;
		lineno++;
		char *a = p, *b = end;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
			b--;
		p = nl ? nl + 1 : end;
		if (a == b || *a == '#')
			continue;
		listed++;
		size_t k = (size_t)(b - a);
		long found = -1;
		for (size_t i = 0; i < n && found < 0; i++)
			if (strlen(s->tasks[i].id) == k && !memcmp(s->tasks[i].id, a, k))
				found = (long)i;
		if (found >= 0) {
			keep[found] = 1;
		} else if (s->nrefused) {
			(*unmatched)++;
		} else {
			rc = engi_raise(err, ENGI_EINVALID,
					"%s: line %zu: '%.*s' is no task of the suite", path,
					lineno, (int)(k > 200 ? 200 : k), a);
		}
	}
	engi_free(text);
	if (rc == 0 && listed == 0)
		rc = engi_raise(err, ENGI_EINVALID, "%s lists no task id", path);
	if (rc < 0) {
		engi_free(keep);
		return rc;
	}
	keep_tasks(s, keep);
	engi_free(keep);
	return 0;
}

int suite_subset(struct suite *s, const char *text, size_t *nstrata, struct engi_error *err)
{
	struct spec sp;
	TRY(parse_spec(text, &sp, err));
	size_t n = s->ntasks;
	size_t *order = engi_calloc(n ? n : 1, sizeof(*order));
	unsigned char *keep = engi_calloc(n ? n : 1, 1);
	if (!order || !keep) {
		engi_free(order);
		engi_free(keep);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	g_sort_suite = s;
	g_sort_spec = &sp;
	qsort(order, n, sizeof(*order), cmp_stratum);
	size_t strata = 0;
	for (size_t lo = 0; lo < n;) {
		size_t hi = lo + 1;
		while (hi < n && same_stratum(&sp, &s->tasks[order[lo]], &s->tasks[order[hi]]))
			hi++;
		strata++;
		/* each stratum draws from its own stream: seed and stratum name */
		char name[512] = "";
		for (int k = 0; k < sp.nkeys; k++) {
			strncat(name, key_of(&s->tasks[order[lo]], sp.keys[k]),
				sizeof(name) - strlen(name) - 2);
			strcat(name, "\x1f");
		}
		unsigned char d[32];
		struct engi_sha256 h;
		engi_sha256_init(&h);
		engi_sha256_update(&h, &sp.seed, sizeof(sp.seed));
		engi_sha256_update(&h, name, strlen(name));
		engi_sha256_final(&h, d);
		uint64_t st;
		memcpy(&st, d, sizeof(st));
		size_t size = hi - lo;
		size_t k = (size_t)sp.per_min +
			   (size_t)(splitmix(&st) % (uint64_t)(sp.per_max - sp.per_min + 1));
		if (k > size)
			k = size;
		/* partial Fisher-Yates over the stratum */
		for (size_t i = 0; i < k; i++) {
			size_t j = i + (size_t)(splitmix(&st) % (uint64_t)(size - i));
			size_t t = order[lo + i];
			order[lo + i] = order[lo + j];
			order[lo + j] = t;
			keep[order[lo + i]] = 1;
		}
		lo = hi;
	}
	if (sp.all_key >= 0)
		for (size_t i = 0; i < n; i++)
			if (!strcmp(key_of(&s->tasks[i], sp.all_key), sp.all_value))
				keep[i] = 1;
	keep_tasks(s, keep);
	engi_free(order);
	engi_free(keep);
	if (nstrata)
		*nstrata = strata;
	return 0;
}
