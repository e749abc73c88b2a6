/*
 * cad_pcb.c - geometry scoring "pcb-v2": the Parametric CAD Bench
 * validator's v2 geometry score (freecad-validator 0.6.0), on the B-rep
 * kernel's measurements of two FreeCAD documents (tasks/SCHEMA-cad.md
 * lists every term, gate and constant; docs/verifiers.md its fidelity).
 *
 * In order, each gate scoring 0: the document gates of the reference (a
 * reference that fails them is the benchmark's fault: unavailable, not a
 * score) then of the candidate (exactly one PartDesign Body with a solid,
 * its shape one solid, its Tip set and agreeing with it, no shape-bearing
 * feature outside the allow-list); more than 5,000 candidate faces; face
 * and vertex counts differing by more than half the larger; the sorted
 * OCCT oriented-box sizes differing by 10 % or more. Otherwise
 *   property = (0.05 surface types + 0.175 volume + 0.175 area
 *               + 0.10 principal moments) / 0.5
 *   geometry = property (0.5 + 0.5 ICP)
 * with logarithmic credits (volume 0.1 %..1 %, the others 1 %..10 %) of
 * symmetric relative errors and ICP the face-centre reward (face_icp.c).
 */
#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/cad_geometry.h"
#include "engi/mesh.h"
#include "engi/pcb_spec.h"
#include "engi/pointcloud.h"
#include "engi/verify.h"

#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define W_SURFACE 0.05
#define W_VOLUME  0.175
#define W_AREA	  0.175
#define W_MOMENTS 0.10
#define W_ICP	  0.50

#define VOL_FULL	   1e-3
#define VOL_ZERO	   1e-2
#define TERM_FULL	   1e-2
#define TERM_ZERO	   1e-1
#define SURFACE_FLOOR_FRAC 1e-2
#define BBOX_GATE	   0.10
#define COUNT_GATE	   0.5
#define READ_TIMEOUT_S	   600.0

double engi_pcb_rel(double a, double b, double floor)
{
	double d = fmax(fmax(fabs(a), fabs(b)), fmax(floor, 1e-9));
	return fabs(a - b) / d;
}

double engi_pcb_tier(double e, double m, double f)
{
	if (!(e == e))
		return 0;
	if (e <= m)
		return 1;
	if (e >= f)
		return 0;
	return 1 - log10(e / m) / log10(f / m);
}

double engi_pcb_combine(double g, double s)
{
	if (!(g > 0) || !(s > 0))
		return 0;
	return 2 * g * s / (g + s);
}

static double clamp01(double x)
{
	return x > 1 ? 1 : x > 0 ? x : 0;
}

/* Principal moments of inertia over V^(5/3), clamped at 0, ascending. */
static int moments(const struct engi_brep_props *p, double out[3])
{
	/* the symmetric part, as the validator takes it; -1 when the solve
	 * fails (non-finite entries) */
	double a[9], ev[3];
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			a[3 * i + j] = (p->inertia[i][j] + p->inertia[j][i]) / 2;
	double v53 = pow(fabs(p->volume), 5.0 / 3);
	int ok = engi_sym3_eigenvalues(a, ev) == 0;
	for (int i = 0; i < 3; i++)
		out[i] = ok && v53 > 0 ? fmax(ev[i], 0) / v53 : 0;
	return ok ? 0 : -1;
}

/* The document gates: "" into why when r passes, else what failed. */
static void doc_gates(const struct engi_brep_report *r, char *gate, size_t gn, char *why, size_t wn)
{
	gate[0] = why[0] = '\0';
	if (!r->is_doc) {
		snprintf(gate, gn, "body");
		snprintf(why, wn, "not a FreeCAD document: no PartDesign Body to score");
		return;
	}
	if (r->nonempty != 1 || r->measured < 0) {
		snprintf(gate, gn, "body");
		snprintf(why, wn,
			 "%zu PartDesign Bodies with a solid (of %zu): exactly one is scored",
			 r->nonempty, r->nbodies);
		return;
	}
	const struct engi_brep_body *b = &r->body[r->measured];
	if (b->solids != 1) {
		snprintf(gate, gn, "body");
		snprintf(why, wn, "Body '%s' holds %zu solids, not one", b->name, b->solids);
		return;
	}
	if (!b->tip[0] || !b->tip_agrees) {
		snprintf(gate, gn, "feature_tree");
		snprintf(why, wn,
			 b->tip[0] ? "Body '%s': its shape is not its Tip's ('%s'): geometry not "
				     "built by its features"
				   : "Body '%s' has no Tip%s",
			 b->name, b->tip);
		return;
	}
	for (size_t i = 0; i < r->nfeatures; i++)
		if (r->feature[i].cls == ENGI_FC_OUTSIDE) {
			snprintf(gate, gn, "feature_tree");
			snprintf(why, wn,
				 "builds its solid from non-PartDesign geometry: '%s' (%s) is "
				 "outside the native features",
				 r->feature[i].name, r->feature[i].type);
			return;
		}
}

