/*
 * structural_list.c - one model of a reference list: a JSON array of
 * {"id", "model"} entries, as StructureClaw-Bench's
 * fixtures/ground-truth-models.json (engi/structural.h).
 */
#include "engi/alloc.h"
#include "engi/slurp.h"
#include "engi/structural.h"
#include "engi/verify.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int engi_structural_read_entry(const char *path, const char *rel, const char *id,
			       struct engi_structural *s, char *label, size_t label_cap,
			       struct engi_error *err)
{
	snprintf(label, label_cap, "%s '%s'", rel, id);
	struct engi_error e;
	engi_error_init(&e);
	char *text = NULL;
	size_t len = 0;
	int rc =
	    engi_io_slurp(path, rel, "reference models", ENGI_STRUCT_LIST_MAX, &text, &len, &e);
	if (rc < 0)
		RAISE(err, rc == ENGI_ENOMEM ? rc : ENGI_EIO, "%s", e.msg);
	json_t *root = NULL;
	rc = engi_json_parse(rel, text, len, &root, &e);
	engi_free(text);
	if (rc < 0)
		RAISE(err, rc == ENGI_ENOMEM ? rc : ENGI_EPARSE, "%s", e.msg);
	if (!json_is_array(root)) {
		const char *kind = engi_json_kind(root);
		json_decref(root);
		RAISE(err, ENGI_EPARSE, "%s: expected an array of {id, model}, found %s", rel,
		      kind);
	}
	json_t *model = NULL;
	size_t count = json_array_size(root);
	for (size_t i = 0; i < count && !model; i++) {
		json_t *entry = json_array_get(root, i);
		json_t *eid = json_object_get(entry, "id");
		if (json_is_string(eid) && !strcmp(json_string_value(eid), id))
			model = json_object_get(entry, "model");
	}
	if (!json_is_object(model)) {
		json_decref(root);
		RAISE(err, ENGI_ENOTFOUND, "%s has no entry '%s' with a model (%zu entries)", rel,
		      id, count);
	}
	char *dump = json_dumps(model, JSON_COMPACT);
	json_decref(root);
	if (!dump)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", rel);
	engi_error_init(&e);
	rc = engi_structural_parse(label, dump, strlen(dump), s, &e);
	free(dump);
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0)
		RAISE(err, ENGI_EINVALID, "the reference does not read: %s", e.msg);
	return 0;
}
