/*
 * cad_geometry.h - the parametric-CAD geometry similarity (tasks/SCHEMA-cad.md) shared
 * by the verifier kinds that score a delivered mesh against the task's
 * held-back reference: "cad_similarity" (the score and its gates as
 * criteria) and "param_spec" (the score beside specification consistency).
 *
 * Terms: volume (full credit at <= 0.1 % relative error, none at 1 %), area
 * and normalised principal moments (I / V^(5/3); 1 % and 10 %), with
 * logarithmic interpolation; weights 0.175, 0.175, 0.10, summed and
 * normalised by their total (triangle meshes carry no surface types, whose
 * weight 0.05 drops out), times 0.5 + 0.5 q_ICP, where q_ICP rates the mean
 * distance between the face centres after ICP (point-to-point, PCA starts)
 * relative to the reference's bounding-box diagonal (1 % and 10 %). Gates,
 * which zero the similarity when they fail: the oriented-box extents within
 * 10 %, the face and vertex counts within 50 % of the larger of the two.
 * Faces are the patches the mesh was tessellated from and vertices their
 * corners (engi_mesh_patches), not triangles: the same part tessellated
 * finer or coarser keeps its counts.
 *
 * engi_cad_similarity_run reads both meshes, measures and frees them; it
 * blocks for the reading and the ICP (seconds on large meshes). No state.
 */
#ifndef ENGI_CAD_GEOMETRY_H
#define ENGI_CAD_GEOMETRY_H

#include <stddef.h>

#include "engi/error.h"
#include "engi/brep.h"

typedef struct json_t json_t;
struct engi_verify_ctx;
struct engi_verdict;

#define ENGI_CAD_OBB_GATE   0.10
#define ENGI_CAD_COUNT_GATE 0.50

/* The geometry scorings a task declares ("geometry" in its verifier). */
enum engi_cad_method {
	ENGI_CAD_MESH = 0,   /* "mesh": the terms above, on triangle meshes */
	ENGI_CAD_PCB_V2 = 1, /* "pcb-v2": the Parametric CAD Bench validator's (cad_pcb.c) */
};
/* What "pcb-v2" follows, recorded with every verdict it gives. */
#define ENGI_PCB_SCORER	     "freecad-validator 0.6.0 v2"
#define ENGI_PCB_SPEC_BUDGET 10			     /* the spec failure budget of its v2 */
#define ENGI_PCB_MAX_FACES   ENGI_BREP_OBB_FACES_MAX /* a candidate with more scores 0 */

enum engi_cad_status {
	ENGI_CAD_MEASURED = 0,
	ENGI_CAD_NO_REFERENCE = 1, /* the reference cannot be read: ours to fix */
	ENGI_CAD_BAD_DELIVERY = 2, /* the delivery cannot be read or aligned */
};

struct engi_cad_similarity {
	int method;		      /* enum engi_cad_method */
	int status;		      /* enum engi_cad_status; the fields below when MEASURED */
	char why[ENGI_ERROR_MSG_MAX]; /* what went wrong otherwise */
	double score, s_volume, s_area, s_moments, q_icp, icp_dist_rel;
	double e_volume, e_area, e_moments, e_obb, e_faces, e_verts;
	int obb_ok, counts_ok;
	/* pcb-v2 only */
	int doc_ok;		      /* the document gates (one Body, its Tip, native features) */
	char gate[16];		      /* the gate that zeroed the score, "" none */
	char gate_why[256];	      /* what it found */
	double s_surface, e_surface;  /* surface-type term and its worst error */
	double property;	      /* the four property terms, weighted */
	double icp_d_max, icp_rmse;   /* worst face-centre residual (model units), RMS */
	size_t faces[2], vertices[2]; /* candidate, reference (B-rep) */
	/* pcb-v2 with a spec: the validator's spec consistency of the
	 * delivery and its harmonic mean with the geometry score */
	int spec_state;	    /* enum engi_cad_spec_state */
	char spec_why[512]; /* unavailable: why; measured: the failures, first few */
	size_t spec_consistent, spec_inconsistent, spec_not_found;
	double spec_score, combined;
};

enum engi_cad_spec_state {
	ENGI_CAD_SPEC_NONE = 0,	   /* the task gives no spec */
	ENGI_CAD_SPEC_MEASURED,	   /* spec_score and combined hold */
	ENGI_CAD_SPEC_UNAVAILABLE, /* the spec is at fault (unreadable, or the validator raises) */
};

/* verifier["geometry"]: "mesh" (default) or "pcb-v2", into *method. */
int engi_cad_parse_method(json_t *verifier, const char *file, const char *pointer, int *method,
			  struct engi_error *err);

/* verifier["reference"]: a relative path inside the task folder, copied into
 * out (cap bytes). When absent: an error if required, else out is "". */
int engi_cad_parse_reference(json_t *verifier, int required, const char *file, const char *pointer,
			     char *out, size_t cap, struct engi_error *err);
/* dir/rel into out (PATH_MAX bytes); -1 when it does not fit. */
int engi_cad_path(char *out, const char *dir, const char *rel);

/* The same for the field key. */
int engi_cad_parse_task_path(json_t *verifier, const char *key, int required, const char *file,
			     const char *pointer, char *out, size_t cap, struct engi_error *err);

/* Measures ctx->artifact_dir/target against ctx->task_dir/reference with
 * method (enum engi_cad_method). A broken file is a status with a message
 * in s->why, not an error; errors are ENGI_ENOMEM only. */
int engi_cad_similarity_run(const struct engi_verify_ctx *ctx, const char *target,
			    const char *reference, int method, struct engi_cad_similarity *s,
			    struct engi_error *err);
/* The same for "pcb-v2" (cad_pcb.c): both files read by the B-rep kernel;
 * spec (inside the task folder, NULL: none) the Parametric CAD Bench
 * spec.json whose key parameters the delivery is checked against. */
int engi_cad_pcb_run(const struct engi_verify_ctx *ctx, const char *target, const char *reference,
		     const char *spec, struct engi_cad_similarity *s, struct engi_error *err);

/* The validator's pieces, for tests and the spec side. Relative difference
 * |a - b| / max(|a|, |b|, floor, 1e-9); the credit of error e with full
 * credit up to m and none from f, 1 - log10(e/m) / log10(f/m) between; the
 * harmonic mean of geometry and specification (0 when either is). */
double engi_pcb_rel(double a, double b, double floor);
double engi_pcb_tier(double e, double m, double f);
double engi_pcb_combine(double geometry, double spec);

/* Records the metric "geometry_similarity" (0 for a bad delivery, nothing
 * without a reference) and, when measured, the error terms behind it. */
int engi_cad_similarity_record(const struct engi_cad_similarity *s, struct engi_verdict *v,
			       struct engi_error *err);

#endif
