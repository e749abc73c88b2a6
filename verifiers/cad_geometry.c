/*
 * Geometry similarity of a delivered mesh to a reference mesh; the terms,
 * weights and gates are described in engi/cad_geometry.h.
 */
#include "engi/cad_geometry.h"

#include "engi/alloc.h"
#include "engi/mesh.h"
#include "engi/meshio.h"
#include "engi/pointcloud.h"
#include "engi/verify.h"

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
#define CAD_ICP_POINTS_MAX 20000

int engi_cad_parse_task_path(json_t *ver, const char *key, int required, const char *file,
			     const char *pointer, char *out, size_t cap, struct engi_error *err)
{
	char p[ENGI_POINTER_MAX];
	out[0] = '\0';
	engi_json_pointer(p, sizeof(p), pointer, key);
	json_t *ref = json_object_get(ver, key);
	if (!ref)
		return required ? engi_parse_error(err, file, p, "missing required field") : 0;
	if (!json_is_string(ref) || !json_string_length(ref))
		return engi_parse_error(err, file, p, "expected a path, found %s",
					engi_json_kind(ref));
	const char *rs = json_string_value(ref);
	if (rs[0] == '/' || strstr(rs, "..") || strlen(rs) >= cap)
		return engi_parse_error(err, file, p,
					"must be a relative path inside the task folder");
	snprintf(out, cap, "%s", rs);
	return 0;
}

int engi_cad_path(char *out, const char *dir, const char *rel)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, rel);
	return n < 0 || n >= PATH_MAX ? -1 : 0;
}

int engi_cad_parse_reference(json_t *ver, int required, const char *file, const char *pointer,
			     char *out, size_t cap, struct engi_error *err)
{
	return engi_cad_parse_task_path(ver, "reference", required, file, pointer, out, cap, err);
}

