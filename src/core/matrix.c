#include "matrix.h"

#include "engi/alloc.h"
#include "engi/json.h"
#include "engi/sha256.h"
#include "engi/verify.h"
#include "fsutil.h"
#include "text.h"
#include "secrets.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODELS_FILE_CAP		    ((size_t)1 << 20)
#define DEFAULT_SCRIPTED_S_PER_TURN 2.0
#define DEFAULT_MODEL_S_PER_TURN    30.0
#define DEFAULT_TOKENS_IN_PER_TURN  8000.0
#define DEFAULT_TOKENS_OUT_PER_TURN 500.0

void sweepdef_init(struct sweepdef *d)
{
	memset(d, 0, sizeof(*d));
	arena_init(&d->arena);
	d->trials = 1;
}

void sweepdef_release(struct sweepdef *d)
{
	for (size_t i = 0; i < d->nmodels; i++)
		if (d->models[i].provider && d->models[i].provider_free)
			d->models[i].provider_free(d->models[i].provider);
	arena_release(&d->arena);
	memset(d, 0, sizeof(*d));
}

/* A new model at the end of the list, zeroed. */
static struct model *add_model(struct sweepdef *d, struct engi_error *err)
{
	struct model *nm = arena_array(&d->arena, d->nmodels + 1, sizeof(*nm));
	if (!nm) {
		engi_raise(err, ENGI_ENOMEM, "out of memory");
		return NULL;
	}
	if (d->nmodels)
		memcpy(nm, d->models, d->nmodels * sizeof(*nm));
	d->models = nm;
	memset(&d->models[d->nmodels], 0, sizeof(*nm));
	return &d->models[d->nmodels++];
}

static int check_unique_model(struct sweepdef *d, const char *name, struct engi_error *err)
{
	for (size_t i = 0; i < d->nmodels; i++)
		if (!strcmp(d->models[i].name, name))
			RAISE(err, ENGI_EINVALID, "model '%s' is named twice", name);
	return 0;
}

static int valid_label(const char *s)
{
	if (!*s || strlen(s) > 63)
		return 0;
	for (const char *p = s; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-' || (c == ':' && p != s)))
			return 0;
	}
	return 1;
}

/* ---- the settings of a condition ---- */

void cond_settings_init(struct cond_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->tools = COND_TOOLS_NATIVE;
	s->screen_scale = 1.0;
	s->drawings = DRAWINGS_MESSAGE;
}

/* The index of v's string in names (NULL-ended), or -1. */
static int name_index(const json_t *v, const char *const *names)
{
	const char *s = json_string_value(v);
	for (int i = 0; s && names[i]; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static int read_history_turns(const json_t *v, struct cond_settings *s)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000000)
		return -1;
	s->history_turns = (int)json_integer_value(v);
	s->set |= COND_SET(COND_HISTORY_TURNS);
	return 0;
}

/* in enum cond_tools order */
static const char *const tools_names[] = {"native", "text", "engiworld", NULL};

static int read_tools(const json_t *v, struct cond_settings *s)
{
	int i = name_index(v, tools_names);
	if (i < 0)
		return -1;
	s->tools = i;
	s->set |= COND_SET(COND_TOOLS);
	return 0;
}

static int read_image_tool(const json_t *v, struct cond_settings *s)
{
	if (!json_is_boolean(v))
		return -1;
	s->image_tool = json_is_true(v);
	s->set |= COND_SET(COND_IMAGE_TOOL);
	return 0;
}

static int read_screen_scale(const json_t *v, struct cond_settings *s)
{
	if (!json_is_number(v) || !(json_number_value(v) > 0 && json_number_value(v) <= 1))
		return -1;
	s->screen_scale = json_number_value(v);
	s->set |= COND_SET(COND_SCREEN_SCALE);
	return 0;
}

/* in enum cond_drawings order */
static const char *const drawings_names[] = {"message", "none", "files", NULL};

static int read_drawings(const json_t *v, struct cond_settings *s)
{
	int i = name_index(v, drawings_names);
	if (i < 0)
		return -1;
	s->drawings = i;
	s->set |= COND_SET(COND_DRAWINGS);
	return 0;
}

