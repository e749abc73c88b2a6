/*
 * pcb_spec.h - the key parameters of a Parametric CAD Bench spec
 * (spec.json: name, description, key_parameters), read as the published
 * validator 0.6.0 reads them, for its spec-consistency score
 * (docs/verifiers.md#the-spec-side-of-pcb-v2).
 *
 * key_parameters is text ("length = 40 mm, hole_count = 4\n...") or an
 * object ({"length": {"value": 40, "unit": "mm"}, ...}). Each parameter is
 * a scalar (lengths in mm, angles in radians), a vector (a parenthesised
 * list), a count (a count key with an integral, unitless value) or a
 * string (a word such as "right" or "M6"); what is neither is dropped, as
 * the validator drops it (expressions such as 100/25, text without "=").
 */
#ifndef ENGI_PCB_SPEC_H
#define ENGI_PCB_SPEC_H

#include <stddef.h>

#include "engi/error.h"

typedef struct json_t json_t;

#define ENGI_PCB_KEY_MAX    128 /* longer keys are dropped */
#define ENGI_PCB_TEXT_MAX   128 /* longer strings are dropped */
#define ENGI_PCB_VEC_MAX    32	/* vectors with more components are dropped */
#define ENGI_PCB_PARAMS_MAX 4096

enum engi_pcb_kind { ENGI_PCB_SCALAR, ENGI_PCB_VECTOR, ENGI_PCB_COUNT, ENGI_PCB_STRING };

struct engi_pcb_param {
	char key[ENGI_PCB_KEY_MAX]; /* lower case */
	int kind;		    /* enum engi_pcb_kind */
	double value;		    /* scalar */
	double vec[ENGI_PCB_VEC_MAX];
	int nvec;
	long long count;
	char text[ENGI_PCB_TEXT_MAX]; /* string */
};

/* In the validator's order: per kind, the order keys were first given (a
 * key given again with the same kind takes the later value in the first
 * place). */
struct engi_pcb_spec {
	struct engi_pcb_param *p;
	size_t n;
};

/* Reads the key parameters of spec (the spec.json object; no
 * key_parameters: none). ENGI_EPARSE only when spec is not an object;
 * ENGI_ENOMEM, ENGI_ETOOBIG past ENGI_PCB_PARAMS_MAX. */
int engi_pcb_spec_read(json_t *spec, struct engi_pcb_spec *out, struct engi_error *err);
/* Reads key_parameters given as text into out (initialised here; empty
 * again on error). */
int engi_pcb_spec_text(const char *text, size_t len, struct engi_pcb_spec *out,
		       struct engi_error *err);
/* Reads the spec.json at path (at most ENGI_PCB_SPEC_FILE_MAX bytes;
 * messages call it name, path when NULL). ENGI_EIO, ENGI_EPARSE for a file
 * that is no JSON object, ENGI_ETOOBIG, ENGI_ENOMEM. */
#define ENGI_PCB_SPEC_FILE_MAX (4u << 20)
int engi_pcb_spec_file(const char *path, const char *name, struct engi_pcb_spec *out,
		       struct engi_error *err);
void engi_pcb_spec_release(struct engi_pcb_spec *s);

/*
 * The measurements the validator matches parameters to, from the shape's
 * faces (engi/brep.h), as its extractors make them (verifiers/pcb_bank.c):
 *   cylinder clusters: cylinder faces taken in order, each joining the
 *     first cluster of the same orientation (FORWARD: convex) whose radius
 *     is within 1 % (of the larger) and whose axis is within 2 degrees
 *     (either sense); the cluster keeps its first face's radius and axis,
 *     every face's centre and the largest axial length (v range);
 *   plane pairs: for each two plane faces in order with |n_i . n_j| >=
 *     0.999, the offset |(p_j - p_i) . n_i| when >= 1e-6, the first of each
 *     (offset, |n|) rounded to 6 decimals kept, sorted by offset (stable);
 *   cones: the end radii R + v tan(semi-angle) at the face's v range (the
 *     validator's formula), the smaller clamped at 0;
 *   globals: volume, area, centroid, the axis-aligned box (sizes sorted,
 *     corners) and the principal-axes box of the B-rep vertices;
 * lengths rounded to 9 decimals, angles to 10, as the validator rounds.
 */
struct engi_brep_report;

/* Parallel plane pairs looked at, at most (a shape of thousands of
 * parallel faces has millions; the validator scores a shape of over 5,000
 * faces 0 whatever its spec). */
#define ENGI_PCB_PAIRS_MAX 1000000

struct engi_pcb_cluster {
	int convex;
	size_t count;
	double radius, axis[3], axial_extent;
	double (*centroids)[3]; /* count of them */
};

struct engi_pcb_plane_pair {
	double normal[3], offset, min_area;
};

struct engi_pcb_cone {
	double radius_min, radius_max, axial_extent, axis[3], apex_radius, semi_angle;
};

/* A feature-tree value (verifiers/pcb_tree.c): a listed numeric property
 * of an object (angles in radians), a sketch's circle or arc (its radius,
 * its centre in the sketch's coordinates), a line segment's length, or an
 * angle constraint, rounded as the validator rounds them. */
enum engi_pcb_prop_kind {
	ENGI_PCB_P_NAMED,  /* name: Length, Radius, ... Occurrences */
	ENGI_PCB_P_CIRCLE, /* Geometry[k].CircleRadius */
	ENGI_PCB_P_ARC,	   /* Geometry[k].CircleRadius and .ArcRadius */
	ENGI_PCB_P_LINE,   /* Geometry[k].LineLength */
	ENGI_PCB_P_ANGLE,  /* Constraint[k].Angle */
};