static void zero(struct engi_cad_similarity *s, const char *gate, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void zero(struct engi_cad_similarity *s, const char *gate, const char *fmt, ...)
{
	s->score = 0;
	snprintf(s->gate, sizeof(s->gate), "%s", gate);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->gate_why, sizeof(s->gate_why), fmt, ap);
	va_end(ap);
}

/* Face centres and areas of a report, engi_malloc'd. */
static int centres(const struct engi_brep_props *p, double **xyz, double **w,
		   struct engi_error *err)
{
	*xyz = engi_malloc((p->faces ? p->faces : 1) * 3 * sizeof(double));
	*w = engi_malloc((p->faces ? p->faces : 1) * sizeof(double));
	if (!*xyz || !*w)
		RAISE(err, ENGI_ENOMEM, "out of memory for %zu face centres", p->faces);
	for (size_t i = 0; i < p->faces; i++) {
		memcpy(*xyz + 3 * i, p->face[i].centroid, 3 * sizeof(double));
		(*w)[i] = p->face[i].area;
	}
	return 0;
}

/* The score of cand against ref, both measured and past the reference's
 * gates. */
static int score(const struct engi_brep_report *cand, const struct engi_brep_report *ref,
		 struct engi_cad_similarity *s, struct engi_error *err)
{
	const struct engi_brep_props *c = &cand->props, *r = &ref->props;
	s->faces[0] = c->faces;
	s->faces[1] = r->faces;
	s->vertices[0] = c->vertices;
	s->vertices[1] = r->vertices;
	/* every term first, for the record; then the gates in the
	 * validator's order, the first that fails zeroing the score */
	s->e_faces = engi_pcb_rel((double)c->faces, (double)r->faces, 0);
	s->e_verts = engi_pcb_rel((double)c->vertices, (double)r->vertices, 0);
	s->e_volume = engi_pcb_rel(c->volume, r->volume, 1e-9);
	s->e_area = engi_pcb_rel(c->area, r->area, 1e-9);
	double mc[3], mr[3];
	int moments_ok = moments(c, mc) == 0 && moments(r, mr) == 0;
	s->e_moments = 0;
	s->e_obb = c->obb_ok && r->obb_ok ? 0 : NAN;
	for (int i = 0; i < 3; i++) {
		s->e_moments = moments_ok ? fmax(s->e_moments, engi_pcb_rel(mr[i], mc[i], 1e-9))
					  : INFINITY; /* no moments: no credit */
		if (c->obb_ok && r->obb_ok)
			s->e_obb =
			    fmax(s->e_obb, engi_pcb_rel(r->obb_sorted[i], c->obb_sorted[i], 1e-9));
	}
	double tc = 0, tr = 0;
	for (int t = 0; t < ENGI_SURF_COUNT; t++) {
		tc += c->area_by_type[t];
		tr += r->area_by_type[t];
	}
	double floor = SURFACE_FLOOR_FRAC * fmax(tc, tr);
	s->e_surface = 0;
	for (int t = 0; t < ENGI_SURF_COUNT; t++)
		s->e_surface =
		    fmax(s->e_surface, engi_pcb_rel(r->area_by_type[t], c->area_by_type[t], floor));
	s->s_surface = engi_pcb_tier(s->e_surface, TERM_FULL, TERM_ZERO);
	s->s_volume = engi_pcb_tier(s->e_volume, VOL_FULL, VOL_ZERO);
	s->s_area = engi_pcb_tier(s->e_area, TERM_FULL, TERM_ZERO);
	s->s_moments = engi_pcb_tier(s->e_moments, TERM_FULL, TERM_ZERO);
	s->property = clamp01((W_SURFACE * s->s_surface + W_VOLUME * s->s_volume +
			       W_AREA * s->s_area + W_MOMENTS * s->s_moments) /
			      (W_SURFACE + W_VOLUME + W_AREA + W_MOMENTS));
	s->q_icp = s->icp_d_max = s->icp_rmse = NAN; /* not run past a gate */

