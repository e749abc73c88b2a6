/*
 * Verifier kind "fe_solid": the delivered CalculiX deck is read and
 * re-solved by the solid kernel (tasks/SCHEMA-structural.md), and the
 * task's criteria judge both the engineering assignments in the deck and the
 * re-solved response:
 *
 *   young, poisson        every element's value (the one furthest from the
 *                         expected value is measured)
 *   load_as_force         no face pressure, and some concentrated load
 *   supports_on_plane     the fully restrained nodes are exactly the nodes
 *                         on the plane {"axis": "x", "value": 0}, and
 *                         nothing else is restrained
 *   load_sum, reaction_sum  {"component": "x"|"y"|"z"} of the re-solve
 *   max_u                 largest displacement magnitude of the re-solve
 *   mises_at              von Mises stress of the element whose centroid is
 *                         nearest to "point"
 *   own_results           |max |u| in the agent's .dat or ASCII .frd
 *                         ("results") - re-solve| / re-solve: the agent's
 *                         own answer agrees
 *   own_mises_at          |agent's von Mises - re-solve's| / re-solve's at
 *                         "point", from the agent's "results": a .dat
 *                         (*EL PRINT S): the integration-point stresses of
 *                         the element whose centroid is nearest, averaged
 *                         as the re-solve averages them (like for like); an
 *                         ASCII .frd (*NODE FILE or *EL FILE S): the nodal
 *                         stress at the nearest node, against the mean of
 *                         the re-solve's element stresses around that node
 *                         (CalculiX extrapolates to the nodes, so the two
 *                         differ by the stress gradient over an element)
 *
 * A deck that does not read or solve makes every criterion unavailable
 * (required ones then fail) with the reader's message.
 */
#include "engi/verify.h"

#include "engi/alloc.h"
#include "engi/fe.h"

#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const check_names[] = {
    "young", "poisson",	 "load_as_force", "supports_on_plane", "load_sum", "reaction_sum",
    "max_u", "mises_at", "own_results",	  "own_mises_at",      NULL};
enum {
	C_YOUNG,
	C_POISSON,
	C_FORCE,
	C_SUPPORTS,
	C_LOAD,
	C_REACTION,
	C_MAXU,
	C_MISES,
	C_OWN,
	C_OWN_MISES
};
static const char *const axis_names[] = {"x", "y", "z", NULL};

struct fe_criterion {
	struct engi_criterion c;
	int check, axis;
	double plane, point[3];
	char results[PATH_MAX];
};

struct fe_criteria {
	size_t n;
	struct fe_criterion v[];
};

/* Plane tolerance, relative to the model's bounding-box diagonal. */
#define FE_PLANE_TOL_REL 1e-6

static void fe_free(void *c)
{
	engi_free(c);
}

