/*
 * fe.h - linear finite-element re-solves: solid decks and frame models.
 *
 * Two model kinds share one sparse path. A model is a plain struct owned by
 * the caller (_init / _release); the readers (engi_inp_read for CalculiX
 * decks) fill it, or code builds it by hand. engi_fe_solid_solve assembles
 * the symmetric stiffness of the unconstrained degrees of freedom straight
 * into a compressed-column upper triangle, factorises it with CHOLMOD
 * (supernodal or simplicial, AMD/METIS or natural ordering, BLAS from
 * OpenBLAS) and fills a caller-owned result (_release). Prescribed
 * displacements enter the right-hand side; reactions are the internal forces
 * minus the applied loads at the restrained degrees of freedom. A singular
 * (mechanism) model is ENGI_EINVALID with the node and direction where the
 * factorisation broke down. The solve blocks for its whole duration; it
 * does no I/O. CHOLMOD's own workspace is allocated outside the allocation
 * seam.
 */
#ifndef ENGI_FE_H
#define ENGI_FE_H

#include <stddef.h>
#include <stdint.h>

struct engi_error;

/* ---- sparse symmetric systems ---------------------------------------- */

enum engi_fe_order {
	/* AMD on the node graph; nested dissection (CHOLMOD's, METIS
	 * bisections) on it instead when AMD's factor is costly and the
	 * dissection's costs fewer flops. Without a node partition (no
	 * engi_fe_csc_pattern), CHOLMOD's own choice between AMD and METIS. */
	ENGI_FE_ORDER_AUTO = 0,
	ENGI_FE_ORDER_AMD,
	ENGI_FE_ORDER_METIS,
	ENGI_FE_ORDER_NATURAL,
};

struct engi_fe_solve_opts {
	enum engi_fe_order order;
	int simplicial; /* 1: up-looking simplicial LDL'; 0: supernodal LL' */
};

/* Upper triangle, compressed columns, rows sorted within a column. 32-bit
 * indices (CHOLMOD's int flavour) halve the index memory of the matrix and
 * of the factor; a system with 2^31 nonzeros or more is ENGI_ETOOBIG. */
struct engi_fe_csc {
	size_t n;
	int32_t *colptr; /* n + 1 */
	int32_t *rowind; /* colptr[n] */
	double *val;
	/* Nodes with free equations: node k holds equations blk[k] ..
	 * blk[k+1]), so orderings can run on the node graph (dpn^2 times
	 * fewer edges) and keep a node's equations together. */
	size_t nblk;
	int32_t *blk; /* nblk + 1, NULL when unknown */
};

void engi_fe_csc_init(struct engi_fe_csc *a);
void engi_fe_csc_release(struct engi_fe_csc *a);

/* The pattern of all equations coupled through elements. Nodes 0..nnodes-1
 * carry dpn degrees of freedom each; eq[node * dpn + c] is the equation
 * number (numbered in node-then-component order) or -1 when restrained.
 * Element e joins nodes conn[off[e] .. off[e+1]). Values are zeroed; the
 * node partition (blk) is filled. */
int engi_fe_csc_pattern(struct engi_fe_csc *a, size_t nnodes, int dpn, const int64_t *eq,
			size_t neq, size_t nelems, const size_t *off, const uint32_t *conn,
			struct engi_error *err);

/* Adds a dense row-major element matrix ke (nd x nd) whose rows are the
 * global degrees of freedom dofs[0..nd). Restrained columns with a value in
 * ubar (NULL: all zero) move to rhs. */
void engi_fe_csc_add(struct engi_fe_csc *a, const int64_t *eq, const double *ke, int nd,
		     const size_t *dofs, const double *ubar, double *rhs);

/* A factor whose reciprocal condition estimate (CHOLMOD's, the squared
 * ratio of the smallest to the largest diagonal of L) is below this is
 * singular in double precision. */
#define ENGI_FE_RCOND_MIN 1e-13

/* Factorises a (positive definite) and solves for nrhs right-hand sides in
 * place (b holds n * nrhs values, column-major). On a singular matrix
 * *bad_eq is the equation where it broke down. A supernodal factorisation
 * consumes a: its rows and values are released once CHOLMOD holds its own
 * permuted copy, so that only one copy of the matrix lives beside the
 * factor (a is still released with engi_fe_csc_release). */
