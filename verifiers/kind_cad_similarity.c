/*
 * Verifier kind "cad_similarity": geometry similarity of a delivered mesh to
 * the task's held-back reference mesh (DESIGN.md, parametric CAD scoring).
 *
 *   "verifier": {"kind": "cad_similarity", "file": "part.stl",
 *                "reference": "part/reference/part.stl",
 *                "criteria": [{"name": "geometry", "check": "similarity", "min": 0.5},
 *                             {"name": "extents", "check": "obb_extent_gate"},
 *                             {"name": "counts", "check": "count_gate"}]}
 *
 * Terms: volume (full credit at <= 0.1 % relative error, none at 1 %), area
 * and normalised principal moments (I / V^(5/3); 1 % and 10 %), with
 * logarithmic interpolation; weights 0.175, 0.175, 0.10, summed and
 * normalised by their total (triangle meshes carry no surface types, whose
 * weight 0.05 drops out), times 0.5 + 0.5 q_ICP, where q_ICP rates the mean
 * distance between the face centres after ICP (point-to-point, PCA starts)
 * relative to the reference's bounding-box diagonal (1 % and 10 %). Gates,
 * which zero the similarity when they fail: the oriented-box extents within
 * 10 %, the face and vertex counts within 50 % of the reference's. The
 * metric "geometry_similarity" carries the result for continuous rewards.
 */
#include "engi/mesh.h"
#include "engi/meshio.h"
#include "engi/pointcloud.h"
#include "engi/verify.h"

#include "engi/alloc.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CAD_MAX_TRIS	   ((size_t)20 * 1000 * 1000)
#define CAD_WELD_TOL	   1e-6
#define CAD_W_VOLUME	   0.175
#define CAD_W_AREA	   0.175
#define CAD_W_MOMENTS	   0.10
#define CAD_VOL_FULL	   0.001
#define CAD_VOL_ZERO	   0.01
#define CAD_TERM_FULL	   0.01
#define CAD_TERM_ZERO	   0.10
#define CAD_OBB_GATE	   0.10
#define CAD_COUNT_GATE	   0.50
#define CAD_ICP_POINTS_MAX 20000
#define POINTER_MAX	   ENGI_POINTER_MAX

enum cad_check { CHECK_SIMILARITY, CHECK_OBB_GATE, CHECK_COUNT_GATE };
static const char *const check_names[] = {"similarity", "obb_extent_gate", "count_gate", NULL};

struct cad_criterion {
	struct engi_criterion c;
	int check;
};

struct cad_criteria {
	char reference[PATH_MAX];
	size_t n;
	struct cad_criterion v[];
};

static void cad_free(void *criteria)
{
	engi_free(criteria);
}