static int fe_parse(json_t *ver, const char *file, const char *dir, const char *pointer,
		    void **criteria, struct engi_error *err)
{
	static const char *const keys[] = {"kind", "file", "criteria", "objective", "reward", NULL};
	static const char *const item_keys[] = {
	    "name",  "check",	"component", "axis", "plane", "point",	  "results", "equals",
	    "value", "tol_rel", "tol_abs",   "min",  "max",   "required", "stage",   NULL};
	*criteria = NULL;
	TRY(engi_json_only_keys(ver, keys, file, pointer, err));
	json_t *arr;
	TRY(engi_criteria_array(ver, file, pointer, &arr, err));
	size_t n = json_array_size(arr);
	struct fe_criteria *cc = engi_calloc(1, sizeof(*cc) + n * sizeof(struct fe_criterion));
	if (!cc)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", file);
	cc->n = n;
	int rc = 0;
	char base[ENGI_POINTER_MAX];
	engi_json_pointer(base, sizeof(base), pointer, "criteria");
	for (size_t i = 0; i < n && rc == 0; i++) {
		json_t *item = json_array_get(arr, i);
		struct fe_criterion *c = &cc->v[i];
		char ptr[ENGI_POINTER_MAX], p[ENGI_POINTER_MAX];
		engi_json_pointer_index(ptr, sizeof(ptr), base, i);
		rc = engi_json_only_keys(item, item_keys, file, ptr, err);
		if (rc == 0)
			rc = engi_json_choice(item, "check", check_names, "check", 1, file, ptr,
					      &c->check, err);
		if (rc < 0)
			break;
		int boolean = c->check == C_FORCE || c->check == C_SUPPORTS;
		rc = engi_criterion_parse(item, file, ptr, check_names[c->check],
					  boolean ? 0 : ENGI_CMP_VALUE | ENGI_CMP_RANGE,
					  c->check <= C_SUPPORTS ? "assignment" : "response", &c->c,
					  err);
		for (size_t j = 0; j < i && rc == 0; j++)
			if (!strcmp(cc->v[j].c.name, c->c.name)) {
				engi_json_pointer(p, sizeof(p), ptr, "name");
				rc = engi_parse_error(err, file, p, "'%s' is already used",
						      c->c.name);
			}
		if (rc < 0)
			break;
		if (c->check == C_LOAD || c->check == C_REACTION)
			rc = engi_json_choice(item, "component", axis_names, "component", 1, file,
					      ptr, &c->axis, err);
		if (c->check == C_SUPPORTS) {
			json_t *pl = json_object_get(item, "plane");
			engi_json_pointer(p, sizeof(p), ptr, "plane");
			int present = 0;
			if (!json_is_object(pl))
				rc = engi_parse_error(err, file, p,
						      "expected {\"axis\": \"x\", \"value\": 0}");
			if (rc == 0)
				rc = engi_json_choice(pl, "axis", axis_names, "axis", 1, file, p,
						      &c->axis, err);
			if (rc == 0)
				rc = engi_json_number(pl, "value", file, p, &present, &c->plane,
						      err);
			if (rc == 0 && !present)
				rc = engi_parse_error(err, file, p, "needs a value");
		}
		if (c->check == C_MISES || c->check == C_OWN_MISES) {
			json_t *pt = json_object_get(item, "point");
			engi_json_pointer(p, sizeof(p), ptr, "point");
			if (!json_is_array(pt) || json_array_size(pt) != 3)
				rc = engi_parse_error(err, file, p, "expected [x, y, z]");
			for (size_t k = 0; rc == 0 && k < 3; k++) {
				json_t *x = json_array_get(pt, k);
				if (!json_is_number(x) || !isfinite(json_number_value(x)))
					rc = engi_parse_error(err, file, p, "expected [x, y, z]");
				else
					c->point[k] = json_number_value(x);
			}
		}
		if (c->check == C_OWN || c->check == C_OWN_MISES) {
			json_t *r = json_object_get(item, "results");
			engi_json_pointer(p, sizeof(p), ptr, "results");
			const char *s = json_is_string(r) ? json_string_value(r) : NULL;
			if (!s || !*s || s[0] == '/' || strstr(s, "..") || strlen(s) >= PATH_MAX)
				rc = engi_parse_error(
				    err, file, p,
				    "expected the agent's .dat or .frd file, relative to "
				    "the deliverables");
			else
				memcpy(c->results, s, strlen(s) + 1);
		}
	}
	if (rc < 0) {
		fe_free(cc);
		return rc;
	}
	*criteria = cc;
	return 0;
}

/* The element value furthest from what the criterion expects. */
static double worst_of(const struct engi_criterion *c, const double *v, size_t n)
{
	double want = engi_criterion_expected(c), worst = v[0];
	for (size_t i = 1; i < n; i++)
		if (fabs(v[i] - want) > fabs(worst - want) || isnan(want))
			worst = isnan(want) ? fmax(worst, v[i]) : v[i];
	if (isnan(want) && n) /* bounds only: report whichever breaks one, else the max */
		for (size_t i = 0; i < n; i++)
			if (!engi_criterion_holds(c, v[i]))
				return v[i];
	return worst;
}

/* The element whose centroid is nearest to p; *dist its distance. */
static size_t nearest_elem(const struct engi_fe_solid *m, const double p[3], double *dist)
{
	size_t best = 0;
	double bd = INFINITY;
	for (size_t e = 0; e < m->nelems; e++) {
		double cen[3] = {0};
		size_t n = m->off[e + 1] - m->off[e];
		for (size_t q = m->off[e]; q < m->off[e + 1]; q++)
			for (int d = 0; d < 3; d++)
				cen[d] += m->xyz[3 * (size_t)m->conn[q] + (size_t)d] / (double)n;
		double dd = 0;
		for (int d = 0; d < 3; d++)
			dd += (cen[d] - p[d]) * (cen[d] - p[d]);
		if (dd < bd) {
			bd = dd;
			best = e;
		}
	}
	*dist = sqrt(bd);
	return best;
}