struct engi_fe_solve_stats {
	double factor_s, solve_s;
	double lnz;	    /* nonzeros in the factor */
	const char *method; /* "supernodal" or "simplicial" */
	const char *ordering;
};
int engi_fe_csc_solve(struct engi_fe_csc *a, double *b, size_t nrhs,
		      const struct engi_fe_solve_opts *opts, int64_t *bad_eq,
		      struct engi_fe_solve_stats *st, struct engi_error *err);

/* Smoothed-aggregation multigrid on a (which is not modified) with the
 * near-null space nullsp (nns <= 16 columns of a->n values, column-major:
 * the rigid-body modes), then conjugate gradients preconditioned by it on
 * nrhs right-hand sides (column-major, in place), a few at a time in
 * lockstep with a probe: a random right-hand side, whose residual a
 * singular matrix keeps above about 1 / sqrt(n) even when the loads do not
 * excite its mechanism. Needs the node partition (blk). _setup is
 * ENGI_EINVALID when the matrix shows itself not positive definite; _pcg
 * returns 0 when every |K u - f| <= tol |f| (or a residual stalled at the
 * rounding floor within 10 tol), 1 when one did not converge within maxit
 * iterations or broke down, 2 when the probe says singular (b untouched
 * unless 0), ENGI_ENOMEM. */
struct engi_fe_amg;
struct engi_fe_pcg_stats {
	int iterations;	       /* largest over the right-hand sides */
	double residual;       /* largest |K u - f| / |f| */
	double probe_residual; /* the probe's last */
	int probe_iterations;
};
int engi_fe_amg_setup(const struct engi_fe_csc *a, const double *nullsp, int nns,
		      struct engi_fe_amg **out, struct engi_error *err);
void engi_fe_amg_free(struct engi_fe_amg *h);
int engi_fe_amg_pcg(struct engi_fe_amg *h, double *b, size_t nrhs, double tol, int maxit,
		    struct engi_fe_pcg_stats *st);
/* Flops of a banded Cholesky in a breadth-first (Cuthill-McKee) ordering of
 * a's node graph: a cheap upper bound of the direct factor's cost, high for
 * 3D lattices and solids, low for plane and slender models. */
double engi_fe_csc_band_flops(const struct engi_fe_csc *a);

/* ---- solid models (CalculiX subset) ------------------------------------ */

enum engi_fe_etype { ENGI_FE_C3D4 = 0, ENGI_FE_C3D10, ENGI_FE_C3D8, ENGI_FE_ETYPE_COUNT };

/* Nodes per element of each type. */
int engi_fe_etype_nodes(enum engi_fe_etype t);
const char *engi_fe_etype_name(enum engi_fe_etype t);

struct engi_fe_bc {
	uint32_t node; /* index */
	uint8_t dof;   /* 0..2 */
	double value;
};

struct engi_fe_pressure {
	uint32_t elem; /* index */
	uint8_t face;  /* 1-based face number, CalculiX numbering */
	double value;  /* positive pushes into the element */
};

struct engi_fe_solid {
	size_t nnodes;
	double *xyz;	  /* 3 * nnodes */
	int64_t *node_id; /* deck numbers */
	size_t nelems;
	uint8_t *etype;	  /* enum engi_fe_etype */
	size_t *off;	  /* nelems + 1 */
	uint32_t *conn;	  /* node indices */
	int64_t *elem_id; /* deck numbers */
	double *young;	  /* per element */
	double *poisson;
	size_t nbc;
	struct engi_fe_bc *bc;
	double *force; /* 3 * nnodes concentrated loads */
	size_t npress;
	struct engi_fe_pressure *press;
};

void engi_fe_solid_init(struct engi_fe_solid *m);
void engi_fe_solid_release(struct engi_fe_solid *m);

struct engi_fe_solid_result {
	size_t nnodes, ndof, neq; /* ndof: all; neq: unrestrained */
	double *u;		  /* 3 * nnodes */
	double *reaction;	  /* 3 * nnodes, zero where unrestrained */
	double reaction_sum[3];
	double load_sum[3]; /* applied: concentrated plus pressure */
	double max_u;	    /* largest displacement magnitude */
	int64_t max_u_node; /* its deck number */
	double assemble_s, factor_s, solve_s, total_s;
	double lnz;
	const char *method, *ordering;
};

void engi_fe_solid_result_init(struct engi_fe_solid_result *r);
void engi_fe_solid_result_release(struct engi_fe_solid_result *r);

int engi_fe_solid_solve(const struct engi_fe_solid *m, const struct engi_fe_solve_opts *opts,
			struct engi_fe_solid_result *r, struct engi_error *err);