static int cad_parse(json_t *ver, const char *file, const char *pointer, void **criteria,
		     struct engi_error *err)
{
	static const char *const keys[] = {"kind",	"file",	  "reference", "criteria",
					   "objective", "reward", NULL};
	static const char *const item_keys[] = {"name", "check", "value",    "tol_rel", "tol_abs",
						"min",	"max",	 "required", "stage",	NULL};
	char p[POINTER_MAX];
	*criteria = NULL;
	TRY(engi_json_only_keys(ver, keys, file, pointer, err));
	engi_json_pointer(p, sizeof(p), pointer, "reference");
	json_t *ref = json_object_get(ver, "reference");
	if (!ref)
		return engi_parse_error(err, file, p, "missing required field");
	if (!json_is_string(ref) || !json_string_length(ref))
		return engi_parse_error(err, file, p, "expected a path, found %s",
					engi_json_kind(ref));
	const char *rs = json_string_value(ref);
	if (rs[0] == '/' || strstr(rs, "..") || strlen(rs) >= PATH_MAX)
		return engi_parse_error(err, file, p,
					"must be a relative path inside the task folder");
	json_t *arr;
	TRY(engi_criteria_array(ver, file, pointer, &arr, err));
	size_t n = json_array_size(arr);
	struct cad_criteria *cc = engi_calloc(1, sizeof(*cc) + n * sizeof(struct cad_criterion));
	if (!cc)
		RAISE(err, ENGI_ENOMEM, "%s: out of memory", file);
	snprintf(cc->reference, sizeof(cc->reference), "%s", rs);
	cc->n = n;
	char base[POINTER_MAX];
	engi_json_pointer(base, sizeof(base), pointer, "criteria");
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char ptr[POINTER_MAX], what[64];
		engi_json_pointer_index(ptr, sizeof(ptr), base, i);
		json_t *item = json_array_get(arr, i);
		struct cad_criterion *c = &cc->v[i];
		rc = engi_json_only_keys(item, item_keys, file, ptr, err);
		if (rc == 0)
			rc = engi_json_choice(item, "check", check_names, "check", 1, file, ptr,
					      &c->check, err);
		if (rc < 0)
			break;
		snprintf(what, sizeof(what), "check '%s'", check_names[c->check]);
		rc = engi_criterion_parse(item, file, ptr, what,
					  c->check == CHECK_SIMILARITY
					      ? (ENGI_CMP_VALUE | ENGI_CMP_RANGE)
					      : ENGI_CMP_NONE,
					  "geometry", &c->c, err);
		for (size_t j = 0; j < i && rc == 0; j++)
			if (!strcmp(cc->v[j].c.name, c->c.name)) {
				engi_json_pointer(p, sizeof(p), ptr, "name");
				rc = engi_parse_error(err, file, p, "'%s' is already %s/%zu",
						      c->c.name, base, j);
			}
	}
	if (rc < 0) {
		cad_free(cc);
		return rc;
	}
	*criteria = cc;
	return 0;
}

struct shape {
	struct engi_mesh m;
	struct engi_mesh_report r;
	struct engi_obb o;
	double *centres; /* face centres, at most CAD_ICP_POINTS_MAX */
	size_t ncentres;
};

static void shape_release(struct shape *s)
{
	engi_mesh_release(&s->m);
	engi_free(s->centres);
}

static int shape_load(const char *path, struct shape *s, struct engi_error *err)
{
	memset(s, 0, sizeof(*s));
	engi_mesh_init(&s->m);
	TRY(engi_mesh_read(path, &s->m, CAD_MAX_TRIS, CAD_MAX_TRIS, err));
	TRY(engi_mesh_weld(&s->m, CAD_WELD_TOL, err));
	TRY(engi_mesh_analyze(&s->m, &s->r, err));
	TRY(engi_mesh_obb(&s->m, &s->o, err));
	size_t nf = s->m.ntris, step = nf / CAD_ICP_POINTS_MAX + 1;
	s->centres = engi_malloc((nf / step + 1) * 3 * sizeof(double));
	if (!s->centres)
		RAISE(err, ENGI_ENOMEM, "out of memory for face centres of '%s'", path);
	for (size_t f = 0; f < nf; f += step) {
		double *c = s->centres + 3 * s->ncentres++;
		for (int d = 0; d < 3; d++)
			c[d] = (s->m.xyz[3 * (size_t)s->m.tri[3 * f] + d] +
				s->m.xyz[3 * (size_t)s->m.tri[3 * f + 1] + d] +
				s->m.xyz[3 * (size_t)s->m.tri[3 * f + 2] + d]) /
			       3;
	}
	return 0;
}

/* 1 at or below full, 0 at or above zero, logarithmic in between. */
static double log_credit(double e, double full, double zero)
{
	if (!(e == e))
		return 0;
	if (e <= full)
		return 1;
	if (e >= zero)
		return 0;
	return log(zero / e) / log(zero / full);
}

static double rel_err(double a, double ref)
{
	return ref != 0 ? fabs(a - ref) / fabs(ref) : (a == 0 ? 0 : INFINITY);
}

struct similarity {
	double score, s_volume, s_area, s_moments, q_icp, icp_dist_rel;
	double e_volume, e_area, e_moments, e_obb, e_faces, e_verts;
	int obb_ok, counts_ok;
};

