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
/* Reads key_parameters given as text. */
int engi_pcb_spec_text(const char *text, size_t len, struct engi_pcb_spec *out,
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
};

/* The bank of rep's measured shape. ENGI_ENOMEM only. */
int engi_pcb_bank_build(const struct engi_brep_report *rep, struct engi_pcb_bank *b,
			struct engi_error *err);
void engi_pcb_bank_release(struct engi_pcb_bank *b);
/* Python's round(x, digits) for the validator's 9 (lengths) and 10
 * (angles): correctly rounded through the decimal text. */
double engi_pcb_round(double x, int digits);

#endif
