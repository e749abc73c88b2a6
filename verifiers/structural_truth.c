/*
 * Frozen truth of a structural model: conversion from a solve, the JSON
 * file `engisweep truth` writes and the verifier reads, and the comparison
 * of a candidate's results with it through a model match.
 */
#include "engi/structural.h"

#include "engi/alloc.h"
#include "engi/error.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define TRUTH_FORMAT "structural-truth/1"

void engi_structural_truth_init(struct engi_structural_truth *t)
{
	memset(t, 0, sizeof(*t));
}

void engi_structural_truth_release(struct engi_structural_truth *t)
{
	engi_free(t->node_id);
	engi_free(t->elem_id);
	engi_free(t->state_name);
	engi_free(t->u);
	engi_free(t->reaction);
	engi_free(t->end_force);
	engi_structural_truth_init(t);
}

static int truth_alloc(struct engi_structural_truth *t, size_t nn, size_t ne, size_t ns)
{
	t->nnodes = nn;
	t->nelems = ne;
	t->nstates = ns;
	t->node_id = engi_calloc(nn + 1, sizeof(int64_t));
	t->elem_id = engi_calloc(ne + 1, sizeof(int64_t));
	t->state_name = engi_calloc(ns + 1, sizeof(*t->state_name));
	t->u = engi_calloc(6 * nn * ns + 1, sizeof(double));
	t->reaction = engi_calloc(6 * nn * ns + 1, sizeof(double));
	t->end_force = engi_calloc(12 * ne * ns + 1, sizeof(double));
	return t->node_id && t->elem_id && t->state_name && t->u && t->reaction && t->end_force
		   ? 0
		   : ENGI_ENOMEM;
}

/* Local end forces of element e to global axes (12 values). */
static void end_force_global(const struct engi_frame *f, size_t e, const double *loc, double *g)
{
	double R[3][3], L;
	engi_frame_axes(f, e, R, &L);
	for (int I = 0; I < 4; I++)
		for (int a = 0; a < 3; a++)
			g[3 * I + a] = R[0][a] * loc[3 * I] + R[1][a] * loc[3 * I + 1] +
				       R[2][a] * loc[3 * I + 2];
}