static int measure(const struct shape *a, const struct shape *ref, struct similarity *s,
		   struct engi_error *err)
{
	memset(s, 0, sizeof(*s));
	s->e_volume = rel_err(a->r.volume, ref->r.volume);
	s->e_area = rel_err(a->r.area, ref->r.area);
	double va = pow(fabs(a->r.volume), 5.0 / 3), vr = pow(fabs(ref->r.volume), 5.0 / 3);
	for (int i = 0; i < 3; i++) {
		double e = rel_err(va > 0 ? a->r.principal[i] / va : 0,
				   vr > 0 ? ref->r.principal[i] / vr : 0);
		s->e_moments = e > s->e_moments ? e : s->e_moments;
		double eo = rel_err(a->o.half[i], ref->o.half[i]);
		s->e_obb = eo > s->e_obb ? eo : s->e_obb;
	}
	s->e_faces = rel_err((double)a->r.ntris, (double)ref->r.ntris);
	s->e_verts = rel_err((double)a->r.nverts, (double)ref->r.nverts);
	s->obb_ok = s->e_obb < CAD_OBB_GATE;
	s->counts_ok = s->e_faces <= CAD_COUNT_GATE && s->e_verts <= CAD_COUNT_GATE;
	s->s_volume = log_credit(s->e_volume, CAD_VOL_FULL, CAD_VOL_ZERO);
	s->s_area = log_credit(s->e_area, CAD_TERM_FULL, CAD_TERM_ZERO);
	s->s_moments = log_credit(s->e_moments, CAD_TERM_FULL, CAD_TERM_ZERO);

	struct engi_icp_options o;
	engi_icp_options_default(&o);
	o.method = ENGI_ICP_POINT_TO_POINT;
	o.init_pca = 1;
	struct engi_icp_report ir;
	TRY(engi_icp(a->centres, a->ncentres, ref->centres, ref->ncentres, &o, &ir, err));
	double *moved = engi_malloc(a->ncentres * 3 * sizeof(double));
	if (!moved)
		RAISE(err, ENGI_ENOMEM, "out of memory aligning face centres");
	for (size_t i = 0; i < a->ncentres; i++)
		for (int d = 0; d < 3; d++) {
			const double *p = a->centres + 3 * i;
			moved[3 * i + d] = ir.transform[4 * d] * p[0] +
					   ir.transform[4 * d + 1] * p[1] +
					   ir.transform[4 * d + 2] * p[2] + ir.transform[4 * d + 3];
		}
	struct engi_cloud_distance cd;
	int rc = engi_cloud_distance(moved, a->ncentres, ref->centres, ref->ncentres, &cd, err);
	engi_free(moved);
	TRY(rc);
	double diag = 0;
	for (int d = 0; d < 3; d++)
		diag += (ref->r.bbox_max[d] - ref->r.bbox_min[d]) *
			(ref->r.bbox_max[d] - ref->r.bbox_min[d]);
	diag = sqrt(diag);
	s->icp_dist_rel = diag > 0 ? cd.chamfer / 2 / diag : INFINITY;
	s->q_icp = log_credit(s->icp_dist_rel, CAD_TERM_FULL, CAD_TERM_ZERO);
	double wsum = CAD_W_VOLUME + CAD_W_AREA + CAD_W_MOMENTS;
	double g =
	    (CAD_W_VOLUME * s->s_volume + CAD_W_AREA * s->s_area + CAD_W_MOMENTS * s->s_moments) /
	    wsum;
	s->score = s->obb_ok && s->counts_ok ? g * (0.5 + 0.5 * s->q_icp) : 0;
	return 0;
}

static int record(const struct similarity *s, struct engi_verdict *v, struct engi_error *err)
{
	const struct {
		const char *name;
		double value;
	} m[] = {
	    {"geometry_similarity", s->score},
	    {"volume_rel_err", s->e_volume},
	    {"area_rel_err", s->e_area},
	    {"moments_rel_err", s->e_moments},
	    {"obb_extent_rel_err", s->e_obb},
	    {"icp_distance_rel", s->icp_dist_rel},
	    {"q_icp", s->q_icp},
	};
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		int rc = engi_verdict_metric(v, m[i].name, m[i].value);
		if (rc < 0)
			RAISE(err, rc, "cannot record metric '%s': %s", m[i].name,
			      engi_strerror(rc));
	}
	return 0;
}