	char gate[16], why[256];
	doc_gates(cand, gate, sizeof(gate), why, sizeof(why));
	s->doc_ok = !gate[0];
	/* each gate's verdict, for the criteria, whichever fires first */
	int simple = c->faces <= ENGI_PCB_MAX_FACES;
	int faces_ok = !(s->e_faces > COUNT_GATE), verts_ok = !(s->e_verts > COUNT_GATE);
	s->counts_ok = simple && faces_ok && verts_ok;
	s->obb_ok = s->e_obb < BBOX_GATE;
	if (gate[0]) {
		zero(s, gate, "%s", why);
		return 0;
	}
	if (!simple) {
		zero(s, "complexity", "%zu faces, over the %d the validator scores", c->faces,
		     ENGI_PCB_MAX_FACES);
		return 0;
	}
	if (!faces_ok || !verts_ok) {
		zero(s, !faces_ok ? "face_count" : "vertex_count",
		     "%s %zu against the reference's %zu", !faces_ok ? "faces" : "vertices",
		     !faces_ok ? c->faces : c->vertices, !faces_ok ? r->faces : r->vertices);
		return 0;
	}
	if (!c->obb_ok || !r->obb_ok) {
		/* the validator stops with an error here; a box that cannot be
		 * made of the agent's solid scores it nothing */
		zero(s, "bbox", "no oriented box of the %s", c->obb_ok ? "reference" : "candidate");
		return 0;
	}
	if (!s->obb_ok) {
		zero(s, "bbox", "oriented-box sizes off by %.4g %% (gate: under %.0f %%)",
		     100 * s->e_obb, 100 * BBOX_GATE);
		return 0;
	}
	double *pc = NULL, *wc = NULL, *pr = NULL, *wr = NULL;
	int rc = centres(c, &pc, &wc, err);
	if (rc == 0)
		rc = centres(r, &pr, &wr, err);
	struct engi_face_icp icp;
	struct engi_error e;
	engi_error_init(&e);
	if (rc == 0)
		rc = engi_face_icp(pc, wc, c->faces, pr, wr, r->faces, &icp, &e);
	engi_free(pc);
	engi_free(wc);
	engi_free(pr);
	engi_free(wr);
	if (rc == ENGI_ENOMEM && !e.msg[0])
		return rc; /* centres() said so in err */
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0) {
		zero(s, "icp", "the face centres could not be aligned: %s", e.msg);
		return 0;
	}
	s->q_icp = clamp01(icp.reward);
	s->icp_d_max = icp.vacuous ? 0 : icp.d_max;
	s->icp_rmse = icp.rmse;
	s->score = clamp01(s->property * ((1 - W_ICP) + W_ICP * s->q_icp));
	return 0;
}

/* The kernel itself failed, not the file: OpenCASCADE crashed or looped
 * past its limit, its program cannot run, or memory ran out. Never a
 * verdict on the agent's file: the verifier fails (an infrastructure
 * failure of the episode, naming the kernel and the signal). */
static int kernel_failed(int rc)
{
	return rc == ENGI_ENOMEM || rc == ENGI_EBUG || rc == ENGI_ETIMEOUT || rc == ENGI_EENV;
}

/* The task's spec.json read into *ps; a spec that does not read is the
 * benchmark's fault: the spec side unavailable (s->spec_why), 0 returned. */
static int read_spec(const struct engi_verify_ctx *ctx, const char *spec, struct engi_pcb_spec *ps,
		     struct engi_cad_similarity *s, struct engi_error *err)
{
	char path[PATH_MAX];
	s->spec_state = ENGI_CAD_SPEC_UNAVAILABLE;
	if (engi_cad_path(path, ctx->task_dir, spec) < 0) {
		snprintf(s->spec_why, sizeof(s->spec_why), "spec: path too long");
		return 0;
	}
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_pcb_spec_file(path, spec, ps, &e);
	if (rc == ENGI_ENOMEM)
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0) {
		snprintf(s->spec_why, sizeof(s->spec_why), "%s", e.msg);
		return 0;
	}
	s->spec_state = ENGI_CAD_SPEC_NONE; /* read: measured once the delivery is */
	return 1;
}

/* The delivery's spec consistency and its harmonic mean with the geometry
 * score (engi_pcb_combine), as the validator's v2 combines them. */