int engi_structural_truth_from(const struct engi_structural *s, const struct engi_frame_result *r,
			       struct engi_structural_truth *t, struct engi_error *err)
{
	const struct engi_frame *f = &s->f;
	engi_structural_truth_release(t);
	if (truth_alloc(t, f->nnodes, f->nelems, r->nstates) < 0) {
		engi_structural_truth_release(t);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	memcpy(t->node_id, f->node_id, f->nnodes * sizeof(int64_t));
	memcpy(t->elem_id, f->elem_id, f->nelems * sizeof(int64_t));
	for (size_t k = 0; k < r->nstates; k++) {
		snprintf(t->state_name[k], ENGI_STRUCT_NAME_MAX, "%s",
			 k < f->ncases ? s->case_name[k] : s->combo_name[k - f->ncases]);
		memcpy(t->u + 6 * f->nnodes * k, r->state[k].u, 6 * f->nnodes * sizeof(double));
		memcpy(t->reaction + 6 * f->nnodes * k, r->state[k].reaction,
		       6 * f->nnodes * sizeof(double));
		for (size_t e = 0; e < f->nelems; e++)
			end_force_global(f, e, r->state[k].end_force + 12 * e,
					 t->end_force + 12 * (f->nelems * k + e));
		t->equilibrium_rel = fmax(t->equilibrium_rel, r->state[k].equilibrium_rel);
	}
	return 0;
}

static json_t *num_array(const double *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_real(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *id_array(const int64_t *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_integer((json_int_t)v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

int engi_structural_truth_write(const char *path, const struct engi_structural_truth *t,
				const char *model_name, struct engi_error *err)
{
	json_t *root = json_object(), *states = json_array();
	int bad = !root || !states;
	bad |= json_object_set_new(root, "format", json_string(TRUTH_FORMAT)) < 0;
	bad |= json_object_set_new(root, "model", json_string(model_name)) < 0;
	bad |= json_object_set_new(root, "agreement_rel", json_real(t->agreement_rel)) < 0;
	bad |= json_object_set_new(root, "equilibrium_rel", json_real(t->equilibrium_rel)) < 0;
	bad |= json_object_set_new(root, "node_ids", id_array(t->node_id, t->nnodes)) < 0;
	bad |= json_object_set_new(root, "element_ids", id_array(t->elem_id, t->nelems)) < 0;
	for (size_t k = 0; !bad && k < t->nstates; k++) {
		json_t *s = json_object();
		bad |= !s;
		bad |= json_object_set_new(s, "name", json_string(t->state_name[k])) < 0;
		bad |= json_object_set_new(s, "u",
					   num_array(t->u + 6 * t->nnodes * k, 6 * t->nnodes)) < 0;
		bad |= json_object_set_new(
			   s, "reaction",
			   num_array(t->reaction + 6 * t->nnodes * k, 6 * t->nnodes)) < 0;
		bad |= json_object_set_new(
			   s, "end_force",
			   num_array(t->end_force + 12 * t->nelems * k, 12 * t->nelems)) < 0;
		bad |= json_array_append_new(states, s) < 0;
	}
	bad |= json_object_set(root, "states", states) < 0;
	json_decref(states);
	if (bad) {
		json_decref(root);
		RAISE(err, ENGI_ENOMEM, "cannot build truth '%s': out of memory", path);
	}
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int rc = json_dump_file(root, tmp, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(root);
	if (rc != 0 || rename(tmp, path) != 0) {
		remove(tmp);
		RAISE(err, ENGI_EIO, "cannot write truth '%s'", path);
	}
	return 0;
}

static int read_nums(json_t *a, double *out, size_t n)
{
	if (!json_is_array(a) || json_array_size(a) != n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(a, i);
		if (!json_is_number(x))
			return -1;
		out[i] = json_number_value(x);
	}
	return 0;
}

int engi_structural_truth_read(const char *path, struct engi_structural_truth *t,
			       struct engi_error *err)
{
	json_error_t je;
	engi_structural_truth_release(t);
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		RAISE(err, ENGI_EPARSE, "cannot read truth '%s': %d:%d: %s", path, je.line,
		      je.column, je.text);
	json_t *fmt = json_object_get(root, "format"), *nid = json_object_get(root, "node_ids"),
	       *eid = json_object_get(root, "element_ids"), *st = json_object_get(root, "states");
	int rc = 0;
	if (!json_is_string(fmt) || strcmp(json_string_value(fmt), TRUTH_FORMAT) != 0 ||
	    !json_is_array(nid) || !json_is_array(eid) || !json_is_array(st)) {
		rc = engi_raise(err, ENGI_EPARSE, "truth '%s' is not %s", path, TRUTH_FORMAT);
		goto out;
	}
	size_t nn = json_array_size(nid), ne = json_array_size(eid), ns = json_array_size(st);
	if (truth_alloc(t, nn, ne, ns) < 0) {
		rc = engi_raise(err, ENGI_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nn; i++)
		t->node_id[i] = json_integer_value(json_array_get(nid, i));
	for (size_t i = 0; i < ne; i++)
		t->elem_id[i] = json_integer_value(json_array_get(eid, i));
	for (size_t k = 0; k < ns; k++) {
		json_t *s = json_array_get(st, k), *nm = json_object_get(s, "name");
		if (!json_is_string(nm) ||
		    read_nums(json_object_get(s, "u"), t->u + 6 * nn * k, 6 * nn) < 0 ||
		    read_nums(json_object_get(s, "reaction"), t->reaction + 6 * nn * k, 6 * nn) <
			0 ||
		    read_nums(json_object_get(s, "end_force"), t->end_force + 12 * ne * k,
			      12 * ne) < 0) {
			rc = engi_raise(err, ENGI_EPARSE, "truth '%s': /states/%zu is malformed",
					path, k);
			goto out;
		}
		snprintf(t->state_name[k], ENGI_STRUCT_NAME_MAX, "%s", json_string_value(nm));
	}
	t->agreement_rel = json_number_value(json_object_get(root, "agreement_rel"));
	t->equilibrium_rel = json_number_value(json_object_get(root, "equilibrium_rel"));
out:
	json_decref(root);
	if (rc < 0)
		engi_structural_truth_release(t);
	return rc;
}

static double ratio(double truth, double got, double tol_rel, double tol_abs)
{
	return fabs(truth - got) / fmax(tol_abs, tol_rel * fabs(truth));
}

int engi_structural_compare(const struct engi_structural_truth *truth,
			    const struct engi_structural *cand, const struct engi_frame_result *cr,
			    const struct engi_match *m, double tol_rel, double tol_abs,
			    struct engi_structural_cmp *out, struct engi_error *err)
{
	const struct engi_frame *cf = &cand->f;
	memset(out, 0, sizeof(*out));
	if (truth->nnodes != m->ref_nodes || truth->nelems != m->ref_elems)
		RAISE(err, ENGI_EINVALID, "the truth does not belong to the reference model");
	for (size_t k = 0; k < truth->nstates; k++) {
		/* the candidate's state the match paired with it (cases by name,
		 * else by position; combinations by name or by their factors),
		 * else the one of the same name */
		long cs = -1;
		if (truth->nstates == m->ref_cases + m->ref_combos && m->case_map && m->combo_map &&
		    m->cand_cases == cf->ncases) {
			if (k < m->ref_cases)
				cs = m->case_map[k];
			else if (m->combo_map[k - m->ref_cases] >= 0)
				cs = (long)cf->ncases + m->combo_map[k - m->ref_cases];
		}
		for (size_t j = 0; cs < 0 && j < cr->nstates; j++) {
			const char *nm =
			    j < cf->ncases ? cand->case_name[j] : cand->combo_name[j - cf->ncases];
			if (!strcmp(nm, truth->state_name[k]))
				cs = (long)j;
		}
		if (cs >= (long)cr->nstates)
			cs = -1;
		if (cs < 0) {
			out->u_ratio = out->reaction_ratio = out->force_ratio = INFINITY;
			snprintf(out->where, sizeof(out->where), "no results for '%s'",
				 truth->state_name[k]);
			return 0;
		}
		const struct engi_frame_state *s = &cr->state[cs];
		for (size_t i = 0; i < truth->nnodes; i++) {
			long c = m->node_map[i];
			if (c < 0)
				continue;
			for (int d = 0; d < 6; d++) {
				size_t ti = 6 * (truth->nnodes * k + i) + (size_t)d,
				       ci = 6 * (size_t)c + (size_t)d;
				double ru = ratio(truth->u[ti], s->u[ci], tol_rel, tol_abs);
				double rr =
				    ratio(truth->reaction[ti], s->reaction[ci], tol_rel, tol_abs);
				if (ru > out->u_ratio) {
					out->u_ratio = ru;
					snprintf(
					    out->where, sizeof(out->where),
					    "%s: displacement %d of node %lld: %.6g, expected %.6g",
					    truth->state_name[k], d + 1,
					    (long long)truth->node_id[i], s->u[ci], truth->u[ti]);
				}
				out->reaction_ratio = fmax(out->reaction_ratio, rr);
				out->compared++;
			}
		}
		for (size_t e = 0; e < truth->nelems; e++) {
			long c = m->elem_map[e];
			if (c < 0)
				continue;
			double g[12];
			end_force_global(cf, (size_t)c, s->end_force + 12 * (size_t)c, g);
			int flip = m->elem_flip[e];
			for (int d = 0; d < 12; d++) {
				/* a reversed member: its second end is the reference's first */
				double got = g[flip ? (d + 6) % 12 : d];
				double want =
				    truth->end_force[12 * (truth->nelems * k + e) + (size_t)d];
				out->force_ratio =
				    fmax(out->force_ratio, ratio(want, got, tol_rel, tol_abs));
			}
		}
	}
	return 0;
}
