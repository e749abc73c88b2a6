/*
 * structural.h - the structural-model JSON format (tasks/SCHEMA-structural.md)
 * read into the frame kernel's model, and strict model matching.
 *
 * engi_structural_read validates a file and converts it (jansson stays in
 * structural_json.c, and structural_sc.c for StructureClaw's format, which
 * the reader detects and normalises to the frame kernel's axes and units);
 * names of load cases and combinations are kept for matching and reports. engi_structural_match
 * pairs a delivered model with a reference one: nodes one-to-one within a distance, elements by
 * type and mapped connectivity, restraints, properties and loads within a relative tolerance,
 * combinations by their resulting load vectors. Lifecycle: _init / _release; nothing blocks but the
 * reading of the file.
 */
#ifndef ENGI_STRUCTURAL_H
#define ENGI_STRUCTURAL_H

#include <stddef.h>

#include "engi/fe.h"

struct engi_error;

#define ENGI_STRUCT_NAME_MAX	 64
#define ENGI_STRUCT_MAX_BYTES	 ((size_t)256 << 20)
#define ENGI_STRUCT_MAX_ENTITIES 10000000

struct engi_structural {
	struct engi_frame f;
	char (*case_name)[ENGI_STRUCT_NAME_MAX];  /* f.ncases */
	char (*combo_name)[ENGI_STRUCT_NAME_MAX]; /* f.ncombos */
	char length_unit[16], force_unit[16];
	/* What reading converted, for a model in another format
	 * ("StructureClaw 2.0.0; SI: ..."; printable ASCII without quotes
	 * or backslashes); empty for structural/1. */
	char normalised[256];
};

void engi_structural_init(struct engi_structural *s);
void engi_structural_release(struct engi_structural *s);

/* Reads and validates structural/1 or a StructureClaw model, told apart by
 * the root ("format" or "schema_version" and "nodes"); errors name the file
 * and the JSON pointer. */
int engi_structural_read(const char *path, struct engi_structural *s, struct engi_error *err);
int engi_structural_parse(const char *name, const char *text, size_t len, struct engi_structural *s,
			  struct engi_error *err);

/* The model s as structural/1 JSON text (a new string, free()), in
 * engisweep's axes and units as reading left them: a StructureClaw model
 * read, written again in our format. One material and one section per
 * element; supports from the restraints (in 2D only ux, uy, rz: the plane
 * restrains the rest). ENGI_ENOMEM when memory runs out. */
int engi_structural_to_json(const struct engi_structural *s, char **text, struct engi_error *err);

/* Entry id of a reference list (a JSON array of {"id", "model"}, as
 * StructureClaw-Bench's fixtures/ground-truth-models.json) at path, named
 * rel in messages, read under ENGI_STRUCT_LIST_MAX bytes; its model parsed
 * as engi_structural_parse does under the name "REL 'ID'" (written to
 * label). Errors: ENGI_EIO (the file), ENGI_EPARSE (not JSON, not a list),
 * ENGI_ENOTFOUND (no entry id with a model), ENGI_EINVALID (the model does
 * not read), ENGI_ENOMEM. */
#define ENGI_STRUCT_LIST_MAX ((size_t)64 << 20)
int engi_structural_read_entry(const char *path, const char *rel, const char *id,
			       struct engi_structural *s, char *label, size_t label_cap,
			       struct engi_error *err);

/* Tolerances of strict matching (the defaults). */
struct engi_match_tol {
	double node_dist; /* nodes pair within this distance (model units) */
	double prop_rel;  /* properties and load magnitudes */
};
#define ENGI_MATCH_NODE_DIST 0.05
#define ENGI_MATCH_PROP_REL  0.05

struct engi_match {
	/* counts over the reference (recall) and the candidate (precision) */
	size_t ref_nodes, cand_nodes, matched_nodes;
	size_t ref_elems, cand_elems, matched_elems;
	size_t ref_loads, cand_loads, matched_loads; /* load-vector entries */
	size_t restraint_mismatch, property_mismatch, combo_mismatch;
	long *node_map;	 /* reference node index -> candidate index or -1 */
	long *elem_map;	 /* reference element -> candidate element or -1 */
	int *elem_flip;	 /* 1 when the candidate runs the other way */
	long *case_map;	 /* reference case -> candidate case or -1 */
	long *combo_map; /* reference combination -> candidate or -1 */
	size_t ref_cases, ref_combos, cand_cases; /* the maps' lengths, and the candidate's cases */
	char first_problem[256];
};

void engi_match_init(struct engi_match *m);
void engi_match_release(struct engi_match *m);
/* 1 when every count matches and no mismatch was found. */
int engi_match_perfect(const struct engi_match *m);
int engi_structural_match(const struct engi_structural *ref, const struct engi_structural *cand,
			  const struct engi_match_tol *tol, struct engi_match *m,
			  struct engi_error *err);

/*
 * What StructureClaw-Bench's loose model check (`model_matches`) compares,
 * on a model as read (axes and units normalised): node and element counts,
 * the span (range of x), the height (range of the vertical axis: y in 2D,
 * z in 3D, StructureClaw's z either way) and the total load: over every
 * load case, each nodal load's vertical force, or its Fx when that is 0,
 * and each member load's vertical component per unit length (global or
 * local: a horizontal member's local vertical), all as magnitudes.
 * tasks/SCHEMA-structural.md says where this differs from the benchmark's
 * own sum on a StructureClaw file. Span and height are 0 without nodes.
 */
struct engi_structural_extent {
	size_t nodes, elements;
	double span, height, load;
};

void engi_structural_extent(const struct engi_structural *s, struct engi_structural_extent *x);

/*
 * Truth: the results of the reference model, frozen by `engisweep truth`,
 * in the reference's node and element order: per state (load case, then
 * combination) displacements and reactions (6 per node) and member end
 * forces in global axes (12 per element: the forces the nodes exert on the
 * member at its first end, then its second), so a reversed member compares
 * end by end without caring about its local axes.
 */
struct engi_structural_truth {
	size_t nnodes, nelems, nstates;
	int64_t *node_id, *elem_id;
	char (*state_name)[ENGI_STRUCT_NAME_MAX];
	double *u, *reaction, *end_force; /* nstates blocks each */
	double agreement_rel;		  /* of the two solves that produced it */
	double equilibrium_rel;
};

void engi_structural_truth_init(struct engi_structural_truth *t);
void engi_structural_truth_release(struct engi_structural_truth *t);
/* From a solve of s (states in s's order). */
int engi_structural_truth_from(const struct engi_structural *s, const struct engi_frame_result *r,
			       struct engi_structural_truth *t, struct engi_error *err);
int engi_structural_truth_write(const char *path, const struct engi_structural_truth *t,
				const char *model_name, struct engi_error *err);
int engi_structural_truth_read(const char *path, struct engi_structural_truth *t,
			       struct engi_error *err);

/* Worst comparison of a candidate's results against truth through a
 * match: each ratio is max |a - b| / max(tol_abs, tol_rel |a|) over the
 * mapped nodes or elements (<= 1 passes); where names the worst entry. */
struct engi_structural_cmp {
	double u_ratio, reaction_ratio, force_ratio;
	size_t compared;
	char where[160];
};
#define ENGI_STRUCT_RESULT_REL 0.01
#define ENGI_STRUCT_RESULT_ABS 1e-8
int engi_structural_compare(const struct engi_structural_truth *truth,
			    const struct engi_structural *cand, const struct engi_frame_result *cr,
			    const struct engi_match *m, double tol_rel, double tol_abs,
			    struct engi_structural_cmp *out, struct engi_error *err);

#endif