const struct cond_setting cond_settings[] = {
    {"history_turns", COND_HISTORY_TURNS, "an integer from 1 to 1000000", read_history_turns, 1},
    {"tools", COND_TOOLS, "native, text or engiworld", read_tools, 1},
    {"image_tool", COND_IMAGE_TOOL, "true or false", read_image_tool, 1},
    {"screen_scale", COND_SCREEN_SCALE, "a number in (0, 1]", read_screen_scale, 0},
    {"drawings", COND_DRAWINGS, "message, files or none", read_drawings, 0},
    {NULL, COND_NKEYS, NULL, NULL, 0},
};

const struct cond_setting *cond_setting_find(const char *key)
{
	for (const struct cond_setting *c = cond_settings; c->key; c++)
		if (!strcmp(c->key, key))
			return c;
	return NULL;
}

/* "WHAT: unknown NOUN 'KEY' (did you mean ...?)", else the known ones. */
static int unknown_word(struct engi_error *err, int code, const char *what, const char *noun,
			const char *key, const char *const *known, size_t nknown)
{
	const char *near = text_closest(key, known, nknown);
	if (near)
		RAISE(err, code, "%s: unknown %s '%s' (did you mean %s?)", what, noun, key, near);
	char list[512];
	engi_json_join(list, sizeof(list), known, nknown);
	RAISE(err, code, "%s: unknown %s '%s' (known: %s)", what, noun, key, list);
}

static size_t cond_setting_names(const char **out)
{
	size_t n = 0;
	for (const struct cond_setting *c = cond_settings; c->key; c++)
		out[n++] = c->key;
	return n;
}

/* key=text (v parsed from text) against the table, into out. */
static int check_setting(const char *what, const char *noun, const char *key, const char *text,
			 const json_t *v, struct cond_settings *out, struct engi_error *err)
{
	const struct cond_setting *cs = cond_setting_find(key);
	if (!cs) {
		const char *names[sizeof(cond_settings) / sizeof(*cond_settings)];
		return unknown_word(err, ENGI_EINVALID, what, noun, key, names,
				    cond_setting_names(names));
	}
	if (cs->read(v, out) < 0)
		RAISE(err, ENGI_EINVALID, "%s: %s=%s: expected %s", what, key, text, cs->expect);
	return 0;
}

/* A value as given on the command line: a number, true, false or a string. */
static json_t *cond_value(const char *text)
{
	char *end;
	double x = strtod(text, &end);
	if (*end == '\0' && end != text && isfinite(x)) {
		int integral = fabs(x) < 9e15 && x == floor(x);
		return integral ? json_integer((json_int_t)x) : json_real(x);
	}
	if (!strcmp(text, "true"))
		return json_true();
	if (!strcmp(text, "false"))
		return json_false();
	return json_string(text);
}

int model_field_error(struct engi_error *err, int code, const char *origin, const json_t *entry,
		      const char *field, const char *expected)
{
	const json_t *v = json_object_get(entry, field);
	/* a validating getter's message says what it found, by kind: this says
	 * it with the value */
	const char *said = v ? strstr(expected, ", found ") : NULL;
	int n = said ? (int)(said - expected) : (int)strlen(expected);
	char found[96] = "";
	if (v)
		engi_json_found(found, sizeof(found), v);
	RAISE(err, code, "%s/%s: %.*s%s%s", origin, field, n, expected, v ? ", found " : "", found);
}

int sweepdef_add_agents(struct sweepdef *d, const char *list, struct engi_error *err)
{
	char *copy = engi_strdup(list);
	if (!copy)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	int rc = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!valid_label(tok)) {
			rc = engi_raise(err, ENGI_EINVALID,
					"--agents: '%s' is not a valid agent name", tok);
			break;
		}
		if ((rc = check_unique_model(d, tok, err)) < 0)
			break;
		struct model *m = add_model(d, err);
		if (!m) {
			rc = ENGI_ENOMEM;
			break;
		}
		m->name = arena_strdup(&d->arena, tok);
		m->agent = m->name;
		char settings[160];
		snprintf(settings, sizeof(settings), "{\"agent\":\"%s\"}", tok);
		m->settings = arena_strdup(&d->arena, settings);
		m->est_s_per_turn = DEFAULT_SCRIPTED_S_PER_TURN;
		if (!m->name || !m->settings)
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
	}
	engi_free(copy);
	if (rc == 0 && d->nmodels == 0)
		rc = engi_raise(err, ENGI_EINVALID, "--agents: no agent named");
	return rc;
}

