/*
 * truth.h - ground truth by two independent solves, what `engisweep truth`
 * freezes and the structural and fe_solid verifiers compare against.
 *
 * A structural model (engi/structural.h) is solved as written (AMD
 * ordering, supernodal factorisation) and with its nodes, elements and
 * loads in reverse order and every member reversed, member loads made
 * global (METIS ordering, simplicial factorisation); agreement is the
 * largest difference of displacements, reactions and member end forces
 * over the largest value, state by state. A CalculiX deck (engi/fe.h) is
 * solved as read (the kernel's default ordering, supernodal) and with its
 * nodes, elements, boundaries and pressures in reverse order (the other of
 * AMD and METIS, simplicial); agreement is the largest difference of max |u|
 * and of every nodal displacement over max |u|. A truth is good when both
 * solves agree to ENGI_TRUTH_AGREEMENT_REL and equilibrium holds to
 * ENGI_TRUTH_EQUILIBRIUM_REL (engi_truth_accepted); writing it is the
 * caller's choice.
 */
#ifndef ENGI_TRUTH_H
#define ENGI_TRUTH_H

#include <stddef.h>

#include "engi/fe.h"
#include "engi/structural.h"

struct engi_error;

#define ENGI_TRUTH_AGREEMENT_REL   1e-10
#define ENGI_TRUTH_EQUILIBRIUM_REL 1e-9
/* A deck's truth lists every node's displacement up to this many nodes;
 * above it every k-th node (k = ceil(nodes / cap)) in ascending node
 * number, and the node of max |u|. */
#define ENGI_TRUTH_DECK_NODES_MAX 200000

/* How one of the two solves ran (method and ordering are static text). */
struct engi_truth_solve {
	const char *method, *ordering;
	double seconds;
};

struct engi_truth_check {
	struct engi_truth_solve solve[2]; /* as written, then reversed */
	size_t ndof, neq;		  /* of the first solve */
	double agreement_rel, equilibrium_rel;
};

/* 1 when the two solves agree and equilibrium holds (NaN fails). */
int engi_truth_accepted(const struct engi_truth_check *c);

/* Solves s twice and fills t from the first solve (states in s's order,
 * t->agreement_rel set) and c. Errors are the solver's (a mechanism names
 * node and direction) or ENGI_ENOMEM; t is then released. */
int engi_structural_truth_build(const struct engi_structural *s, struct engi_structural_truth *t,
				struct engi_truth_check *c, struct engi_error *err);

/* Solves m twice; r (initialised by the caller, who releases it) gets the
 * first solve. */
int engi_fe_solid_truth_build(const struct engi_fe_solid *m, struct engi_fe_solid_result *r,
			      struct engi_truth_check *c, struct engi_error *err);
/* Writes fe-solid-truth/1 (tasks/SCHEMA-structural.md) through PATH.tmp
 * and a rename: deck_name, counts, max |u| and its node, reaction and load
 * sums, c's agreement and equilibrium and the displacements of the nodes
 * (every node up to ENGI_TRUTH_DECK_NODES_MAX). ENGI_EIO names the file. */
int engi_fe_solid_truth_write(const char *path, const char *deck_name,
			      const struct engi_fe_solid *m, const struct engi_fe_solid_result *r,
			      const struct engi_truth_check *c, struct engi_error *err);

#endif