/* von Mises and the 6 stress components (xx yy zz xy yz zx) averaged over
 * the integration points of element e, from displacements u. */
int engi_fe_solid_stress(const struct engi_fe_solid *m, const double *u, size_t e, double s[6],
			 double *mises);
/* The 6 stress components of element e at its local node j (0-based, deck
 * order), as CalculiX's nodal output takes them before averaging over the
 * elements around a node: the integration-point values extrapolated to the
 * node. Exact for C3D4 (constant) and a straight-sided C3D10 (linear
 * strain, so a linear fit through its four points is the strain itself);
 * trilinear from the 2x2x2 points for C3D8. */
int engi_fe_solid_stress_node(const struct engi_fe_solid *m, const double *u, size_t e, int j,
			      double s[6]);

/* Reads the CalculiX subset listed in tasks/SCHEMA-structural.md: *NODE,
 * *ELEMENT (C3D4, C3D10, C3D8), *NSET, *ELSET (GENERATE), *MATERIAL,
 * *ELASTIC, *SOLID SECTION, *BOUNDARY, *CLOAD, *DLOAD (Pn), *STEP, *STATIC,
 * *NODE PRINT, *EL PRINT, *NODE FILE, *EL FILE, *END STEP. Anything else is
 * ENGI_ENOTSUP naming the line. Only the first step is read. m must have
 * been initialised; on error it is left empty. */
int engi_inp_read(const char *path, struct engi_fe_solid *m, struct engi_error *err);
int engi_inp_parse(const char *name, const char *text, size_t len, struct engi_fe_solid *m,
		   struct engi_error *err);

/* ---- frames and trusses (direct stiffness) ----------------------------- */

/*
 * Every node carries six degrees of freedom (ux uy uz rx ry rz). A 2D model
 * (dim 2) lies in the x-y plane: uz, rx and ry are restrained everywhere.
 * Beams are Euler-Bernoulli with axial, torsion and biaxial bending
 * stiffness; trusses carry axial force only. Local x runs from the first
 * node to the second; local y = normalise(zref x local x) and local z =
 * x cross y, where zref is the element's reference vector, by default the
 * global Z axis (global Y for members parallel to Z). A release frees a
 * local end degree of freedom (bit d of release[end], d = 0..5 in the order
 * above) by static condensation. Rotations that no beam stiffens (nodes of
 * trusses only, fully released ends) are restrained automatically; a free
 * translation with no stiffness is a mechanism and names itself.
 */

enum engi_frame_etype { ENGI_FRAME_BEAM = 0, ENGI_FRAME_TRUSS = 1 };

struct engi_frame_elem {
	uint32_t node[2];
	uint8_t type;
	uint8_t release[2];	      /* bit masks over the 6 local end dofs */
	double young, shear;	      /* E, G */
	double area, iy, iz, torsion; /* A, I about local y and z, J */
	double zref[3];		      /* all zero: the default */
};

struct engi_frame_nodal_load {
	uint32_t node;
	uint32_t lcase;
	double f[6]; /* Fx Fy Fz Mx My Mz */
};

struct engi_frame_member_load {
	uint32_t elem;
	uint32_t lcase;
	int local;   /* w in local axes (1) or global axes (0) */
	double w[3]; /* uniform force per unit length */
};

struct engi_frame {
	int dim; /* 2 or 3 */
	size_t nnodes;
	double *xyz;	  /* 3 * nnodes */
	int64_t *node_id; /* model numbers, for messages */
	size_t nelems;
	struct engi_frame_elem *elem;
	int64_t *elem_id;
	uint8_t *restraint; /* per node, bit d restrains dof d */
	size_t ncases;	    /* load cases (at least 1 when there are loads) */
	size_t nnodal, nmember;
	struct engi_frame_nodal_load *nodal;
	struct engi_frame_member_load *member;
	size_t ncombos;
	double *combo; /* ncombos * ncases factors */
};

void engi_frame_init(struct engi_frame *f);
void engi_frame_release(struct engi_frame *f);

/* Results of load case or combination k (0..ncases+ncombos). */
struct engi_frame_state {
	double *u;	   /* 6 * nnodes */
	double *reaction;  /* 6 * nnodes, zero at free dofs */
	double *end_force; /* 12 * nelems, local axes: the forces the nodes
			      exert on the member's ends (Fx Fy Fz Mx My Mz
			      at the first end, then the second) */
	double max_u;	   /* largest translation magnitude */
	int64_t max_u_node;
	double reaction_sum[6]; /* forces, and moments about the origin */
	double load_sum[6];
	double equilibrium_rel; /* |reactions + loads| / |loads| (forces and moments) */
};