/* Checks an entry's fields: known ones, and those the sweep reads or the
 * condition table knows. The agent 'model' checks its own (episode.c). */
static int check_entry(json_t *o, const char *agent, const char *origin, struct engi_error *err)
{
	/* read by the sweep (predictions, caps, costs), whatever the agent */
	static const char *const sweep_keys[] = {"name",
						 "agent",
						 "price_in_per_mtok",
						 "price_out_per_mtok",
						 "max_concurrent",
						 "budget_usd",
						 "est_s_per_turn",
						 "est_tokens_in_per_turn",
						 "est_tokens_out_per_turn",
						 NULL};
	/* the settings of the agent 'model' (its provider's) */
	static const char *const model_keys[] = {"provider",
						 "base_url",
						 "model",
						 "api_key_env",
						 "temperature",
						 "max_tokens",
						 "reasoning_effort",
						 "rpm",
						 "tpm",
						 "headers",
						 "timeout_s",
						 "max_retries",
						 "retry_base_s",
						 "history_turns",
						 "tools",
						 "image_tool",
						 "thinking_budget_tokens",
						 "token_field",
						 NULL};
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v)
	{
		int sweep = 0, model = 0;
		for (const char *const *a = sweep_keys; *a; a++)
			sweep |= !strcmp(*a, key);
		for (const char *const *a = model_keys; *a; a++)
			model |= !strcmp(*a, key);
		char what[PATH_MAX + 64];
		snprintf(what, sizeof(what), "%s/%s", origin, key);
		if (!sweep && !model) {
			const char *all[sizeof(sweep_keys) / sizeof(*sweep_keys) +
					sizeof(model_keys) / sizeof(*model_keys)];
			size_t n = 0;
			for (const char *const *a = sweep_keys; *a; a++)
				all[n++] = *a;
			for (const char *const *a = model_keys; *a; a++)
				all[n++] = *a;
			return unknown_word(err, ENGI_EPARSE, what, "field", key, all, n);
		}
		if (model && strcmp(agent, "model"))
			RAISE(err, ENGI_EPARSE,
			      "%s: a setting of the agent 'model'; the agent '%s' takes none", what,
			      agent);
		const struct cond_setting *cs = cond_setting_find(key);
		struct cond_settings scratch;
		cond_settings_init(&scratch);
		if (cs && cs->overrides_model && cs->read(v, &scratch) < 0) {
			char expected[128];
			snprintf(expected, sizeof(expected), "expected %s", cs->expect);
			return model_field_error(err, ENGI_EPARSE, origin, o, key, expected);
		}
	}
	json_t *mc = json_object_get(o, "max_concurrent");
	if (mc && !(json_is_integer(mc) && json_integer_value(mc) >= 0 &&
		    json_integer_value(mc) <= 1000000))
		return model_field_error(err, ENGI_EPARSE, origin, o, "max_concurrent",
					 "expected an integer from 0 to 1000000");
	return 0;
}

/* The entry's key (the value of its api_key_env variable, read here) and
 * header values join the registry of secrets: every rank loads models.json,
 * so every rank scrubs them from what it writes, and children never see the
 * key's variable. */
static int register_secrets(json_t *o, const char *path, size_t i, struct engi_error *err)
{
	int rc = 0;
	json_t *env = json_object_get(o, "api_key_env");
	if (json_is_string(env))
		rc = secrets_add_env(json_string_value(env));
	const char *key;
	json_t *v;
	json_object_foreach(json_object_get(o, "headers"), key, v) if (rc == 0 && json_is_string(v))
	    rc = secrets_add_header(json_string_value(v));
	if (rc < 0)
		RAISE(err, rc, "%s: /models/%zu: out of memory registering its secrets", path, i);
	return 0;
}