static double von_mises(const double s[6])
{
	double a = s[0] - s[1], b = s[1] - s[2], c = s[2] - s[0];
	return sqrt(0.5 * (a * a + b * b + c * c) + 3 * (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]));
}

/* The agent's stresses of element id (a .dat), averaged over its distinct
 * integration points; the count in *nip (0: none printed). */
static void own_elem_stress(const struct engi_ccx_stress *st, int64_t id, double s[6], int *nip)
{
	uint64_t seen[16] = {0}; /* integration points 1..1000 */
	*nip = 0;
	memset(s, 0, 6 * sizeof(double));
	for (size_t i = 0; i < st->n; i++) {
		const struct engi_ccx_stress_rec *q = &st->rec[i];
		if (q->id != id || q->ip < 1 || q->ip > 1000)
			continue;
		unsigned b = (unsigned)(q->ip - 1);
		if (b < 1024 && (seen[b / 64] >> (b % 64)) & 1)
			continue;
		if (b < 1024)
			seen[b / 64] |= (uint64_t)1 << (b % 64);
		for (int k = 0; k < 6; k++)
			s[k] += q->s[k];
		(*nip)++;
	}
	for (int k = 0; *nip && k < 6; k++)
		s[k] /= *nip;
}

/* The node nearest to p among those an element uses, and the re-solve's
 * stress there as CalculiX writes nodal stresses: each element's value
 * extrapolated to the node, averaged over the elements around it. Returns
 * the node index, or -1 when an element's stress cannot be taken. */
static int64_t nearest_node_stress(const struct engi_fe_solid *m, const double *u,
				   const double p[3], double *dist, double s[6])
{
	int64_t best = -1;
	double bd = INFINITY;
	for (size_t q = 0; q < m->off[m->nelems]; q++) {
		size_t i = m->conn[q];
		double dd = 0;
		for (int d = 0; d < 3; d++)
			dd +=
			    (m->xyz[3 * i + (size_t)d] - p[d]) * (m->xyz[3 * i + (size_t)d] - p[d]);
		if (dd < bd) {
			bd = dd;
			best = (int64_t)i;
		}
	}
	*dist = sqrt(bd);
	memset(s, 0, 6 * sizeof(double));
	size_t cnt = 0;
	for (size_t e = 0; e < m->nelems; e++)
		for (size_t q = m->off[e]; q < m->off[e + 1]; q++) {
			if ((int64_t)m->conn[q] != best)
				continue;
			double se[6];
			if (engi_fe_solid_stress_node(m, u, e, (int)(q - m->off[e]), se) < 0)
				return -1;
			for (int k = 0; k < 6; k++)
				s[k] += se[k];
			cnt++;
		}
	for (int k = 0; cnt && k < 6; k++)
		s[k] /= (double)cnt;
	return best;
}

static int judge_own_mises(const struct fe_criterion *c, const struct engi_fe_solid *m,
			   const struct engi_fe_solid_result *r, const struct engi_verify_ctx *ctx,
			   struct engi_verdict *v, struct engi_error *err)
{
	const struct engi_criterion *k = &c->c;
	char path[PATH_MAX * 2], note[ENGI_DETAIL_MAX];
	struct engi_error e;
	struct engi_ccx_stress st;
	engi_error_init(&e);
	engi_ccx_stress_init(&st);
	snprintf(path, sizeof(path), "%s/%s", ctx->artifact_dir, c->results);
	size_t pl = strlen(c->results);
	int frd = pl > 4 && !strcmp(c->results + pl - 4, ".frd");
	int rc = frd ? engi_ccx_frd_stress(path, &st, &e) : engi_ccx_dat_stress(path, &st, &e);
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0)
		return engi_criterion_report(k, ENGI_FAIL, NAN, v, err, "%s", e.msg);
	double own[6], ours[6], dist;
	int have = 0;
	if (frd) {
		int64_t node = nearest_node_stress(m, r->u, c->point, &dist, ours);
		int64_t id = node < 0 ? 0 : m->node_id[node];
		for (size_t i = 0; node >= 0 && i < st.n && !have; i++)
			if (st.rec[i].id == id) {
				memcpy(own, st.rec[i].s, sizeof(own));
				have = 1;
			}
		snprintf(note, sizeof(note), "node %lld, %.3g from the point", (long long)id, dist);
	} else {
		size_t el = nearest_elem(m, c->point, &dist);
		int nip;
		own_elem_stress(&st, m->elem_id[el], own, &nip);
		have = nip > 0 && engi_fe_solid_stress(m, r->u, el, ours, NULL) == 0;
		snprintf(note, sizeof(note),
			 "element %lld (%d integration points), centroid %.3g "
			 "from the point",
			 (long long)m->elem_id[el], nip, dist);
	}
	engi_ccx_stress_release(&st);
	if (!have)
		return engi_criterion_report(k, ENGI_FAIL, NAN, v, err, "'%s' has no stress for %s",
					     c->results, note);
	double vo = von_mises(own), vr = von_mises(ours);
	double rel = vr > 0 ? fabs(vo - vr) / vr : fabs(vo);
	char detail[ENGI_DETAIL_MAX];
	snprintf(detail, sizeof(detail), "agent's von Mises %.7g, re-solve %.7g at %s", vo, vr,
		 note);
	return engi_criterion_judge(k, "relative difference", rel, detail, v, err);
}