struct engi_frame_result {
	size_t nnodes, nelems, nstates, ndof, neq;
	struct engi_frame_state *state; /* ncases then ncombos */
	size_t nauto;			/* rotations restrained automatically */
	double assemble_s, factor_s, solve_s, total_s;
	const char *method, *ordering;
	const char *solver;    /* "direct" or "cg" */
	int iterations;	       /* cg: the most over the load cases */
	double residual;       /* cg: the largest |K u - f| / |f| */
	const char *cg_failed; /* why cg gave way to the direct solver, or NULL */
};

void engi_frame_result_init(struct engi_frame_result *r);
void engi_frame_result_release(struct engi_frame_result *r);

/* Local axes of element e as rows of R (x, y, z in global coordinates) and
 * its length; 0 for a zero length or a reference vector along the member. */
int engi_frame_axes(const struct engi_frame *f, size_t e, double R[3][3], double *len);

int engi_frame_solve(const struct engi_frame *f, const struct engi_fe_solve_opts *opts,
		     struct engi_frame_result *r, struct engi_error *err);

/* The same with a choice of solver: the direct factorisation (what
 * engi_frame_solve, truth and the verifiers use), conjugate gradients
 * preconditioned by algebraic multigrid (engi_fe_amg_*), or auto: CG for a
 * model whose factor would be costly (3D lattices of tens of thousands of
 * dof), the direct solver otherwise. Whenever CG fails (no convergence
 * within its iteration cap, a matrix not positive definite or singular,
 * also where the loads leave the mechanism alone) the direct
 * solver runs, which also names the free degree of freedom of a mechanism;
 * r->solver says which solved, r->cg_failed why CG gave way. */
enum engi_fe_solver { ENGI_FE_SOLVER_DIRECT = 0, ENGI_FE_SOLVER_AUTO, ENGI_FE_SOLVER_CG };
int engi_frame_solve_with(const struct engi_frame *f, const struct engi_fe_solve_opts *opts,
			  enum engi_fe_solver solver, struct engi_frame_result *r,
			  struct engi_error *err);

/* Largest displacement magnitude over the nodes of a CalculiX .dat file's
 * first "displacements" block; *nfound nodes read. */
int engi_ccx_dat_max_u(const char *path, double *max_u, size_t *nfound, struct engi_error *err);
/* The same from an ASCII .frd file's first DISP block (*NODE FILE, U). */
int engi_ccx_frd_max_u(const char *path, double *max_u, size_t *nfound, struct engi_error *err);

/* Stresses of a CalculiX result file, as the agent's own run wrote them.
 * From an ASCII .frd, the first "-4  STRESS" block (*NODE FILE or *EL FILE
 * with S): nodal values, which CalculiX extrapolates from the integration
 * points to the nodes and averages over the elements that share a node;
 * id is the node, ip 0. From a .dat, every "stresses (elem, integ.pnt.,
 * ...)" block (*EL PRINT with S) of the first time written: id is the
 * element, ip its integration point (1-based). Components are stored as
 * xx yy zz xy yz zx whatever the file's order (the .dat writes xz before
 * yz). A NaN or infinite value, a malformed line or more than
 * ENGI_CCX_STRESS_MAX records is an error naming the file and line. */
#define ENGI_CCX_STRESS_MAX ((size_t)1 << 26)

struct engi_ccx_stress_rec {
	int64_t id; /* node (.frd) or element (.dat) deck number */
	int ip;	    /* integration point (.dat), 0 in a .frd */
	double s[6];
};

struct engi_ccx_stress {
	size_t n;
	struct engi_ccx_stress_rec *rec;
};

void engi_ccx_stress_init(struct engi_ccx_stress *s);
void engi_ccx_stress_release(struct engi_ccx_stress *s);
int engi_ccx_frd_stress(const char *path, struct engi_ccx_stress *s, struct engi_error *err);
int engi_ccx_dat_stress(const char *path, struct engi_ccx_stress *s, struct engi_error *err);
int engi_ccx_frd_stress_parse(const char *name, const char *text, size_t len,
			      struct engi_ccx_stress *s, struct engi_error *err);
int engi_ccx_dat_stress_parse(const char *name, const char *text, size_t len,
			      struct engi_ccx_stress *s, struct engi_error *err);

#endif
