/*
 * The registry of task sources and the loading that detects them.
 */
#include "source.h"

#include "engi/alloc.h"
#include "engi/json.h"
#include "fsutil.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#ifdef ENGI_EXTRA_TASK_SOURCE
/* a test adds its toy source with this one line, as a new source would */
extern const struct task_source ENGI_EXTRA_TASK_SOURCE;
#endif

static const struct task_source *const sources[] = {
    &task_source_native,
    &task_source_engiworld,
    &task_source_structureclaw,
    &task_source_harbor,
#ifdef ENGI_EXTRA_TASK_SOURCE
    &ENGI_EXTRA_TASK_SOURCE,
#endif
    NULL,
};

const struct task_source *const *task_sources(void)
{
	return sources;
}

const struct task_source *task_source_lookup(const char *name, struct engi_error *err)
{
	char names[256] = "";
	size_t len = 0;
	for (size_t i = 0; sources[i]; i++) {
		if (!strcmp(sources[i]->name, name))
			return sources[i];
		int w = snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
				 sources[i]->name);
		if (w > 0 && (size_t)w < sizeof(names) - len)
			len += (size_t)w;
	}
	engi_raise(err, ENGI_ENOTFOUND, "no task source '%s' (known: %s)", name, names);
	return NULL;
}

const struct task_source *task_source_detect(const char *path, struct engi_error *err)
{
	const struct task_source *best = NULL;
	int best_score = 0;
	for (size_t i = 0; sources[i]; i++) {
		int sc = sources[i]->ops->probe(path);
		if (sc > best_score) {
			best = sources[i];
			best_score = sc;
		}
	}
	if (!best)
		engi_raise(err, ENGI_ENOTFOUND,
			   "'%s' is not a suite any task source reads (see engisweep inspect; "
			   "name one with --source)",
			   path);
	return best;
}

size_t suite_refused_by(const struct suite *s, size_t i)
{
	const char *cat = s->refused[i].category;
	for (size_t j = 0; j < i; j++)
		if (!strcmp(s->refused[j].category, cat))
			return 0;
	size_t n = 0;
	for (size_t j = i; j < s->nrefused; j++)
		n += !strcmp(s->refused[j].category, cat);
	return n;
}

int suite_settle_file(struct suite *s, const char *file, int rc, const char *category,
		      const char *msg, int msg_has_file, const struct engi_error *e, int strict,
		      struct engi_error *err)
{
	if (rc == 0)
		return 0;
	char why[2 * ENGI_ERROR_MSG_MAX];
	if (!category || !category[0]) {
		if (rc == ENGI_ENOMEM)
			return engi_raise(err, rc, "%s", e->msg);
		category = "not a valid engisweep task";
		snprintf(why, sizeof(why), "%s", e->msg);
	} else if (msg_has_file) {
		snprintf(why, sizeof(why), "%s", msg);
	} else {
		snprintf(why, sizeof(why), "%s: %s", file, msg);
	}
	if (strict)
		return engi_raise(err, ENGI_EINVALID, "%s", why);
	if (suite_refuse(s, file, ENGI_EINVALID, category, why) < 0)
		return engi_raise(err, ENGI_ENOMEM, "out of memory");
	return 0;
}

int suite_refuse(struct suite *s, const char *file, int code, const char *category,
		 const char *reason)
{
	struct task_refusal *v = engi_reallocarray(s->refused, s->nrefused + 1, sizeof(*v));
	if (!v)
		return ENGI_ENOMEM;
	s->refused = v;
	struct task_refusal *r = &s->refused[s->nrefused];
	r->file = arena_strdup(&s->arena, file);
	r->reason = arena_strdup(&s->arena, reason);
	r->category = arena_strdup(&s->arena, category);
	r->code = code;
	if (!r->file || !r->reason || !r->category)
		return ENGI_ENOMEM;
	s->nrefused++;
	return 0;
}

int suite_load_from(struct suite *s, const char *path, const char *source, int strict,
		    struct engi_error *err)
{
	struct suite_load_opts o = {.source = source, .strict = strict};
	return suite_load_with(s, path, &o, err);
}