int sweepdef_load_models(struct sweepdef *d, const char *path, struct engi_error *err)
{
	char *text;
	size_t len;
	TRY(fs_read_file(path, MODELS_FILE_CAP, &text, &len, err));
	json_t *root;
	int rc = engi_json_parse(path, text, len, &root, err);
	engi_free(text);
	if (rc < 0)
		return rc;
	static const char *const root_keys[] = {"models", NULL};
	json_t *arr;
	if ((rc = engi_json_expect(root, JSON_OBJECT, path, "", err)) < 0 ||
	    (rc = engi_json_field(root, "models", JSON_ARRAY, 1, path, "", &arr, err)) < 0 ||
	    (rc = engi_json_only_keys(root, root_keys, path, "", err)) < 0)
		goto out;
	/* what changes the behaviour being measured, so what the cell id hashes */
	static const char *const semantic[] = {"agent",		"provider",
					       "model",		"temperature",
					       "max_tokens",	"reasoning_effort",
					       "history_turns", "tools",
					       "image_tool",	"thinking_budget_tokens",
					       "token_field",	NULL};
	for (size_t i = 0; i < json_array_size(arr) && rc == 0; i++) {
		json_t *o = json_array_get(arr, i);
		char origin[PATH_MAX + 64], ptr[ENGI_POINTER_MAX];
		engi_json_pointer_index(ptr, sizeof(ptr), "/models", i);
		snprintf(origin, sizeof(origin), "%s: %s", path, ptr);
		if ((rc = engi_json_expect(o, JSON_OBJECT, path, ptr, err)) < 0)
			break;
		if ((rc = register_secrets(o, path, i, err)) < 0)
			break;
		json_t *name = json_object_get(o, "name");
		if (!json_is_string(name) || !valid_label(json_string_value(name))) {
			rc = model_field_error(err, ENGI_EPARSE, origin, o, "name",
					       "expected a name ([A-Za-z0-9._:-], at most 63)");
			break;
		}
		if ((rc = check_unique_model(d, json_string_value(name), err)) < 0)
			break;
		json_t *agent = json_object_get(o, "agent");
		const char *agent_s = json_is_string(agent)	       ? json_string_value(agent)
				      : json_object_get(o, "provider") ? "model"
								       : NULL;
		if (agent && !json_is_string(agent)) {
			rc = model_field_error(err, ENGI_EPARSE, origin, o, "agent",
					       "expected an agent name");
			break;
		}
		if (!agent_s) {
			rc =
			    engi_raise(err, ENGI_EPARSE, "%s: needs 'agent' or 'provider'", origin);
			break;
		}
		if ((rc = check_entry(o, agent_s, origin, err)) < 0)
			break;
		struct model *m = add_model(d, err);
		if (!m) {
			rc = ENGI_ENOMEM;
			break;
		}
		json_t *sem = json_object();
		json_object_set_new(sem, "agent", json_string(agent_s));
		for (const char *const *s = semantic; *s; s++)
			if (strcmp(*s, "agent") && json_object_get(o, *s))
				json_object_set(sem, *s, json_object_get(o, *s));
		char *canon = json_dumps(sem, JSON_SORT_KEYS | JSON_COMPACT);
		json_decref(sem);
		m->name = arena_strdup(&d->arena, json_string_value(name));
		m->agent = arena_strdup(&d->arena, agent_s);
		m->origin = arena_strdup(&d->arena, origin);
		m->settings = canon ? arena_strdup(&d->arena, canon) : NULL;
		free(canon);
		char *entry = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
		m->entry = entry ? arena_strdup(&d->arena, entry) : NULL;
		free(entry);
		if (!m->name || !m->agent || !m->origin || !m->settings || !m->entry) {
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
			break;
		}
		double mc = 0;
		int is_model = !strcmp(agent_s, "model");
		const struct {
			const char *key;
			double dflt, *out;
		} nums[] = {
		    {"price_in_per_mtok", 0, &m->price_in_per_mtok},
		    {"price_out_per_mtok", 0, &m->price_out_per_mtok},
		    {"max_concurrent", 0, &mc},
		    {"budget_usd", 0, &m->budget_usd},
		    {"est_s_per_turn",
		     is_model ? DEFAULT_MODEL_S_PER_TURN : DEFAULT_SCRIPTED_S_PER_TURN,
		     &m->est_s_per_turn},
		    {"est_tokens_in_per_turn", is_model ? DEFAULT_TOKENS_IN_PER_TURN : 0,
		     &m->est_tokens_in_per_turn},
		    {"est_tokens_out_per_turn", is_model ? DEFAULT_TOKENS_OUT_PER_TURN : 0,
		     &m->est_tokens_out_per_turn},
		};
		for (size_t k = 0; rc == 0 && k < sizeof(nums) / sizeof(*nums); k++)
			rc = engi_json_number_min(o, nums[k].key, 0, nums[k].dflt, path, ptr,
						  nums[k].out, err);
		if (rc < 0)
			break;
		/* an integer from 0 to 1000000, checked by check_entry */
		m->max_concurrent = (int)mc;
	}
out:
	json_decref(root);
	return rc;
}