struct shape {
	struct engi_mesh m;
	struct engi_mesh_report r;
	struct engi_mesh_patches p; /* the faces it was tessellated from */
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
	TRY(engi_mesh_read(path, &s->m, CAD_MAX_TRIS, CAD_MAX_TRIS, err));
	TRY(engi_mesh_weld(&s->m, CAD_WELD_TOL, err));
	TRY(engi_mesh_analyze(&s->m, &s->r, err));
	TRY(engi_mesh_patches(&s->m, ENGI_MESH_PATCH_ANGLE, &s->p, err));
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

/* |a - b| over the larger: neither count is the measure of the other */
static double count_err(size_t a, size_t b)
{
	size_t hi = a > b ? a : b, lo = a > b ? b : a;
	return hi ? (double)(hi - lo) / (double)hi : 0;
}

/* Mean face-centre distance after ICP, relative to the reference's diagonal. */
static int icp_distance(const struct shape *a, const struct shape *ref, double *dist_rel,
			struct engi_error *err)
{
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
	*dist_rel = diag > 0 ? cd.chamfer / 2 / diag : INFINITY;
	return 0;
}

static int measure(const struct shape *a, const struct shape *ref, struct engi_cad_similarity *s,
		   struct engi_error *err)
{
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
	s->e_faces = count_err(a->p.patches, ref->p.patches);
	s->e_verts = count_err(a->p.corners, ref->p.corners);
	s->obb_ok = s->e_obb < ENGI_CAD_OBB_GATE;
	s->counts_ok = s->e_faces <= ENGI_CAD_COUNT_GATE && s->e_verts <= ENGI_CAD_COUNT_GATE;
	s->s_volume = log_credit(s->e_volume, CAD_VOL_FULL, CAD_VOL_ZERO);
	s->s_area = log_credit(s->e_area, CAD_TERM_FULL, CAD_TERM_ZERO);
	s->s_moments = log_credit(s->e_moments, CAD_TERM_FULL, CAD_TERM_ZERO);
	TRY(icp_distance(a, ref, &s->icp_dist_rel, err));
	s->q_icp = log_credit(s->icp_dist_rel, CAD_TERM_FULL, CAD_TERM_ZERO);
	double wsum = CAD_W_VOLUME + CAD_W_AREA + CAD_W_MOMENTS;
	double g =
	    (CAD_W_VOLUME * s->s_volume + CAD_W_AREA * s->s_area + CAD_W_MOMENTS * s->s_moments) /
	    wsum;
	s->score = s->obb_ok && s->counts_ok ? g * (0.5 + 0.5 * s->q_icp) : 0;
	return 0;
}

int engi_cad_parse_method(json_t *ver, const char *file, const char *pointer, int *method,
			  struct engi_error *err)
{
	static const char *const names[] = {"mesh", "pcb-v2", NULL};
	*method = ENGI_CAD_MESH;
	if (!json_object_get(ver, "geometry"))
		return 0;
	return engi_json_choice(ver, "geometry", names, "geometry scoring", 1, file, pointer,
				method, err);
}

int engi_cad_similarity_run(const struct engi_verify_ctx *ctx, const char *target,
			    const char *reference, int method, struct engi_cad_similarity *s,
			    struct engi_error *err)
{
	if (method == ENGI_CAD_PCB_V2)
		return engi_cad_pcb_run(ctx, target, reference, NULL, s, err);
	char path[PATH_MAX], rpath[PATH_MAX];
	struct engi_error e;
	engi_error_init(&e);
	memset(s, 0, sizeof(*s));
	struct shape a, ref;
	memset(&a, 0, sizeof(a));
	memset(&ref, 0, sizeof(ref));
	engi_mesh_init(&a.m);
	engi_mesh_init(&ref.m);
	int rc = 0;
	if (engi_cad_path(path, ctx->artifact_dir, target) < 0 ||
	    engi_cad_path(rpath, ctx->task_dir, reference) < 0)
		rc = engi_raise(&e, ENGI_EINVALID, "path too long");
	int ref_rc = rc == 0 ? shape_load(rpath, &ref, &e) : rc;
	if (ref_rc == 0)
		rc = shape_load(path, &a, &e);
	if (ref_rc == 0 && rc == 0)
		rc = measure(&a, &ref, s, &e);
	shape_release(&a);
	shape_release(&ref);
	if (rc == ENGI_ENOMEM || ref_rc == ENGI_ENOMEM)
		RAISE(err, ENGI_ENOMEM, "%s", e.msg);
	s->status = ref_rc < 0 ? ENGI_CAD_NO_REFERENCE
		    : rc < 0   ? ENGI_CAD_BAD_DELIVERY
			       : ENGI_CAD_MEASURED;
	if (s->status != ENGI_CAD_MEASURED)
		snprintf(s->why, sizeof(s->why), "%s%s",
			 s->status == ENGI_CAD_NO_REFERENCE ? "reference: " : "", e.msg);
	return 0;
}

struct cad_metric {
	const char *name;
	double value;
};

int engi_cad_similarity_record(const struct engi_cad_similarity *s, struct engi_verdict *v,
			       struct engi_error *err)
{
	const struct cad_metric mesh[] = {
	    {"geometry_similarity", s->score},
	    {"volume_rel_err", s->e_volume},
	    {"area_rel_err", s->e_area},
	    {"moments_rel_err", s->e_moments},
	    {"obb_extent_rel_err", s->e_obb},
	    {"icp_distance_rel", s->icp_dist_rel},
	    {"q_icp", s->q_icp},
	};
	const struct cad_metric pcb[] = {
	    {"geometry_similarity", s->score},	 {"volume_rel_err", s->e_volume},
	    {"area_rel_err", s->e_area},	 {"moments_rel_err", s->e_moments},
	    {"obb_extent_rel_err", s->e_obb},	 {"surface_types_rel_err", s->e_surface},
	    {"face_count_rel_diff", s->e_faces}, {"vertex_count_rel_diff", s->e_verts},
	    {"property_score", s->property},	 {"q_icp", s->q_icp},
	    {"icp_max_residual", s->icp_d_max},
	};
	/* the spec side, when the task gives one and it was measured */
	const struct cad_metric spec[] = {
	    {"spec_consistency", s->spec_score},
	    {"spec_consistent", (double)s->spec_consistent},
	    {"spec_inconsistent", (double)s->spec_inconsistent},
	    {"spec_not_found", (double)s->spec_not_found},
	    {"pcb_score", s->combined},
	};
	int p = s->method == ENGI_CAD_PCB_V2;
	/* past a gate pcb-v2 runs no ICP: its two metrics (last) are left out,
	 * as is a box error no box gave */
	size_t all = p ? sizeof(pcb) / sizeof(pcb[0]) - (s->gate[0] ? 2 : 0)
		       : sizeof(mesh) / sizeof(mesh[0]);
	size_t n = s->status == ENGI_CAD_MEASURED	? all
		   : s->status == ENGI_CAD_BAD_DELIVERY ? 1
							: 0;
	const struct cad_metric *m = p ? pcb : mesh;
	for (size_t i = 0; i < n; i++) {
		if (p && isnan(m[i].value))
			continue;
		int rc = engi_verdict_metric(v, m[i].name, m[i].value);
		if (rc < 0)
			RAISE(err, rc, "cannot record metric '%s': %s", m[i].name,
			      engi_strerror(rc));
	}
	size_t ns = s->spec_state == ENGI_CAD_SPEC_MEASURED ? sizeof(spec) / sizeof(*spec) : 0;
	for (size_t i = 0; i < ns; i++) {
		int rc = engi_verdict_metric(v, spec[i].name, spec[i].value);
		if (rc < 0)
			RAISE(err, rc, "cannot record metric '%s': %s", spec[i].name,
			      engi_strerror(rc));
	}
	return 0;
}