const char *suite_image_for(const struct suite *s, const char *snapshot, const char *dflt)
{
	for (size_t i = 0; i < s->nimages; i++)
		if (!strcmp(s->images[i].snapshot, snapshot))
			return s->images[i].image;
	return dflt;
}

#define IMAGES_FILE_CAP ((size_t)1 << 20)

int suite_images_read(const char *path, struct arena *a, struct suite_image **out, size_t *n,
		      struct engi_error *err)
{
	*out = NULL;
	*n = 0;
	char *text = NULL;
	size_t len = 0;
	TRY(fs_read_file(path, IMAGES_FILE_CAP, &text, &len, err));
	json_t *root = NULL;
	int rc = engi_json_parse(path, text, len, &root, err);
	engi_free(text);
	if (rc < 0)
		return rc;
	if (!json_is_object(root)) {
		rc = engi_parse_error(err, path, "/",
				      "expected an object of snapshot name -> image name, found %s",
				      engi_json_kind(root));
		json_decref(root);
		return rc;
	}
	size_t cnt = json_object_size(root);
	struct suite_image *m = cnt ? arena_array(a, cnt, sizeof(*m)) : NULL;
	if (cnt && !m) {
		json_decref(root);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v)
	{
		char p[ENGI_POINTER_MAX];
		engi_json_pointer(p, sizeof(p), "", key);
		const char *img = json_string_value(v);
		if (!img) {
			rc = engi_parse_error(err, path, p, "expected an image name, found %s",
					      engi_json_kind(v));
			break;
		}
		size_t k = strlen(img);
		if (strchr(img, '/') || (k > 6 && !strcmp(img + k - 6, ".qcow2"))) {
			rc = engi_parse_error(
			    err, path, p,
			    "'%s': the benchmark's own qcow2 images are not supported "
			    "yet; name an engisweep image (engisweep image list)",
			    img);
			break;
		}
		if (!engi_json_name_valid(img, k)) {
			rc = engi_parse_error(err, path, p, "'%s' is not an image name", img);
			break;
		}
		m[*n].snapshot = arena_strdup(a, key);
		m[*n].image = arena_strdup(a, img);
		if (!m[*n].snapshot || !m[*n].image) {
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
			break;
		}
		(*n)++;
	}
	json_decref(root);
	if (rc < 0) {
		*n = 0;
		return rc;
	}
	*out = m;
	return 0;
}

int suite_load_with(struct suite *s, const char *path, const struct suite_load_opts *o,
		    struct engi_error *err)
{
	const char *source = o->source;
	int strict = o->strict;
	memset(s, 0, sizeof(*s));
	arena_init(&s->arena);
	if (o->nimages) {
		/* the suite's own copy */
		struct suite_image *m = arena_array(&s->arena, o->nimages, sizeof(*m));
		for (size_t i = 0; m && i < o->nimages; i++) {
			m[i].snapshot = arena_strdup(&s->arena, o->images[i].snapshot);
			m[i].image = arena_strdup(&s->arena, o->images[i].image);
			if (!m[i].snapshot || !m[i].image)
				m = NULL;
		}
		if (!m) {
			suite_release(s);
			RAISE(err, ENGI_ENOMEM, "out of memory");
		}
		s->images = m;
		s->nimages = o->nimages;
	}
	const struct task_source *src;
	if (source) {
		src = task_source_lookup(source, err);
		if (!src) {
			suite_release(s);
			return ENGI_ENOTFOUND;
		}
	} else {
		/* nothing claims it: the native source says what is wrong */
		src = task_source_detect(path, NULL);
		if (!src)
			src = &task_source_native;
	}
	s->source = src->name;
	if (o->deliverables && !src->takes_deliverables) {
		suite_release(s);
		RAISE(err, ENGI_EINVALID,
		      "--deliverables: the %s source's tasks name their own deliverables (a "
		      "deliverables map is for harbor tasks)",
		      src->name);
	}
	s->path = arena_strdup(&s->arena, path);
	if (o->deliverables)
		s->deliverables = arena_strdup(&s->arena, o->deliverables);
	if (!s->path || (o->deliverables && !s->deliverables)) {
		suite_release(s);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	int rc = src->ops->load(s, path, strict && !src->partial, err);
	if (rc < 0)
		suite_release(s);
	return rc;
}