int sweepdef_add_condition(struct sweepdef *d, const char *spec, struct engi_error *err)
{
	const char *colon = strchr(spec, ':');
	size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
	char name[64];
	if (n == 0 || n >= sizeof(name))
		RAISE(err, ENGI_EINVALID, "--condition '%s': needs a name of 1 to 63 characters",
		      spec);
	memcpy(name, spec, n);
	name[n] = '\0';
	if (!valid_label(name) || strchr(name, ':'))
		RAISE(err, ENGI_EINVALID, "--condition '%s': '%s' is not a valid name", spec, name);
	for (size_t i = 0; i < d->nconds; i++)
		if (!strcmp(d->conds[i].name, name))
			RAISE(err, ENGI_EINVALID, "--condition '%s' is named twice", name);
	json_t *set = json_object();
	if (!set)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	struct cond_settings parsed;
	cond_settings_init(&parsed);
	int rc = 0;
	if (colon) {
		char *copy = engi_strdup(colon + 1), *save = NULL;
		if (!copy)
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
		for (char *kv = copy ? strtok_r(copy, ",", &save) : NULL; kv && rc == 0;
		     kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');
			if (!eq || eq == kv) {
				rc =
				    engi_raise(err, ENGI_EINVALID,
					       "--condition '%s': '%s' is not key=value", spec, kv);
				break;
			}
			*eq = '\0';
			char what[1200];
			snprintf(what, sizeof(what), "--condition '%.1024s'", spec);
			if (json_object_get(set, kv)) {
				rc = engi_raise(err, ENGI_EINVALID, "%s: '%s' is set twice", what,
						kv);
				break;
			}
			json_t *val = cond_value(eq + 1);
			rc = val ? check_setting(what, "setting", kv, eq + 1, val, &parsed, err)
				 : engi_raise(err, ENGI_ENOMEM, "out of memory");
			json_object_set_new(set, kv, val);
		}
		engi_free(copy);
	}
	char *canon = rc == 0 ? json_dumps(set, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	json_decref(set);
	if (rc < 0)
		return rc;
	if (!canon)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	struct condition *nc = arena_array(&d->arena, d->nconds + 1, sizeof(*nc));
	if (!nc) {
		free(canon);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	if (d->nconds)
		memcpy(nc, d->conds, d->nconds * sizeof(*nc));
	nc[d->nconds].name = arena_strdup(&d->arena, name);
	nc[d->nconds].settings = arena_strdup(&d->arena, canon);
	nc[d->nconds].set = parsed;
	free(canon);
	if (!nc[d->nconds].name || !nc[d->nconds].settings)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	d->conds = nc;
	d->nconds++;
	return 0;
}

void cell_compute_id(const struct task *t, const struct model *mo, const struct condition *c,
		     int trial, char id[ENGI_CELL_STR])
{
	struct engi_sha256 h;
	engi_sha256_init(&h);
	char buf[64];
	/* each field NUL-terminated so that no two field lists collide */
	const char *fields[] = {"task",	      t->id,	   t->hash, "model",	mo->name,
				mo->settings, "condition", c->name, c->settings};
	for (size_t i = 0; i < sizeof(fields) / sizeof(*fields); i++)
		engi_sha256_update(&h, fields[i], strlen(fields[i]) + 1);
	snprintf(buf, sizeof(buf), "trial=%d", trial);
	engi_sha256_update(&h, buf, strlen(buf) + 1);
	unsigned char d[32];
	char hex[65];
	engi_sha256_final(&h, d);
	engi_sha256_hex(d, hex);
	memcpy(id, hex, 16);
	id[16] = '\0';
}

static const struct history_row *find_history(const struct history_row *hist, size_t nhist,
					      const char *task, const char *model, double *wall,
					      double *cost)
{
	double sw = 0, sc = 0;
	size_t n = 0;
	const struct history_row *any = NULL;
	for (size_t i = 0; i < nhist; i++) {
		if (strcmp(hist[i].task_id, task) || strcmp(hist[i].model, model))
			continue;
		sw += hist[i].wall_s;
		sc += hist[i].cost_usd;
		n++;
		any = &hist[i];
	}
	if (n) {
		*wall = sw / (double)n;
		*cost = sc / (double)n;
	}
	return any;
}

static void predict(struct cell *c, const struct task *t, const struct model *m,
		    const struct history_row *hist, size_t nhist)
{
	double wall = 0, cost = 0;
	if (find_history(hist, nhist, t->id, m->name, &wall, &cost)) {
		c->pred_s = wall;
		c->pred_cost_usd = cost;
		return;
	}
	double turns;
	if (!strcmp(m->agent, "reference"))
		turns = (double)t->reference.n;
	else if (!strncmp(m->agent, "flawed:", 7)) {
		const struct task_flawed *f = task_find_flawed(t, m->agent + 7);
		turns = f ? (double)f->steps.n : 1;
	} else if (!strcmp(m->agent, "noop"))
		turns = 1;
	else
		turns = t->turn_limit; /* an upper bound, for budgets */
	c->pred_s = fmin(turns * m->est_s_per_turn, t->wall_s);
	c->pred_cost_usd = turns *
			   (m->est_tokens_in_per_turn * m->price_in_per_mtok +
			    m->est_tokens_out_per_turn * m->price_out_per_mtok) /
			   1e6;
}

static int cmp_cells(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;
	if (x->pred_s != y->pred_s)
		return x->pred_s > y->pred_s ? -1 : 1;
	return strcmp(x->id, y->id);
}

static int cmp_ids(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int finish(struct matrix *m, struct engi_error *err)
{
	qsort(m->cells, m->ncells, sizeof(*m->cells), cmp_cells);
	const char **ids = engi_calloc(m->ncells ? m->ncells : 1, sizeof(*ids));
	if (!ids)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	for (size_t i = 0; i < m->ncells; i++)
		ids[i] = m->cells[i].id;
	qsort(ids, m->ncells, sizeof(*ids), cmp_ids);
	struct engi_sha256 h;
	engi_sha256_init(&h);
	for (size_t i = 0; i < m->ncells; i++) {
		if (i && !strcmp(ids[i], ids[i - 1])) {
			engi_free(ids);
			RAISE(err, ENGI_EINVALID,
			      "two cells share the id %s (a model or condition named twice?)",
			      ids[i]);
		}
		engi_sha256_update(&h, ids[i], ENGI_CELL_STR);
	}
	engi_free(ids);
	unsigned char d[32];
	engi_sha256_final(&h, d);
	engi_sha256_hex(d, m->sweep_id);
	return 0;
}

static int cmp_cell_ids(const void *a, const void *b)
{
	const struct cell *x = a, *y = b;
	return strcmp(x->id, y->id);
}

int matrix_keep_shard(struct matrix *m, unsigned k, unsigned n, struct engi_error *err)
{
	if (n == 0 || k >= n)
		RAISE(err, ENGI_EINVALID, "shard %u/%u: expected K/N with 0 <= K < N", k, n);
	qsort(m->cells, m->ncells, sizeof(*m->cells), cmp_cell_ids);
	size_t kept = 0;
	for (size_t i = 0; i < m->ncells; i++)
		if (i % n == k)
			m->cells[kept++] = m->cells[i];
	m->ncells = kept;
	return finish(m, err);
}

static int ensure_default_condition(struct sweepdef *d, struct engi_error *err)
{
	if (d->nconds == 0)
		TRY(sweepdef_add_condition(d, "base", err));
	return 0;
}

int matrix_build(struct matrix *m, const struct suite *s, const struct sweepdef *dconst,
		 const struct history_row *hist, size_t nhist, struct engi_error *err)
{
	struct sweepdef *d = (struct sweepdef *)dconst;
	memset(m, 0, sizeof(*m));
	arena_init(&m->arena);
	TRY(ensure_default_condition(d, err));
	if (d->nmodels == 0)
		RAISE(err, ENGI_EINVALID, "no models or agents to run");
	if (d->trials < 1)
		RAISE(err, ENGI_EINVALID, "trials must be at least 1");
	size_t max = s->ntasks * d->nmodels * d->nconds * (size_t)d->trials;
	m->cells = arena_array(&m->arena, max ? max : 1, sizeof(*m->cells));
	if (!m->cells)
		RAISE(err, ENGI_ENOMEM, "out of memory for %zu cells", max);
	for (size_t t = 0; t < s->ntasks; t++) {
		const struct task *task = &s->tasks[t];
		for (size_t mi = 0; mi < d->nmodels; mi++) {
			const struct model *mo = &d->models[mi];
			if (!strncmp(mo->agent, "flawed:", 7) &&
			    !task_find_flawed(task, mo->agent + 7)) {
				m->skipped += d->nconds * (size_t)d->trials;
				continue;
			}
			for (size_t ci = 0; ci < d->nconds; ci++)
				for (int tr = 0; tr < d->trials; tr++) {
					struct cell *c = &m->cells[m->ncells++];
					c->task = (uint32_t)t;
					c->model = (uint32_t)mi;
					c->cond = (uint32_t)ci;
					c->trial = tr;
					cell_compute_id(task, mo, &d->conds[ci], tr, c->id);
					predict(c, task, mo, hist, nhist);
				}
		}
	}
	return finish(m, err);
}

int matrix_build_validation(struct matrix *m, const struct suite *s, struct sweepdef *d,
			    struct engi_error *err)
{
	memset(m, 0, sizeof(*m));
	arena_init(&m->arena);
	TRY(ensure_default_condition(d, err));
	d->trials = 1;
	/* models: reference, noop, and one flawed:NAME per distinct name */
	char *list = NULL;
	size_t listlen = 0;
	FILE *f = open_memstream(&list, &listlen);
	if (!f)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	fputs("reference,noop", f);
	for (size_t t = 0; t < s->ntasks; t++) {
		for (size_t k = 0; k < s->tasks[t].nflawed; k++) {
			const char *name = s->tasks[t].flawed[k].name;
			int seen = 0;
			for (size_t u = 0; u < t && !seen; u++)
				seen = task_find_flawed(&s->tasks[u], name) != NULL;
			for (size_t j = 0; j < k && !seen; j++)
				seen = !strcmp(s->tasks[t].flawed[j].name, name);
			if (!seen)
				fprintf(f, ",flawed:%s", name);
		}
	}
	fclose(f);
	int rc = sweepdef_add_agents(d, list, err);
	free(list);
	TRY(rc);
	/* at most one cell per task and model (models already in d count too) */
	size_t total = s->ntasks * d->nmodels;
	m->cells = arena_array(&m->arena, total ? total : 1, sizeof(*m->cells));
	if (!m->cells)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	for (size_t t = 0; t < s->ntasks; t++)
		for (size_t mi = 0; mi < d->nmodels; mi++) {
			const struct model *mo = &d->models[mi];
			if (!strncmp(mo->agent, "flawed:", 7) &&
			    !task_find_flawed(&s->tasks[t], mo->agent + 7))
				continue;
			struct cell *c = &m->cells[m->ncells++];
			c->task = (uint32_t)t;
			c->model = (uint32_t)mi;
			c->cond = 0;
			c->trial = 0;
			cell_compute_id(&s->tasks[t], mo, &d->conds[0], 0, c->id);
			predict(c, &s->tasks[t], mo, NULL, 0);
		}
	return finish(m, err);
}

void matrix_release(struct matrix *m)
{
	arena_release(&m->arena);
	memset(m, 0, sizeof(*m));
}

long matrix_find(const struct matrix *m, const char *id)
{
	for (size_t i = 0; i < m->ncells; i++)
		if (!strcmp(m->cells[i].id, id))
			return (long)i;
	return -1;
}

/* A grid condition's name "AXIS-V_AXIS2-W", with axis `base` (if any) at
 * its first value. */
static void grid_name(const char *const *names, const char *(*values)[64], const size_t *idx,
		      size_t naxes, size_t base, char *out, size_t cap)
{
	out[0] = '\0';
	for (size_t a = 0; a < naxes; a++) {
		size_t n = strlen(out);
		snprintf(out + n, cap - n, "%s%s-%s", a ? "_" : "", names[a],
			 values[a][a == base ? 0 : idx[a]]);
	}
}

int sweepdef_add_grid(struct sweepdef *d, const char *const *axes, size_t naxes,
		      struct engi_error *err)
{
	if (naxes == 0)
		return 0;
	/* split every axis into its name and values */
	char *copies[16];
	const char *names[16], *values[16][64];
	size_t nvalues[16];
	if (naxes > 16)
		RAISE(err, ENGI_EINVALID, "--grid: at most 16 axes");
	int rc = 0;
	for (size_t a = 0; a < naxes; a++)
		copies[a] = NULL;
	for (size_t a = 0; a < naxes && rc == 0; a++) {
		copies[a] = engi_strdup(axes[a]);
		if (!copies[a]) {
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
			break;
		}
		char *eq = strchr(copies[a], '=');
		if (!eq || eq == copies[a] || !eq[1]) {
			rc = engi_raise(err, ENGI_EINVALID, "--grid '%s': expected AXIS=V1,V2,...",
					axes[a]);
			break;
		}
		*eq = '\0';
		names[a] = copies[a];
		nvalues[a] = 0;
		char what[1200];
		snprintf(what, sizeof(what), "--grid '%.1024s'", axes[a]);
		struct cond_settings scratch;
		cond_settings_init(&scratch);
		if (!cond_setting_find(names[a])) {
			rc = check_setting(what, "axis", names[a], "", NULL, &scratch, err);
			break;
		}
		char *save = NULL;
		for (char *v = strtok_r(eq + 1, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
			if (nvalues[a] == 64 || !valid_label(v) || strchr(v, ':')) {
				rc = engi_raise(err, ENGI_EINVALID,
						"--grid '%s': '%s' is not a value (letters, "
						"digits, . _ -; at most 64)",
						axes[a], v);
				break;
			}
			json_t *val = cond_value(v);
			rc = val ? check_setting(what, "axis", names[a], v, val, &scratch, err)
				 : engi_raise(err, ENGI_ENOMEM, "out of memory");
			json_decref(val);
			if (rc < 0)
				break;
			values[a][nvalues[a]++] = v;
		}
		for (size_t b = 0; b < a && rc == 0; b++)
			if (!strcmp(names[a], names[b]))
				rc = engi_raise(err, ENGI_EINVALID, "--grid: axis '%s' named twice",
						names[a]);
	}
	size_t idx[16] = {0};
	json_t *grid = json_pack("{s:[],s:[]}", "axes", "family");
	json_t *gaxes = json_object_get(grid, "axes"), *fam = json_object_get(grid, "family");
	for (size_t a = 0; a < naxes && rc == 0 && grid; a++) {
		json_t *vals = json_array();
		for (size_t v = 0; v < nvalues[a]; v++)
			json_array_append_new(vals, json_string(values[a][v]));
		json_array_append_new(gaxes,
				      json_pack("{s:s,s:o}", "axis", names[a], "values", vals));
	}
	while (rc == 0) {
		char spec[1024] = "", settings[1024] = "";
		grid_name(names, values, idx, naxes, SIZE_MAX, spec, sizeof(spec));
		for (size_t a = 0; a < naxes; a++) {
			size_t m = strlen(settings);
			snprintf(settings + m, sizeof(settings) - m, "%s%s=%s", a ? "," : "",
				 names[a], values[a][idx[a]]);
			if (idx[a] == 0 || !grid)
				continue;
			char base[1024];
			grid_name(names, values, idx, naxes, a, base, sizeof(base));
			json_array_append_new(fam, json_pack("{s:s,s:s,s:s}", "axis", names[a], "a",
							     spec, "b", base));
		}
		char full[2100];
		snprintf(full, sizeof(full), "%s:%s", spec, settings);
		rc = sweepdef_add_condition(d, full, err);
		size_t a = 0;
		while (a < naxes && ++idx[a] == nvalues[a])
			idx[a++] = 0;
		if (a == naxes)
			break;
	}
	char *gj = grid && rc == 0 ? json_dumps(grid, JSON_COMPACT) : NULL;
	json_decref(grid);
	if (rc == 0 && (!gj || !(d->grid_json = arena_strdup(&d->arena, gj))))
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
	free(gj);
	for (size_t a = 0; a < naxes; a++)
		engi_free(copies[a]);
	return rc;
}