static int judge(const struct fe_criterion *c, const struct engi_fe_solid *m,
		 const struct engi_fe_solid_result *r, const struct engi_verify_ctx *ctx,
		 struct engi_verdict *v, struct engi_error *err)
{
	const struct engi_criterion *k = &c->c;
	char note[ENGI_DETAIL_MAX];
	switch (c->check) {
	case C_YOUNG:
		return engi_criterion_judge(k, "E", worst_of(k, m->young, m->nelems), NULL, v, err);
	case C_POISSON:
		return engi_criterion_judge(k, "nu", worst_of(k, m->poisson, m->nelems), NULL, v,
					    err);
	case C_FORCE: {
		double f = 0;
		for (size_t i = 0; i < 3 * m->nnodes; i++)
			f += fabs(m->force[i]);
		int ok = m->npress == 0 && f > 0;
		return engi_criterion_report(k, ok ? ENGI_PASS : ENGI_FAIL, (double)m->npress, v,
					     err, "%zu face pressures, concentrated loads %s",
					     m->npress, f > 0 ? "present" : "absent");
	}
	case C_SUPPORTS: {
		double lo[3] = {INFINITY, INFINITY, INFINITY},
		       hi[3] = {-INFINITY, -INFINITY, -INFINITY};
		for (size_t i = 0; i < m->nnodes; i++)
			for (int d = 0; d < 3; d++) {
				lo[d] = fmin(lo[d], m->xyz[3 * i + (size_t)d]);
				hi[d] = fmax(hi[d], m->xyz[3 * i + (size_t)d]);
			}
		double diag =
		    sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
			 (hi[2] - lo[2]) * (hi[2] - lo[2]));
		double tol = FE_PLANE_TOL_REL * (diag > 0 ? diag : 1);
		unsigned char *mask = engi_calloc(m->nnodes + 1, 1);
		if (!mask)
			RAISE(err, ENGI_ENOMEM, "out of memory");
		for (size_t i = 0; i < m->nbc; i++)
			mask[m->bc[i].node] |= (unsigned char)(1u << m->bc[i].dof);
		size_t missing = 0, extra = 0;
		for (size_t i = 0; i < m->nnodes; i++) {
			int on = fabs(m->xyz[3 * i + (size_t)c->axis] - c->plane) <= tol;
			if (on && mask[i] != 7)
				missing++;
			if (!on && mask[i])
				extra++;
		}
		engi_free(mask);
		return engi_criterion_report(
		    k, !missing && !extra ? ENGI_PASS : ENGI_FAIL, (double)(missing + extra), v,
		    err,
		    "%zu nodes on %s = %g not fully restrained, %zu restrained "
		    "elsewhere",
		    missing, axis_names[c->axis], c->plane, extra);
	}
	case C_LOAD:
		snprintf(note, sizeof(note), "applied load %s", axis_names[c->axis]);
		return engi_criterion_judge(k, note, r->load_sum[c->axis], NULL, v, err);
	case C_REACTION:
		snprintf(note, sizeof(note), "reaction %s", axis_names[c->axis]);
		return engi_criterion_judge(k, note, r->reaction_sum[c->axis], NULL, v, err);
	case C_MAXU:
		snprintf(note, sizeof(note), "at node %lld", (long long)r->max_u_node);
		return engi_criterion_judge(k, "max |u|", r->max_u, note, v, err);
	case C_MISES: {
		double bd;
		size_t best = nearest_elem(m, c->point, &bd);
		double s[6], vm = NAN;
		engi_fe_solid_stress(m, r->u, best, s, &vm);
		snprintf(note, sizeof(note), "element %lld, centroid %.3g from the point",
			 (long long)m->elem_id[best], bd);
		return engi_criterion_judge(k, "von Mises", vm, note, v, err);
	}
	case C_OWN_MISES:
		return judge_own_mises(c, m, r, ctx, v, err);
	case C_OWN: {
		char path[PATH_MAX * 2];
		struct engi_error e;
		engi_error_init(&e);
		snprintf(path, sizeof(path), "%s/%s", ctx->artifact_dir, c->results);
		double dat_u;
		size_t nfound;
		size_t pl = strlen(c->results);
		int frd = pl > 4 && !strcmp(c->results + pl - 4, ".frd");
		int rc = frd ? engi_ccx_frd_max_u(path, &dat_u, &nfound, &e)
			     : engi_ccx_dat_max_u(path, &dat_u, &nfound, &e);
		if (rc == ENGI_ENOMEM)
			RAISE(err, rc, "%s", e.msg);
		if (rc < 0)
			return engi_criterion_report(k, ENGI_FAIL, NAN, v, err, "%s", e.msg);
		double rel = r->max_u > 0 ? fabs(dat_u - r->max_u) / r->max_u : fabs(dat_u);
		snprintf(note, sizeof(note), "agent's max |u| %.7g, re-solve %.7g", dat_u,
			 r->max_u);
		return engi_criterion_judge(k, "relative difference", rel, note, v, err);
	}
	}
	return 0;
}