static int cad_verify(const void *criteria, const char *target, const struct engi_verify_ctx *ctx,
		      struct engi_verdict *v, struct engi_error *err)
{
	const struct cad_criteria *cc = criteria;
	char path[PATH_MAX], rpath[PATH_MAX];
	struct engi_error e;
	engi_error_init(&e);
	struct shape a, ref;
	memset(&a, 0, sizeof(a));
	memset(&ref, 0, sizeof(ref));
	int rc = 0;
	int n1 = snprintf(path, sizeof(path), "%s/%s", ctx->artifact_dir, target);
	int n2 = snprintf(rpath, sizeof(rpath), "%s/%s", ctx->task_dir, cc->reference);
	if (n1 < 0 || (size_t)n1 >= sizeof(path) || n2 < 0 || (size_t)n2 >= sizeof(rpath))
		rc = engi_raise(&e, ENGI_EINVALID, "path too long");
	int ref_rc = rc == 0 ? shape_load(rpath, &ref, &e) : rc;
	if (ref_rc == 0)
		rc = shape_load(path, &a, &e);
	struct similarity s;
	if (ref_rc == 0 && rc == 0)
		rc = measure(&a, &ref, &s, &e);
	shape_release(&a);
	shape_release(&ref);
	if (rc == ENGI_ENOMEM || ref_rc == ENGI_ENOMEM)
		RAISE(err, ENGI_ENOMEM, "%s", e.msg);
	if (ref_rc < 0 || rc < 0) {
		/* a broken reference is ours to fix: unavailable; a broken
		 * delivery fails */
		int st = ref_rc < 0 ? ENGI_UNAVAILABLE : ENGI_FAIL;
		for (size_t i = 0; i < cc->n; i++)
			TRY(engi_criterion_report(&cc->v[i].c, st, NAN, v, err, "%s%s",
						  ref_rc < 0 ? "reference: " : "", e.msg));
		if (ref_rc == 0)
			TRY(engi_verdict_metric(v, "geometry_similarity", 0));
		return 0;
	}
	for (size_t i = 0; i < cc->n; i++) {
		const struct cad_criterion *c = &cc->v[i];
		if (c->check == CHECK_SIMILARITY) {
			char note[160];
			snprintf(note, sizeof(note),
				 "(volume %.3g, area %.3g, moments %.3g credit; ICP %.3g%s)",
				 s.s_volume, s.s_area, s.s_moments, s.q_icp,
				 s.obb_ok && s.counts_ok ? "" : "; a gate failed");
			TRY(engi_criterion_judge(&c->c, "geometry similarity", s.score, note, v,
						 err));
		} else if (c->check == CHECK_OBB_GATE) {
			TRY(engi_criterion_report(
			    &c->c, s.obb_ok ? ENGI_PASS : ENGI_FAIL, s.e_obb, v, err,
			    "oriented-box extents off by %.3g %% (gate: under "
			    "%.0f %%)",
			    100 * s.e_obb, 100 * CAD_OBB_GATE));
		} else {
			TRY(engi_criterion_report(
			    &c->c, s.counts_ok ? ENGI_PASS : ENGI_FAIL, s.e_faces, v, err,
			    "faces off by %.3g %%, vertices by %.3g %% (gate: at most %.0f %%)",
			    100 * s.e_faces, 100 * s.e_verts, 100 * CAD_COUNT_GATE));
		}
	}
	return record(&s, v, err);
}

const struct engi_verifier_kind engi_verifier_cad_similarity = {
    .name = "cad_similarity",
    .summary = "geometry similarity to a reference mesh (volume, area, moments, ICP, gates)",
    .parse = cad_parse,
    .verify = cad_verify,
    .free_criteria = cad_free,
};