static int spec_side(const struct engi_pcb_spec *ps, const char *path,
		     const struct engi_brep_report *cand, struct engi_cad_similarity *s,
		     struct engi_error *err)
{
	struct engi_pcb_bank bank;
	int found;
	TRY(engi_pcb_bank_of(cand, path, &bank, &found, err));
	struct engi_pcb_spec_result res;
	int rc = engi_pcb_spec_check(ps, found ? &bank : NULL, &res, err);
	if (found)
		engi_pcb_bank_release(&bank);
	TRY(rc);
	if (res.n == 0) {
		/* the validator scores every delivery 0 on such a spec: the
		 * benchmark's file is at fault, not the agent */
		s->spec_state = ENGI_CAD_SPEC_UNAVAILABLE;
		snprintf(s->spec_why, sizeof(s->spec_why),
			 "the spec yields no parameter the validator can check (it scores every "
			 "delivery 0 on it)");
		engi_pcb_spec_result_release(&res);
		return 0;
	}
	if (res.raises) {
		s->spec_state = ENGI_CAD_SPEC_UNAVAILABLE;
		snprintf(s->spec_why, sizeof(s->spec_why),
			 "the validator 0.6.0 raises on this spec (TypeError): %s", res.raises);
		engi_pcb_spec_result_release(&res);
		return 0;
	}
	s->spec_state = ENGI_CAD_SPEC_MEASURED;
	s->spec_consistent = res.consistent;
	s->spec_inconsistent = res.inconsistent;
	s->spec_not_found = res.not_found;
	s->spec_score =
	    engi_pcb_spec_score(res.n, res.inconsistent + res.not_found, ENGI_PCB_SPEC_BUDGET);
	s->combined = engi_pcb_combine(s->score, s->spec_score);
	/* the failures, as many as fit */
	size_t used = 0;
	s->spec_why[0] = '\0';
	for (size_t i = 0; i < res.n; i++) {
		const struct engi_pcb_finding *f = &res.f[i];
		if (f->state == ENGI_PCB_CONSISTENT)
			continue;
		char one[200];
		if (f->state == ENGI_PCB_NOT_FOUND)
			snprintf(one, sizeof(one), "%s not found (%s)", f->param->key, f->reason);
		else if (f->has_measured)
			snprintf(one, sizeof(one), "%s off by %.3g %% (closest %.6g, %s check)",
				 f->param->key, 100 * f->rel, f->measured[0],
				 engi_pcb_check_name(f->check));
		else
			snprintf(one, sizeof(one), "%s not a whole count", f->param->key);
		int w = snprintf(s->spec_why + used, sizeof(s->spec_why) - used, "%s%s",
				 used ? "; " : "", one);
		if (w < 0 || (size_t)w >= sizeof(s->spec_why) - used) {
			s->spec_why[used] = '\0';
			break;
		}
		used += (size_t)w;
	}
	engi_pcb_spec_result_release(&res);
	return 0;
}

int engi_cad_pcb_run(const struct engi_verify_ctx *ctx, const char *target, const char *reference,
		     const char *spec, struct engi_cad_similarity *s, struct engi_error *err)
{
	memset(s, 0, sizeof(*s));
	s->method = ENGI_CAD_PCB_V2;
	char path[PATH_MAX], rpath[PATH_MAX];
	if (engi_cad_path(path, ctx->artifact_dir, target) < 0 ||
	    engi_cad_path(rpath, ctx->task_dir, reference) < 0) {
		s->status = ENGI_CAD_BAD_DELIVERY;
		snprintf(s->why, sizeof(s->why), "path too long");
		return 0;
	}
	struct engi_brep_opts o = {.flags = ENGI_BREP_OBB_CAPPED, .timeout_s = READ_TIMEOUT_S};
	struct engi_brep_report ref, cand;
	struct engi_error e;
	engi_error_init(&e);
	/* the task's reference is read again by every episode: its report is
	 * kept (by content); the agent's file never is */
	char cache[PATH_MAX];
	struct engi_brep_opts ro = o;
	ro.cache_dir = engi_brep_cache_dir(cache, sizeof(cache));
	int rc = engi_brep_analyze(rpath, &ro, &ref, &e);
	if (kernel_failed(rc))
		RAISE(err, rc, "%s", e.msg);
	if (rc < 0) {
		s->status = ENGI_CAD_NO_REFERENCE;
		snprintf(s->why, sizeof(s->why), "reference: %s", e.msg);
		return 0;
	}
	char gate[16], why[256];
	doc_gates(&ref, gate, sizeof(gate), why, sizeof(why));
	if (gate[0]) {
		/* the benchmark's own reference fails the validator's gate */
		s->status = ENGI_CAD_NO_REFERENCE;
		snprintf(s->why, sizeof(s->why), "reference: fails the %s gate: %s", gate, why);
		engi_brep_report_release(&ref);
		return 0;
	}
	rc = engi_brep_analyze(path, &o, &cand, &e);
	if (kernel_failed(rc)) {
		engi_brep_report_release(&ref);
		RAISE(err, rc, "%s", e.msg);
	}
	if (rc < 0) {
		s->status = ENGI_CAD_BAD_DELIVERY;
		snprintf(s->why, sizeof(s->why), "%s", e.msg);
		engi_brep_report_release(&ref);
		return 0;
	}
	s->status = ENGI_CAD_MEASURED;
	rc = score(&cand, &ref, s, err);
	struct engi_pcb_spec ps = {0};
	if (rc == 0 && spec && (rc = read_spec(ctx, spec, &ps, s, err)) > 0) {
		rc = spec_side(&ps, path, &cand, s, err);
		engi_pcb_spec_release(&ps);
	}
	engi_brep_report_release(&ref);
	engi_brep_report_release(&cand);
	return rc;
}