static int fe_verify(const void *criteria, const char *target, const struct engi_verify_ctx *ctx,
		     struct engi_verdict *v, struct engi_error *err)
{
	const struct fe_criteria *cc = criteria;
	char path[PATH_MAX * 2];
	struct engi_error e;
	struct engi_fe_solid m;
	struct engi_fe_solid_result r;
	engi_error_init(&e);
	engi_fe_solid_init(&m);
	engi_fe_solid_result_init(&r);
	snprintf(path, sizeof(path), "%s/%s", ctx->artifact_dir, target);
	int rc = engi_inp_read(path, &m, &e);
	int read_ok = rc == 0;
	if (rc == 0)
		rc = engi_fe_solid_solve(&m, NULL, &r, &e);
	if (rc == ENGI_ENOMEM) {
		engi_fe_solid_release(&m);
		RAISE(err, rc, "%s", e.msg);
	}
	int solve_rc = rc;
	rc = 0;
	for (size_t i = 0; i < cc->n && rc == 0; i++) {
		const struct fe_criterion *c = &cc->v[i];
		/* assignments need only the deck; responses need the solve */
		int needs_solve = c->check > C_SUPPORTS;
		if (!read_ok || (needs_solve && solve_rc < 0))
			rc = engi_criterion_report(&c->c, ENGI_UNAVAILABLE, NAN, v, err, "%s",
						   e.msg);
		else
			rc = judge(c, &m, &r, ctx, v, err);
	}
	if (rc == 0 && solve_rc == 0) {
		rc = engi_verdict_metric(v, "max_u", r.max_u);
		if (rc == 0)
			rc = engi_verdict_metric(v, "solve_s", r.total_s);
	}
	engi_fe_solid_result_release(&r);
	engi_fe_solid_release(&m);
	return rc;
}

static size_t fe_names(const void *criteria, const char **out, size_t cap)
{
	const struct fe_criteria *fc = criteria;
	return engi_criteria_names(&fc->v[0].c, sizeof(fc->v[0]), fc->n, out, cap);
}

const struct engi_verifier_kind engi_verifier_fe_solid = {
    .name = "fe_solid",
    .summary = "CalculiX deck re-solved: assignments, response, the agent's own results",
    .version = 1,
    .parse = fe_parse,
    .verify = fe_verify,
    .free_criteria = fe_free,
    .names = fe_names,
};
