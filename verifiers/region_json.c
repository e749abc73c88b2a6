/*
 * Readers of JSON points and occupancy regions for the verifier kinds
 * (engi/verify.h): three-component vectors and {"box": ...} or
 * {"cylinder": ...} regions, with errors naming the JSON pointer.
 */
#include "engi/occupancy.h"
#include "engi/verify.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#define POINTER_MAX ENGI_POINTER_MAX

int engi_json_vec3(json_t *obj, const char *key, const char *file, const char *ptr, double out[3],
		   struct engi_error *err)
{
	char p[POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	json_t *a = json_object_get(obj, key);
	if (!a)
		return engi_parse_error(err, file, p, "missing required field");
	if (!json_is_array(a) || json_array_size(a) != 3)
		return engi_parse_error(err, file, p, "expected an array of 3 numbers, found %s",
					engi_json_kind(a));
	for (size_t i = 0; i < 3; i++) {
		json_t *x = json_array_get(a, i);
		if (!json_is_number(x) || !isfinite(json_number_value(x))) {
			char q[POINTER_MAX];
			engi_json_pointer_index(q, sizeof(q), p, i);
			return engi_parse_error(err, file, q, "expected a finite number, found %s",
						engi_json_kind(x));
		}
		out[i] = json_number_value(x);
	}
	return 0;
}

static int parse_positive(json_t *obj, const char *key, const char *file, const char *ptr,
			  double *out, struct engi_error *err)
{
	int present;
	char p[POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	TRY(engi_json_number(obj, key, file, ptr, &present, out, err));
	if (!present)
		return engi_parse_error(err, file, p, "missing required field");
	if (!(*out > 0))
		return engi_parse_error(err, file, p, "must be greater than 0");
	return 0;
}

int engi_json_region(json_t *item, const char *key, const char *file, const char *ptr,
		     struct engi_region *r, struct engi_error *err)
{
	static const char *const kinds[] = {"box", "cylinder", NULL};
	static const char *const box_keys[] = {"min", "max", NULL};
	static const char *const cyl_keys[] = {"base", "axis", "radius", "length", NULL};
	char p[POINTER_MAX], q[POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	json_t *reg = json_object_get(item, key);
	if (!reg)
		return engi_parse_error(err, file, p, "missing required field");
	if (!json_is_object(reg) || json_object_size(reg) != 1)
		return engi_parse_error(err, file, p,
					"expected an object with one member, box or cylinder");
	TRY(engi_json_only_keys(reg, kinds, file, p, err));
	memset(r, 0, sizeof(*r));
	json_t *box = json_object_get(reg, "box");
	if (box) {
		engi_json_pointer(q, sizeof(q), p, "box");
		if (!json_is_object(box))
			return engi_parse_error(err, file, q, "expected an object, found %s",
						engi_json_kind(box));
		TRY(engi_json_only_keys(box, box_keys, file, q, err));
		r->kind = ENGI_REGION_BOX;
		TRY(engi_json_vec3(box, "min", file, q, r->lo, err));
		TRY(engi_json_vec3(box, "max", file, q, r->hi, err));
		for (int d = 0; d < 3; d++)
			if (!(r->lo[d] < r->hi[d])) {
				char m[POINTER_MAX];
				engi_json_pointer(m, sizeof(m), q, "max");
				return engi_parse_error(err, file, m,
							"must exceed min along %c (%g <= %g)",
							"xyz"[d], r -> hi[d], r -> lo[d]);
			}
		return 0;
	}
	json_t *cyl = json_object_get(reg, "cylinder");
	engi_json_pointer(q, sizeof(q), p, "cylinder");
	if (!json_is_object(cyl))
		return engi_parse_error(err, file, q, "expected an object, found %s",
					engi_json_kind(cyl));
	TRY(engi_json_only_keys(cyl, cyl_keys, file, q, err));
	r->kind = ENGI_REGION_CYLINDER;
	TRY(engi_json_vec3(cyl, "base", file, q, r->base, err));
	TRY(engi_json_vec3(cyl, "axis", file, q, r->axis, err));
	if (r->axis[0] == 0 && r->axis[1] == 0 && r->axis[2] == 0) {
		char m[POINTER_MAX];
		engi_json_pointer(m, sizeof(m), q, "axis");
		return engi_parse_error(err, file, m, "must not be the zero vector");
	}
	TRY(parse_positive(cyl, "radius", file, q, &r->radius, err));
	TRY(parse_positive(cyl, "length", file, q, &r->length, err));
	return 0;
}