struct engi_pcb_prop {
	int kind;
	char name[16];
	long index;
	double value, centre[3];
};

struct engi_pcb_feature {
	char name[128];
	int sketch;	     /* a Sketcher::SketchObject */
	size_t prop, nprops; /* its values: bank prop[prop, prop + nprops) */
	size_t nlines;	     /* its line segments (construction excluded) */
};

/* A grid of equal circles of a sketch, or of a cylinder cluster's faces
 * (rows the smaller of the two counts; spacing 0 for a single row). */
struct engi_pcb_grid {
	size_t count, rows, cols;
	double spacing_rows, spacing_cols, origin[3];
};

/* Equal circles (or a cluster's faces) evenly around a centre. */
struct engi_pcb_circular {
	size_t count;
	double radius, centre[3], axis[3], pitch;
};

/* Line pairs whose angles are taken, at most (a sketch of n lines has
 * n(n-1)/2 of them). */
#define ENGI_PCB_LINE_ANGLES_MAX 2000000

struct engi_pcb_bank {
	double volume, area, centroid[3];
	/* the axis-aligned box: its sizes ascending and corners (has_aabb 0:
	 * none); obb_sorted the principal-axes box of the vertices, else the
	 * axis-aligned box's sizes (the validator's fallback) */
	int has_aabb;
	double aabb_sorted[3], aabb_min[3], aabb_max[3], obb_sorted[3];
	struct engi_pcb_cluster *cluster;
	size_t nclusters;
	struct engi_pcb_plane_pair *pair;
	size_t npairs;
	int pairs_capped; /* over ENGI_PCB_PAIRS_MAX candidates: the rest not looked at */
	struct engi_pcb_cone *cone;
	size_t ncones;
	/* the document's feature tree (engi_pcb_bank_tree; none without) */
	struct engi_pcb_feature *feature;
	size_t nfeatures;
	struct engi_pcb_prop *prop;
	size_t nprops;
	double *line_angle; /* LineAngle[i,j] of every sketch, radians */
	size_t nline_angles;
	int line_angles_capped;
	struct engi_pcb_grid *grid;
	size_t ngrids;
	struct engi_pcb_circular *circular;
	size_t ncirculars;
};

/* The bank of rep's measured shape. ENGI_ENOMEM only. */
int engi_pcb_bank_build(const struct engi_brep_report *rep, struct engi_pcb_bank *b,
			struct engi_error *err);
/* Adds doc's feature tree to b (every object but origins, their axes and
 * planes, groups and coordinate systems, in document order), then the
 * detectors' grids and circular patterns, of the sketches' circles and of
 * the cylinder clusters. ENGI_ENOMEM only. */
struct engi_fc_doc;
int engi_pcb_bank_tree(const struct engi_fc_doc *doc, struct engi_pcb_bank *b,
		       struct engi_error *err);
void engi_pcb_bank_release(struct engi_pcb_bank *b);
/* The bank of the document at path, rep its B-rep report: the shape's
 * measurements and, of an FCStd whose Document.xml reads, its feature
 * tree. *found 0 (and b empty) when the validator finds nothing to
 * measure: not a FreeCAD document, or no Body with a shape. ENGI_ENOMEM
 * only. */
int engi_pcb_bank_of(const struct engi_brep_report *rep, const char *path, struct engi_pcb_bank *b,
		     int *found, struct engi_error *err);

/* ---- the checks (verifiers/pcb_check.c) ---- */

enum engi_pcb_state { ENGI_PCB_CONSISTENT, ENGI_PCB_INCONSISTENT, ENGI_PCB_NOT_FOUND };

/* The check a parameter is routed to, by the tokens of its key. */
enum engi_pcb_check {
	ENGI_PCB_C_COUNT,
	ENGI_PCB_C_VOLUME,
	ENGI_PCB_C_AREA,
	ENGI_PCB_C_DIAMETER,
	ENGI_PCB_C_RADIUS,
	ENGI_PCB_C_THICKNESS,
	ENGI_PCB_C_DISTANCE,
	ENGI_PCB_C_VECTOR,
	ENGI_PCB_C_ANGLE,
	ENGI_PCB_C_LENGTH,
	ENGI_PCB_C_NONE, /* no check: not found */
};
/* "count", "volume", ... "length", "none" */
const char *engi_pcb_check_name(int check);

struct engi_pcb_finding {
	const struct engi_pcb_param *param;
	int check, state;
	int has_measured;
	double measured[3]; /* the closest candidate (a vector's first components) */
	double rel;	    /* its relative difference (vectors: over the box diagonal) */
	const char *reason; /* not found: why */
};

struct engi_pcb_spec_result {
	struct engi_pcb_finding *f; /* scalars, vectors, counts, then strings */
	size_t n, consistent, inconsistent, not_found;
	/* the validator 0.6.0 raises (TypeError) on this spec and this shape:
	 * a vector value routed to a check of scalars; why, else NULL */
	const char *raises;
};

/* Checks each parameter of spec against bank as the validator does; bank
 * NULL: nothing to measure, every parameter not found. */
int engi_pcb_spec_check(const struct engi_pcb_spec *spec, const struct engi_pcb_bank *bank,
			struct engi_pcb_spec_result *out, struct engi_error *err);
void engi_pcb_spec_result_release(struct engi_pcb_spec_result *r);
/* max(0, 1 - failures / min(total, budget)); 0 when total is 0. */
double engi_pcb_spec_score(size_t total, size_t failures, int budget);
/* Python's round(x, digits) for the validator's 9 (lengths) and 10
 * (angles): correctly rounded through the decimal text. */
double engi_pcb_round(double x, int digits);

#endif
