/*
 * Structural-model JSON reader (tasks/SCHEMA-structural.md). Everything is
 * validated before anything is converted; every message is
 * "<file>: <JSON pointer>: <what is wrong>". The root tells the format:
 * "format" is ours, "schema_version" with "nodes" StructureClaw's
 * (structural_sc.c).
 */
#include "engi/structural.h"

#include "structural_sc.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/verify.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void engi_structural_init(struct engi_structural *s)
{
	memset(s, 0, sizeof(*s));
	engi_frame_init(&s->f);
}

void engi_structural_release(struct engi_structural *s)
{
	engi_frame_release(&s->f);
	engi_free(s->case_name);
	engi_free(s->combo_name);
	engi_structural_init(s);
}

static const char *const dof_names[] = {"ux", "uy", "uz", "rx", "ry", "rz", NULL};

struct rd {
	const char *file;
	struct engi_error *err;
};

#define PERR(rd, ptr, ...) return engi_parse_error((rd)->err, (rd)->file, (ptr), __VA_ARGS__)

static int get_array(struct rd *rd, json_t *obj, const char *key, const char *ptr, int required,
		     json_t **out, size_t max)
{
	char p[ENGI_POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	json_t *a = json_object_get(obj, key);
	*out = NULL;
	if (!a) {
		if (required)
			PERR(rd, p, "required array is missing");
		return 0;
	}
	if (!json_is_array(a))
		PERR(rd, p, "expected an array, found %s", engi_json_kind(a));
	if (json_array_size(a) > max)
		PERR(rd, p, "more than %zu entries", max);
	*out = a;
	return 0;
}

static int get_num(struct rd *rd, json_t *obj, const char *key, const char *ptr, int required,
		   double *out, int positive)
{
	int present = 0;
	TRY(engi_json_number(obj, key, rd->file, ptr, &present, out, rd->err));
	char p[ENGI_POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	if (!present && required)
		PERR(rd, p, "required number is missing");
	if (present && positive && !(*out > 0))
		PERR(rd, p, "must be positive, found %g", *out);
	return present;
}

static int get_id(struct rd *rd, json_t *obj, const char *key, const char *ptr, long long *out)
{
	char p[ENGI_POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	json_t *v = json_object_get(obj, key);
	if (!v)
		PERR(rd, p, "required integer id is missing");
	if (!json_is_integer(v))
		PERR(rd, p, "expected an integer, found %s", engi_json_kind(v));
	*out = json_integer_value(v);
	return 0;
}

static int get_name(struct rd *rd, json_t *obj, const char *key, const char *ptr, char *out)
{
	char p[ENGI_POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	json_t *v = json_object_get(obj, key);
	if (!v)
		PERR(rd, p, "required string is missing");
	if (!json_is_string(v))
		PERR(rd, p, "expected a string, found %s", engi_json_kind(v));
	size_t n = json_string_length(v);
	if (n == 0 || n >= ENGI_STRUCT_NAME_MAX)
		PERR(rd, p, "must have 1 to %d characters", ENGI_STRUCT_NAME_MAX - 1);
	memcpy(out, json_string_value(v), n + 1);
	return 0;
}

static int get_vec(struct rd *rd, json_t *obj, const char *key, const char *ptr, int nmin, int nmax,
		   double *out, int required)
{
	char p[ENGI_POINTER_MAX];
	engi_json_pointer(p, sizeof(p), ptr, key);
	json_t *v = json_object_get(obj, key);
	if (!v) {
		if (required)
			PERR(rd, p, "required array is missing");
		return 0;
	}
	if (!json_is_array(v) || json_array_size(v) < (size_t)nmin ||
	    json_array_size(v) > (size_t)nmax)
		PERR(rd, p, "expected an array of %d to %d numbers", nmin, nmax);
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *x = json_array_get(v, i);
		if (!json_is_number(x) || !isfinite(json_number_value(x))) {
			char q[ENGI_POINTER_MAX];
			engi_json_pointer_index(q, sizeof(q), p, i);
			PERR(rd, q, "expected a finite number, found %s", engi_json_kind(x));
		}
		out[i] = json_number_value(x);
	}
	return 1;
}

/* A list of dof names (or "all") into a bit mask. */
static int get_dofs(struct rd *rd, json_t *v, const char *p, uint8_t *mask)
{
	*mask = 0;
	if (json_is_string(v) && !strcmp(json_string_value(v), "all")) {
		*mask = 0x3f;
		return 0;
	}
	if (!json_is_array(v))
		PERR(rd, p, "expected \"all\" or an array of ux, uy, uz, rx, ry, rz");
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *x = json_array_get(v, i);
		int d = -1;
		for (int k = 0; dof_names[k] && json_is_string(x); k++)
			if (!strcmp(json_string_value(x), dof_names[k]))
				d = k;
		if (d < 0) {
			char q[ENGI_POINTER_MAX];
			engi_json_pointer_index(q, sizeof(q), p, i);
			PERR(rd, q, "expected one of ux, uy, uz, rx, ry, rz");
		}
		*mask |= (uint8_t)(1u << d);
	}
	return 0;
}

struct idx {
	long long id;
	size_t i;
};

static int cmp_idx(const void *a, const void *b)
{
	long long x = ((const struct idx *)a)->id, y = ((const struct idx *)b)->id;
	return (x > y) - (x < y);
}

static long find_idx(const struct idx *m, size_t n, long long id)
{
	struct idx key = {id, 0};
	const struct idx *p = bsearch(&key, m, n, sizeof(*m), cmp_idx);
	return p ? (long)p->i : -1;
}

struct named {
	char name[ENGI_STRUCT_NAME_MAX];
	double v[4];
};

static long find_named(const struct named *a, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(a[i].name, name))
			return (long)i;
	return -1;
}

static int convert(struct rd *rd, json_t *root, struct engi_structural *s)
{
	struct engi_frame *f = &s->f;
	static const char *const top_keys[] = {
	    "format",	"dim",	    "units",	  "materials",	  "sections", "nodes",
	    "elements", "supports", "load_cases", "combinations", "title",    NULL};
	if (!json_is_object(root))
		PERR(rd, "", "expected an object, found %s", engi_json_kind(root));
	TRY(engi_json_only_keys(root, top_keys, rd->file, "", rd->err));
	json_t *fmt = json_object_get(root, "format");
	if (!json_is_string(fmt) || strcmp(json_string_value(fmt), "structural/1") != 0)
		PERR(rd, "/format", "expected \"structural/1\"");
	json_t *dim = json_object_get(root, "dim");
	if (!json_is_integer(dim) || (json_integer_value(dim) != 2 && json_integer_value(dim) != 3))
		PERR(rd, "/dim", "expected 2 or 3");
	f->dim = (int)json_integer_value(dim);
	json_t *units = json_object_get(root, "units");
	if (units) {
		static const char *const ukeys[] = {"length", "force", NULL};
		if (!json_is_object(units))
			PERR(rd, "/units", "expected an object");
		TRY(engi_json_only_keys(units, ukeys, rd->file, "/units", rd->err));
		json_t *l = json_object_get(units, "length"), *fo = json_object_get(units, "force");
		if (l && json_is_string(l))
			snprintf(s->length_unit, sizeof(s->length_unit), "%s",
				 json_string_value(l));
		if (fo && json_is_string(fo))
			snprintf(s->force_unit, sizeof(s->force_unit), "%s", json_string_value(fo));
	}
	json_t *mats, *secs, *nodes, *elems, *sups, *cases, *combos;
	TRY(get_array(rd, root, "materials", "", 1, &mats, 100000));
	TRY(get_array(rd, root, "sections", "", 1, &secs, 100000));
	TRY(get_array(rd, root, "nodes", "", 1, &nodes, ENGI_STRUCT_MAX_ENTITIES));
	TRY(get_array(rd, root, "elements", "", 1, &elems, ENGI_STRUCT_MAX_ENTITIES));
	TRY(get_array(rd, root, "supports", "", 1, &sups, ENGI_STRUCT_MAX_ENTITIES));
	TRY(get_array(rd, root, "load_cases", "", 0, &cases, 10000));
	TRY(get_array(rd, root, "combinations", "", 0, &combos, 10000));
	char p[ENGI_POINTER_MAX];
	int rc = 0;
	size_t nm = json_array_size(mats), nsec = json_array_size(secs);
	size_t nn = json_array_size(nodes), ne = json_array_size(elems);
	struct named *mat = engi_calloc(nm + 1, sizeof(*mat));
	struct named *sec = engi_calloc(nsec + 1, sizeof(*sec));
	struct idx *nmap = engi_calloc(nn + 1, sizeof(*nmap));
	struct idx *emap = engi_calloc(ne + 1, sizeof(*emap));
	if (!mat || !sec || !nmap || !emap) {
		rc = engi_raise(rd->err, ENGI_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nm; i++) {
		static const char *const k[] = {"id", "E", "G", "nu", NULL};
		json_t *o = json_array_get(mats, i);
		engi_json_pointer_index(p, sizeof(p), "/materials", i);
		if (!json_is_object(o)) {
			rc = engi_parse_error(rd->err, rd->file, p, "expected an object");
			goto out;
		}
		if ((rc = engi_json_only_keys(o, k, rd->file, p, rd->err)) < 0 ||
		    (rc = get_name(rd, o, "id", p, mat[i].name)) < 0 ||
		    (rc = get_num(rd, o, "E", p, 1, &mat[i].v[0], 1)) < 0)
			goto out;
		double nu = 0;
		int hg = get_num(rd, o, "G", p, 0, &mat[i].v[1], 1);
		int hn = hg < 0 ? hg : get_num(rd, o, "nu", p, 0, &nu, 0);
		if ((rc = hn) < 0)
			goto out;
		if (!hg && hn) {
			if (!(nu > -1 && nu < 0.5)) {
				engi_json_pointer(p, sizeof(p), p, "nu");
				rc = engi_parse_error(rd->err, rd->file, p, "must be in (-1, 0.5)");
				goto out;
			}
			mat[i].v[1] = mat[i].v[0] / (2 * (1 + nu));
		} else if (!hg) {
			rc = engi_parse_error(rd->err, rd->file, p, "needs G or nu");
			goto out;
		}
		if (find_named(mat, i, mat[i].name) >= 0) {
			rc = engi_parse_error(rd->err, rd->file, p, "duplicate material id '%s'",
					      mat[i].name);
			goto out;
		}
	}
	for (size_t i = 0; i < nsec; i++) {
		static const char *const k[] = {"id", "A", "Iy", "Iz", "J", NULL};
		json_t *o = json_array_get(secs, i);
		engi_json_pointer_index(p, sizeof(p), "/sections", i);
		if (!json_is_object(o)) {
			rc = engi_parse_error(rd->err, rd->file, p, "expected an object");
			goto out;
		}
		if ((rc = engi_json_only_keys(o, k, rd->file, p, rd->err)) < 0 ||
		    (rc = get_name(rd, o, "id", p, sec[i].name)) < 0 ||
		    (rc = get_num(rd, o, "A", p, 1, &sec[i].v[0], 1)) < 0 ||
		    (rc = get_num(rd, o, "Iy", p, 0, &sec[i].v[1], 1)) < 0 ||
		    (rc = get_num(rd, o, "Iz", p, 0, &sec[i].v[2], 1)) < 0 ||
		    (rc = get_num(rd, o, "J", p, 0, &sec[i].v[3], 1)) < 0)
			goto out;
		if (find_named(sec, i, sec[i].name) >= 0) {
			rc = engi_parse_error(rd->err, rd->file, p, "duplicate section id '%s'",
					      sec[i].name);
			goto out;
		}
	}
	f->nnodes = nn;
	f->xyz = engi_calloc(3 * nn + 1, sizeof(double));
	f->node_id = engi_calloc(nn + 1, sizeof(int64_t));
	f->restraint = engi_calloc(nn + 1, 1);
	f->nelems = ne;
	f->elem = engi_calloc(ne + 1, sizeof(*f->elem));
	f->elem_id = engi_calloc(ne + 1, sizeof(int64_t));
	if (!f->xyz || !f->node_id || !f->restraint || !f->elem || !f->elem_id) {
		rc = engi_raise(rd->err, ENGI_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nn; i++) {
		static const char *const k[] = {"id", "xyz", NULL};
		json_t *o = json_array_get(nodes, i);
		long long id;
		engi_json_pointer_index(p, sizeof(p), "/nodes", i);
		if (!json_is_object(o)) {
			rc = engi_parse_error(rd->err, rd->file, p, "expected an object");
			goto out;
		}
		if ((rc = engi_json_only_keys(o, k, rd->file, p, rd->err)) < 0 ||
		    (rc = get_id(rd, o, "id", p, &id)) < 0 ||
		    (rc = get_vec(rd, o, "xyz", p, f->dim, 3, f->xyz + 3 * i, 1)) < 0)
			goto out;
		if (f->dim == 2 && f->xyz[3 * i + 2] != 0) {
			engi_json_pointer(p, sizeof(p), p, "xyz");
			rc = engi_parse_error(rd->err, rd->file, p, "a 2D model lies in z = 0");
			goto out;
		}
		f->node_id[i] = id;
		nmap[i].id = id;
		nmap[i].i = i;
	}
	qsort(nmap, nn, sizeof(*nmap), cmp_idx);
	for (size_t i = 1; i < nn; i++)
		if (nmap[i].id == nmap[i - 1].id) {
			engi_json_pointer_index(p, sizeof(p), "/nodes", nmap[i].i);
			rc = engi_parse_error(rd->err, rd->file, p, "duplicate node id %lld",
					      nmap[i].id);
			goto out;
		}
	for (size_t i = 0; i < ne; i++) {
		static const char *const k[] = {"id",	   "type",     "nodes", "material",
						"section", "releases", "zref",	NULL};
		static const char *const types[] = {"beam", "truss", NULL};
		json_t *o = json_array_get(elems, i);
		struct engi_frame_elem *el = &f->elem[i];
		long long id;
		int type = 0;
		engi_json_pointer_index(p, sizeof(p), "/elements", i);
		if (!json_is_object(o)) {
			rc = engi_parse_error(rd->err, rd->file, p, "expected an object");
			goto out;
		}
		if ((rc = engi_json_only_keys(o, k, rd->file, p, rd->err)) < 0 ||
		    (rc = get_id(rd, o, "id", p, &id)) < 0 ||
		    (rc = engi_json_choice(o, "type", types, "element type", 1, rd->file, p, &type,
					   rd->err)) < 0)
			goto out;
		f->elem_id[i] = id;
		emap[i].id = id;
		emap[i].i = i;
		el->type = (uint8_t)type;
		char q[ENGI_POINTER_MAX];
		engi_json_pointer(q, sizeof(q), p, "nodes");
		json_t *en = json_object_get(o, "nodes");
		if (!json_is_array(en) || json_array_size(en) != 2 ||
		    !json_is_integer(json_array_get(en, 0)) ||
		    !json_is_integer(json_array_get(en, 1))) {
			rc = engi_parse_error(rd->err, rd->file, q, "expected two node ids");
			goto out;
		}
		for (int t = 0; t < 2; t++) {
			long long nid = json_integer_value(json_array_get(en, (size_t)t));
			long ix = find_idx(nmap, nn, nid);
			if (ix < 0) {
				char q2[ENGI_POINTER_MAX];
				engi_json_pointer_index(q2, sizeof(q2), q, (size_t)t);
				rc = engi_parse_error(rd->err, rd->file, q2, "unknown node %lld",
						      nid);
				goto out;
			}
			el->node[t] = (uint32_t)ix;
		}
		if (el->node[0] == el->node[1]) {
			rc = engi_parse_error(rd->err, rd->file, q, "both ends on the same node");
			goto out;
		}
		char mname[ENGI_STRUCT_NAME_MAX], sname[ENGI_STRUCT_NAME_MAX];
		if ((rc = get_name(rd, o, "material", p, mname)) < 0 ||
		    (rc = get_name(rd, o, "section", p, sname)) < 0)
			goto out;
		long mi = find_named(mat, nm, mname), si = find_named(sec, nsec, sname);
		if (mi < 0 || si < 0) {
			engi_json_pointer(q, sizeof(q), p, mi < 0 ? "material" : "section");
			rc = engi_parse_error(rd->err, rd->file, q, "unknown %s '%s'",
					      mi < 0 ? "material" : "section",
					      mi < 0 ? mname : sname);
			goto out;
		}
		el->young = mat[mi].v[0];
		el->shear = mat[mi].v[1];
		el->area = sec[si].v[0];
		el->iy = sec[si].v[1];
		el->iz = sec[si].v[2];
		el->torsion = sec[si].v[3];
		if (type == ENGI_FRAME_BEAM) {
			const char *miss = !(el->iz > 0) ? "Iz" : NULL;
			if (f->dim == 3 && !miss)
				miss = !(el->iy > 0) ? "Iy" : !(el->torsion > 0) ? "J" : NULL;
			if (miss) {
				engi_json_pointer(q, sizeof(q), p, "section");
				rc = engi_parse_error(
				    rd->err, rd->file, q,
				    "section '%s' has no %s, which a %dD beam needs", sname, miss,
				    f->dim);
				goto out;
			}
		}
		json_t *rel = json_object_get(o, "releases");
		if (rel) {
			static const char *const rk[] = {"start", "end", NULL};
			engi_json_pointer(q, sizeof(q), p, "releases");
			if (!json_is_object(rel)) {
				rc = engi_parse_error(rd->err, rd->file, q, "expected an object");
				goto out;
			}
			if ((rc = engi_json_only_keys(rel, rk, rd->file, q, rd->err)) < 0)
				goto out;
			for (int t = 0; t < 2; t++) {
				json_t *r = json_object_get(rel, rk[t]);
				char q2[ENGI_POINTER_MAX];
				engi_json_pointer(q2, sizeof(q2), q, rk[t]);
				if (r && (rc = get_dofs(rd, r, q2, &el->release[t])) < 0)
					goto out;
			}
			if ((el->release[0] & el->release[1] & 1) ||
			    (el->release[0] & el->release[1] & 8)) {
				rc = engi_parse_error(
				    rd->err, rd->file, q,
				    "axial force or torsion released at both ends");
				goto out;
			}
		}
		if ((rc = get_vec(rd, o, "zref", p, 3, 3, el->zref, 0)) < 0)
			goto out;
	}
	qsort(emap, ne, sizeof(*emap), cmp_idx);
	for (size_t i = 1; i < ne; i++)
		if (emap[i].id == emap[i - 1].id) {
			engi_json_pointer_index(p, sizeof(p), "/elements", emap[i].i);
			rc = engi_parse_error(rd->err, rd->file, p, "duplicate element id %lld",
					      emap[i].id);
			goto out;
		}
	for (size_t i = 0; i < json_array_size(sups); i++) {
		static const char *const k[] = {"node", "restrain", NULL};
		json_t *o = json_array_get(sups, i);
		long long id;
		engi_json_pointer_index(p, sizeof(p), "/supports", i);
		if (!json_is_object(o)) {
			rc = engi_parse_error(rd->err, rd->file, p, "expected an object");
			goto out;
		}
		if ((rc = engi_json_only_keys(o, k, rd->file, p, rd->err)) < 0 ||
		    (rc = get_id(rd, o, "node", p, &id)) < 0)
			goto out;
		long ix = find_idx(nmap, nn, id);
		char q[ENGI_POINTER_MAX];
		engi_json_pointer(q, sizeof(q), p, ix < 0 ? "node" : "restrain");
		if (ix < 0) {
			rc = engi_parse_error(rd->err, rd->file, q, "unknown node %lld", id);
			goto out;
		}
		uint8_t mask;
		json_t *r = json_object_get(o, "restrain");
		if (!r) {
			rc = engi_parse_error(rd->err, rd->file, q, "required list is missing");
			goto out;
		}
		if ((rc = get_dofs(rd, r, q, &mask)) < 0)
			goto out;
		f->restraint[ix] |= mask;
	}
	/* load cases */
	size_t nc = json_array_size(cases), nnod = 0, nmem = 0;
	for (size_t c = 0; c < nc; c++) {
		json_t *o = json_array_get(cases, c), *a;
		engi_json_pointer_index(p, sizeof(p), "/load_cases", c);
		if (!json_is_object(o)) {
			rc = engi_parse_error(rd->err, rd->file, p, "expected an object");
			goto out;
		}
		if ((a = json_object_get(o, "nodal")) && json_is_array(a))
			nnod += json_array_size(a);
		if ((a = json_object_get(o, "member")) && json_is_array(a))
			nmem += json_array_size(a);
	}
	f->ncases = nc;
	s->case_name = engi_calloc(nc + 1, sizeof(*s->case_name));
	f->nodal = engi_calloc(nnod + 1, sizeof(*f->nodal));
	f->member = engi_calloc(nmem + 1, sizeof(*f->member));
	if (!s->case_name || !f->nodal || !f->member) {
		rc = engi_raise(rd->err, ENGI_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t c = 0; c < nc; c++) {
		static const char *const k[] = {"id", "nodal", "member", NULL};
		json_t *o = json_array_get(cases, c), *nl, *ml;
		engi_json_pointer_index(p, sizeof(p), "/load_cases", c);
		if ((rc = engi_json_only_keys(o, k, rd->file, p, rd->err)) < 0 ||
		    (rc = get_name(rd, o, "id", p, s->case_name[c])) < 0 ||
		    (rc = get_array(rd, o, "nodal", p, 0, &nl, ENGI_STRUCT_MAX_ENTITIES)) < 0 ||
		    (rc = get_array(rd, o, "member", p, 0, &ml, ENGI_STRUCT_MAX_ENTITIES)) < 0)
			goto out;
		for (size_t q0 = 0; q0 < c; q0++)
			if (!strcmp(s->case_name[q0], s->case_name[c])) {
				rc = engi_parse_error(rd->err, rd->file, p,
						      "duplicate load case '%s'", s->case_name[c]);
				goto out;
			}
		for (size_t i = 0; nl && i < json_array_size(nl); i++) {
			static const char *const lk[] = {"node", "F", "M", NULL};
			json_t *l = json_array_get(nl, i);
			char q[ENGI_POINTER_MAX], q2[ENGI_POINTER_MAX];
			long long id;
			engi_json_pointer(q2, sizeof(q2), p, "nodal");
			engi_json_pointer_index(q, sizeof(q), q2, i);
			struct engi_frame_nodal_load *L = &f->nodal[f->nnodal];
			if (!json_is_object(l)) {
				rc = engi_parse_error(rd->err, rd->file, q, "expected an object");
				goto out;
			}
			if ((rc = engi_json_only_keys(l, lk, rd->file, q, rd->err)) < 0 ||
			    (rc = get_id(rd, l, "node", q, &id)) < 0 ||
			    (rc = get_vec(rd, l, "F", q, 3, 3, L->f, 0)) < 0 ||
			    (rc = get_vec(rd, l, "M", q, 3, 3, L->f + 3, 0)) < 0)
				goto out;
			long ix = find_idx(nmap, nn, id);
			if (ix < 0) {
				engi_json_pointer(q, sizeof(q), q, "node");
				rc =
				    engi_parse_error(rd->err, rd->file, q, "unknown node %lld", id);
				goto out;
			}
			L->node = (uint32_t)ix;
			L->lcase = (uint32_t)c;
			f->nnodal++;
		}
		for (size_t i = 0; ml && i < json_array_size(ml); i++) {
			static const char *const lk[] = {"element", "w", "axes", NULL};
			static const char *const axes[] = {"global", "local", NULL};
			json_t *l = json_array_get(ml, i);
			char q[ENGI_POINTER_MAX], q2[ENGI_POINTER_MAX];
			long long id;
			int ax = 0;
			engi_json_pointer(q2, sizeof(q2), p, "member");
			engi_json_pointer_index(q, sizeof(q), q2, i);
			struct engi_frame_member_load *L = &f->member[f->nmember];
			if (!json_is_object(l)) {
				rc = engi_parse_error(rd->err, rd->file, q, "expected an object");
				goto out;
			}
			if ((rc = engi_json_only_keys(l, lk, rd->file, q, rd->err)) < 0 ||
			    (rc = get_id(rd, l, "element", q, &id)) < 0 ||
			    (rc = get_vec(rd, l, "w", q, 3, 3, L->w, 1)) < 0 ||
			    (rc = engi_json_choice(l, "axes", axes, "axes", 0, rd->file, q, &ax,
						   rd->err)) < 0)
				goto out;
			long ix = find_idx(emap, ne, id);
			if (ix < 0) {
				engi_json_pointer(q, sizeof(q), q, "element");
				rc = engi_parse_error(rd->err, rd->file, q, "unknown element %lld",
						      id);
				goto out;
			}
			L->elem = (uint32_t)ix;
			L->lcase = (uint32_t)c;
			L->local = ax;
			f->nmember++;
		}
	}
	size_t ncb = json_array_size(combos);
	if (ncb) {
		f->ncombos = ncb;
		f->combo = engi_calloc(ncb * nc + 1, sizeof(double));
		s->combo_name = engi_calloc(ncb, sizeof(*s->combo_name));
		if (!f->combo || !s->combo_name) {
			rc = engi_raise(rd->err, ENGI_ENOMEM, "out of memory");
			goto out;
		}
	}
	for (size_t m = 0; m < ncb; m++) {
		static const char *const k[] = {"id", "factors", NULL};
		json_t *o = json_array_get(combos, m);
		engi_json_pointer_index(p, sizeof(p), "/combinations", m);
		if (!json_is_object(o)) {
			rc = engi_parse_error(rd->err, rd->file, p, "expected an object");
			goto out;
		}
		if ((rc = engi_json_only_keys(o, k, rd->file, p, rd->err)) < 0 ||
		    (rc = get_name(rd, o, "id", p, s->combo_name[m])) < 0)
			goto out;
		json_t *fa = json_object_get(o, "factors");
		char q[ENGI_POINTER_MAX];
		engi_json_pointer(q, sizeof(q), p, "factors");
		if (!json_is_object(fa) || json_object_size(fa) == 0) {
			rc = engi_parse_error(rd->err, rd->file, q,
					      "expected an object of load case factors");
			goto out;
		}
		const char *key;
		json_t *val;
		json_object_foreach(fa, key, val)
		{
			char q2[ENGI_POINTER_MAX];
			engi_json_pointer(q2, sizeof(q2), q, key);
			long c = -1;
			for (size_t t = 0; t < nc; t++)
				if (!strcmp(s->case_name[t], key))
					c = (long)t;
			if (c < 0) {
				rc = engi_parse_error(rd->err, rd->file, q2, "unknown load case");
				goto out;
			}
			if (!json_is_number(val) || !isfinite(json_number_value(val))) {
				rc = engi_parse_error(rd->err, rd->file, q2, "expected a number");
				goto out;
			}
			f->combo[m * nc + (size_t)c] = json_number_value(val);
		}
	}
out:
	engi_free(mat);
	engi_free(sec);
	engi_free(nmap);
	engi_free(emap);
	return rc;
}

int engi_structural_parse(const char *name, const char *text, size_t len, struct engi_structural *s,
			  struct engi_error *err)
{
	json_error_t je;
	engi_structural_release(s);
	if (len > ENGI_STRUCT_MAX_BYTES)
		return engi_raise(err, ENGI_ETOOBIG, "%s: larger than %zu bytes", name,
				  ENGI_STRUCT_MAX_BYTES);
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return engi_raise(err, ENGI_EPARSE, "%s:%d:%d: %s", name, je.line, je.column,
				  je.text);
	struct rd rd = {name, err};
	int rc;
	if (json_is_object(root) && json_object_get(root, "format"))
		rc = convert(&rd, root, s);
	else if (engi_structural_sc_detect(root))
		rc = engi_structural_sc_convert(name, root, s, err);
	else
		rc = engi_parse_error(err, name, "",
				      "not a structural model: the formats known are "
				      "structural/1 (a root with \"format\": \"structural/1\") "
				      "and StructureClaw 2.x (a root with \"schema_version\" and "
				      "\"nodes\")");
	json_decref(root);
	if (rc < 0)
		engi_structural_release(s);
	return rc;
}

int engi_structural_read(const char *path, struct engi_structural *s, struct engi_error *err)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return engi_raise(err, ENGI_EIO, "cannot open '%s': %m", path);
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			if (cap >= ENGI_STRUCT_MAX_BYTES + 1)
				break;
			size_t nc = cap ? 2 * cap : 65536;
			char *nb = engi_realloc(buf, nc + 1);
			if (!nb) {
				engi_free(buf);
				fclose(fp);
				return engi_raise(err, ENGI_ENOMEM,
						  "cannot read '%s': out of memory", path);
			}
			buf = nb;
			cap = nc;
		}
		size_t got = fread(buf + len, 1, cap - len, fp);
		len += got;
		if (got == 0)
			break;
	}
	int bad = ferror(fp);
	fclose(fp);
	if (bad) {
		engi_free(buf);
		return engi_raise(err, ENGI_EIO, "cannot read '%s'", path);
	}
	int rc = engi_structural_parse(path, buf ? buf : "", len, s, err);
	engi_free(buf);
	return rc;
}

static json_t *dof_list(uint8_t mask)
{
	json_t *a = json_array();
	for (int d = 0; a && d < 6; d++)
		if (mask & (1u << d))
			json_array_append_new(a, json_string(dof_names[d]));
	return a;
}

static json_t *vec3(const double *v)
{
	return json_pack("[f, f, f]", v[0], v[1], v[2]);
}

int engi_structural_to_json(const struct engi_structural *s, char **text, struct engi_error *err)
{
	const struct engi_frame *f = &s->f;
	json_t *root =
	    json_pack("{s:s, s:i, s:{s:s, s:s}}", "format", "structural/1", "dim", f->dim, "units",
		      "length", s->length_unit[0] ? s->length_unit : "m", "force",
		      s->force_unit[0] ? s->force_unit : "N");
	json_t *mats = json_array(), *secs = json_array(), *nodes = json_array(),
	       *elems = json_array(), *sups = json_array(), *cases = json_array(),
	       *combos = json_array();
	int ok = root && mats && secs && nodes && elems && sups && cases && combos;
	for (size_t i = 0; ok && i < f->nnodes; i++) {
		json_t *xyz = vec3(&f->xyz[3 * i]);
		ok = json_array_append_new(
			 nodes,
			 json_pack("{s:I, s:o}", "id", (json_int_t)f->node_id[i], "xyz", xyz)) == 0;
		uint8_t m = f->restraint ? f->restraint[i] : 0;
		if (f->dim == 2)
			m &= (uint8_t)((1u << 0) | (1u << 1) | (1u << 5));
		if (ok && m)
			ok = json_array_append_new(sups, json_pack("{s:I, s:o}", "node",
								   (json_int_t)f->node_id[i],
								   "restrain", dof_list(m))) == 0;
	}
	for (size_t e = 0; ok && e < f->nelems; e++) {
		const struct engi_frame_elem *el = &f->elem[e];
		char id[32];
		snprintf(id, sizeof(id), "e%lld", (long long)f->elem_id[e]);
		/* what the element does not use (a truss's inertias, its G) is
		 * left out rather than written as 0 */
		json_t *mat = json_pack("{s:s, s:f}", "id", id, "E", el->young);
		json_t *sec = json_pack("{s:s, s:f}", "id", id, "A", el->area);
		if (mat)
			json_object_set_new(mat, el->shear > 0 ? "G" : "nu",
					    json_real(el->shear > 0 ? el->shear : 0.3));
		const char *const pname[] = {"Iy", "Iz", "J"};
		const double pval[] = {el->iy, el->iz, el->torsion};
		for (int k = 0; sec && k < 3; k++)
			if (pval[k] > 0)
				json_object_set_new(sec, pname[k], json_real(pval[k]));
		ok = mat && sec && json_array_append_new(mats, mat) == 0 &&
		     json_array_append_new(secs, sec) == 0;
		json_t *o =
		    json_pack("{s:I, s:s, s:[I, I], s:s, s:s}", "id", (json_int_t)f->elem_id[e],
			      "type", el->type == ENGI_FRAME_TRUSS ? "truss" : "beam", "nodes",
			      (json_int_t)f->node_id[el->node[0]],
			      (json_int_t)f->node_id[el->node[1]], "material", id, "section", id);
		if (o && (el->release[0] || el->release[1]))
			json_object_set_new(o, "releases",
					    json_pack("{s:o, s:o}", "start",
						      dof_list(el->release[0]), "end",
						      dof_list(el->release[1])));
		if (o && (el->zref[0] || el->zref[1] || el->zref[2]))
			json_object_set_new(o, "zref", vec3(el->zref));
		ok = ok && o && json_array_append_new(elems, o) == 0;
	}
	for (size_t c = 0; ok && c < f->ncases; c++) {
		json_t *nodal = json_array(), *member = json_array();
		for (size_t i = 0; nodal && i < f->nnodal; i++) {
			const struct engi_frame_nodal_load *l = &f->nodal[i];
			if (l->lcase == c)
				json_array_append_new(
				    nodal, json_pack("{s:I, s:o, s:o}", "node",
						     (json_int_t)f->node_id[l->node], "F",
						     vec3(l->f), "M", vec3(l->f + 3)));
		}
		for (size_t i = 0; member && i < f->nmember; i++) {
			const struct engi_frame_member_load *l = &f->member[i];
			if (l->lcase == c)
				json_array_append_new(member,
						      json_pack("{s:I, s:o, s:s}", "element",
								(json_int_t)f->elem_id[l->elem],
								"w", vec3(l->w), "axes",
								l->local ? "local" : "global"));
		}
		ok =
		    nodal && member &&
		    json_array_append_new(cases, json_pack("{s:s, s:o, s:o}", "id", s->case_name[c],
							   "nodal", nodal, "member", member)) == 0;
	}
	for (size_t k = 0; ok && k < f->ncombos; k++) {
		json_t *fac = json_object();
		for (size_t c = 0; fac && c < f->ncases; c++)
			if (f->combo[k * f->ncases + c] != 0)
				json_object_set_new(fac, s->case_name[c],
						    json_real(f->combo[k * f->ncases + c]));
		ok = fac &&
		     json_array_append_new(combos, json_pack("{s:s, s:o}", "id", s->combo_name[k],
							     "factors", fac)) == 0;
	}
	if (ok) {
		json_object_set(root, "materials", mats);
		json_object_set(root, "sections", secs);
		json_object_set(root, "nodes", nodes);
		json_object_set(root, "elements", elems);
		json_object_set(root, "supports", sups);
		json_object_set(root, "load_cases", cases);
		if (f->ncombos)
			json_object_set(root, "combinations", combos);
	}
	char *out =
	    ok ? json_dumps(root, JSON_PRESERVE_ORDER | JSON_INDENT(1) | JSON_REAL_PRECISION(17))
	       : NULL;
	json_decref(mats);
	json_decref(secs);
	json_decref(nodes);
	json_decref(elems);
	json_decref(sups);
	json_decref(cases);
	json_decref(combos);
	json_decref(root);
	if (!out)
		RAISE(err, ENGI_ENOMEM, "out of memory writing the model as structural/1");
	*text = out;
	return 0;
}
