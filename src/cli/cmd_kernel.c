/*
 * engisweep kernel KIND ... - run one verifier kernel by hand on a file and
 * print what it found. One table row per kernel; each row's function parses
 * its own options.
 */
#include "cli.h"
#include "fsutil.h"

#include "engi/error.h"
#include "engi/fe.h"
#include "engi/structural.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Options the finite-element kernels share. */
struct fe_cli {
	int json;
	struct engi_fe_solve_opts so;
	enum engi_fe_solver solver; /* frame */
	const char *write;	    /* frame: the model as structural/1 to this file */
	const char *path;
};

/* frame: whether --solver is accepted, and auto its default */
static int fe_parse(int argc, char **argv, const char *help, int frame, struct fe_cli *o)
{
	enum { O_JSON = 256, O_ORDER, O_SIMPLICIAL, O_SOLVER, O_WRITE };
	static const struct option opts[] = {
	    {"json", no_argument, NULL, O_JSON},
	    {"write", required_argument, NULL, O_WRITE},
	    {"order", required_argument, NULL, O_ORDER},
	    {"simplicial", no_argument, NULL, O_SIMPLICIAL},
	    {"solver", required_argument, NULL, O_SOLVER},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	memset(o, 0, sizeof(*o));
	if (frame)
		o->solver = ENGI_FE_SOLVER_AUTO;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_WRITE:
			if (!frame) {
				fputs(help, stderr);
				return -1;
			}
			o->write = optarg;
			break;
		case O_SOLVER:
			if (!frame) {
				fputs(help, stderr);
				return -1;
			}
			if (!strcmp(optarg, "auto"))
				o->solver = ENGI_FE_SOLVER_AUTO;
			else if (!strcmp(optarg, "direct"))
				o->solver = ENGI_FE_SOLVER_DIRECT;
			else if (!strcmp(optarg, "cg"))
				o->solver = ENGI_FE_SOLVER_CG;
			else {
				cli_errorf("--solver: '%s' is not one of auto, direct, cg", optarg);
				return -1;
			}
			break;
		case O_JSON:
			o->json = 1;
			break;
		case O_ORDER:
			if (!strcmp(optarg, "auto"))
				o->so.order = ENGI_FE_ORDER_AUTO;
			else if (!strcmp(optarg, "amd"))
				o->so.order = ENGI_FE_ORDER_AMD;
			else if (!strcmp(optarg, "metis"))
				o->so.order = ENGI_FE_ORDER_METIS;
			else if (!strcmp(optarg, "natural"))
				o->so.order = ENGI_FE_ORDER_NATURAL;
			else {
				cli_errorf("--order: '%s' is not one of auto, amd, metis, natural",
					   optarg);
				return -1;
			}
			break;
		case O_SIMPLICIAL:
			o->so.simplicial = 1;
			break;
		case 'h':
			fputs(help, stdout);
			return 1;
		default:
			fputs(help, stderr);
			return -1;
		}
	}
	if (optind != argc - 1) {
		fputs(help, stderr);
		return -1;
	}
	o->path = argv[optind];
	return 0;
}

static const char fe_help[] =
    "usage: engisweep kernel fe [options] DECK.inp\n"
    "\n"
    "Re-solves a CalculiX deck (the subset in tasks/SCHEMA-structural.md):\n"
    "linear elastic, sparse Cholesky. Prints the degrees of freedom, the\n"
    "largest displacement, the reaction and load sums and the times.\n"
    "\n"
    "options:\n"
    "      --json           one JSON object instead of text\n"
    "      --order O        auto (default), amd, metis or natural\n"
    "      --simplicial     simplicial instead of supernodal factorisation\n"
    "  -h, --help           this text\n";

static int kernel_fe(int argc, char **argv)
{
	struct fe_cli o;
	int rc = fe_parse(argc, argv, fe_help, 0, &o);
	if (rc)
		return rc > 0 ? 0 : EXIT_USAGE;
	struct engi_error err;
	engi_error_init(&err);
	struct engi_fe_solid m;
	struct engi_fe_solid_result r;
	engi_fe_solid_init(&m);
	engi_fe_solid_result_init(&r);
	double t0 = now_s();
	rc = engi_inp_read(o.path, &m, &err);
	double parse_s = now_s() - t0;
	if (rc == 0)
		rc = engi_fe_solid_solve(&m, &o.so, &r, &err);
	if (rc < 0) {
		cli_error(&err);
		engi_fe_solid_release(&m);
		return rc == ENGI_ENOMEM || rc == ENGI_EIO ? EXIT_FAILED : EXIT_USAGE;
	}
	double total_s = now_s() - t0;
	if (o.json) {
		printf("{\"deck\": \"%s\", \"nodes\": %zu, \"elements\": %zu, \"dof\": %zu, "
		       "\"free_dof\": %zu,\n \"max_u\": %.17g, \"max_u_node\": %lld,\n"
		       " \"reaction_sum\": [%.17g, %.17g, %.17g],\n"
		       " \"load_sum\": [%.17g, %.17g, %.17g],\n"
		       " \"factor_nnz\": %.0f, \"method\": \"%s\", \"ordering\": \"%s\",\n"
		       " \"parse_s\": %.6f, \"assemble_s\": %.6f, \"factor_s\": %.6f, "
		       "\"solve_s\": %.6f, \"total_s\": %.6f}\n",
		       o.path, m.nnodes, m.nelems, r.ndof, r.neq, r.max_u, (long long)r.max_u_node,
		       r.reaction_sum[0], r.reaction_sum[1], r.reaction_sum[2], r.load_sum[0],
		       r.load_sum[1], r.load_sum[2], r.lnz, r.method, r.ordering, parse_s,
		       r.assemble_s, r.factor_s, r.solve_s, total_s);
	} else {
		printf("deck          %s\n", o.path);
		printf("model         %zu nodes, %zu elements, %zu dof (%zu free)\n", m.nnodes,
		       m.nelems, r.ndof, r.neq);
		printf("max |u|       %.7e at node %lld\n", r.max_u, (long long)r.max_u_node);
		printf("reaction sum  %.7e %.7e %.7e\n", r.reaction_sum[0], r.reaction_sum[1],
		       r.reaction_sum[2]);
		printf("load sum      %.7e %.7e %.7e\n", r.load_sum[0], r.load_sum[1],
		       r.load_sum[2]);
		printf("factor        %s, %s ordering, %.3g nonzeros\n", r.method, r.ordering,
		       r.lnz);
		printf("time          parse %.3f s, assemble %.3f s, factor %.3f s, solve %.3f s, "
		       "total %.3f s\n",
		       parse_s, r.assemble_s, r.factor_s, r.solve_s, total_s);
	}
	engi_fe_solid_result_release(&r);
	engi_fe_solid_release(&m);
	return 0;
}

static const char frame_help[] =
    "usage: engisweep kernel frame [options] MODEL.json\n"
    "\n"
    "Solves a structural model (tasks/SCHEMA-structural.md) by the direct\n"
    "stiffness method: every load case and combination. Prints the degrees of\n"
    "freedom and, per case, the largest displacement, the reaction sums and\n"
    "the equilibrium residual; then the solver and the times. A StructureClaw\n"
    "model is read too, in engisweep's axes and units: what was converted is\n"
    "printed (normalised).\n"
    "\n"
    "options:\n"
    "      --json           one JSON object instead of text\n"
    "      --write FILE     also write the model as read (engisweep's axes and\n"
    "                       units) to FILE as structural/1: a StructureClaw model\n"
    "                       in our format\n"
    "      --solver S       auto (default): conjugate gradients with a multigrid\n"
    "                       preconditioner for a large model whose factor is\n"
    "                       costly (3D lattices), else and whenever it does not\n"
    "                       converge the direct solver; direct: sparse Cholesky\n"
    "                       (what truth and the verifiers use); cg: conjugate\n"
    "                       gradients, the direct solver if they fail\n"
    "      --order O        direct solver ordering: auto (default), amd, metis\n"
    "                       or natural\n"
    "      --simplicial     simplicial instead of supernodal factorisation\n"
    "  -h, --help           this text\n";

static int kernel_frame(int argc, char **argv)
{
	struct fe_cli o;
	int rc = fe_parse(argc, argv, frame_help, 1, &o);
	if (rc)
		return rc > 0 ? 0 : EXIT_USAGE;
	struct engi_error err;
	engi_error_init(&err);
	struct engi_structural s;
	struct engi_frame_result r;
	engi_structural_init(&s);
	engi_frame_result_init(&r);
	double t0 = now_s();
	rc = engi_structural_read(o.path, &s, &err);
	double parse_s = now_s() - t0;
	if (rc == 0 && o.write) {
		char *text = NULL;
		rc = engi_structural_to_json(&s, &text, &err);
		if (rc == 0)
			rc = fs_write_file_atomic(o.write, text, strlen(text), &err);
		free(text);
	}
	if (rc == 0)
		rc = engi_frame_solve_with(&s.f, &o.so, o.solver, &r, &err);
	if (rc < 0) {
		cli_error(&err);
		engi_structural_release(&s);
		return rc == ENGI_ENOMEM || rc == ENGI_EIO ? EXIT_FAILED : EXIT_USAGE;
	}
	double total_s = now_s() - t0;
	if (o.json)
		printf("{\"model\": \"%s\", \"normalised\": \"%s\", \"nodes\": %zu, "
		       "\"elements\": %zu, \"dof\": %zu, \"free_dof\": %zu, "
		       "\"auto_restrained\": %zu, \"states\": [",
		       o.path, s.normalised, s.f.nnodes, s.f.nelems, r.ndof, r.neq, r.nauto);
	else {
		printf("model         %s\n", o.path);
		if (s.normalised[0])
			printf("normalised    %s\n", s.normalised);
		printf("model         %zu nodes, %zu elements, %zu dof (%zu free, %zu rotations "
		       "restrained automatically)\n",
		       s.f.nnodes, s.f.nelems, r.ndof, r.neq, r.nauto);
	}
	for (size_t k = 0; k < r.nstates; k++) {
		const struct engi_frame_state *st = &r.state[k];
		const char *name = k < s.f.ncases ? s.case_name[k] : s.combo_name[k - s.f.ncases];
		const char *what = k < s.f.ncases ? "case" : "combination";
		const double *R = st->reaction_sum;
		if (o.json)
			printf("%s\n  {\"%s\": \"%s\", \"max_u\": %.17g, \"max_u_node\": %lld, "
			       "\"reaction_sum\": [%.17g, %.17g, %.17g, %.17g, %.17g, %.17g], "
			       "\"equilibrium_rel\": %.3g}",
			       k ? "," : "", what, name, st->max_u, (long long)st->max_u_node, R[0],
			       R[1], R[2], R[3], R[4], R[5], st->equilibrium_rel);
		else
			printf("%-12s  %s: max |u| %.7e at node %lld; reactions F %.7e %.7e %.7e, "
			       "M %.7e %.7e %.7e; equilibrium %.1e\n",
			       what, name, st->max_u, (long long)st->max_u_node, R[0], R[1], R[2],
			       R[3], R[4], R[5], st->equilibrium_rel);
	}
	int cg = r.solver && !strcmp(r.solver, "cg");
	if (o.json) {
		printf("],\n \"solver\": \"%s\", \"method\": \"%s\", \"ordering\": \"%s\", ",
		       r.solver ? r.solver : "direct", r.method, r.ordering);
		if (cg || r.cg_failed)
			printf("\"iterations\": %d, \"residual\": %.3g, ", r.iterations,
			       r.residual);
		if (r.cg_failed)
			printf("\"cg_failed\": \"%s\", ", r.cg_failed);
		printf("\"parse_s\": %.6f, \"assemble_s\": %.6f, \"factor_s\": %.6f, "
		       "\"solve_s\": %.6f, \"total_s\": %.6f}\n",
		       parse_s, r.assemble_s, r.factor_s, r.solve_s, total_s);
	} else {
		if (cg)
			printf("solver        conjugate gradients, multigrid preconditioner: %d "
			       "iterations, relative residual %.2e\n",
			       r.iterations, r.residual);
		else if (r.cg_failed)
			printf("solver        direct (%s after %d iterations, residual %.2e)\n",
			       r.cg_failed, r.iterations, r.residual);
		printf("time          parse %.3f s, assemble %.3f s, %s %.3f s, solve %.3f s, "
		       "total %.3f s (%s, %s%s)\n",
		       parse_s, r.assemble_s, cg ? "setup" : "factor", r.factor_s, r.solve_s,
		       total_s, r.method, r.ordering, cg ? "" : " ordering");
	}
	engi_frame_result_release(&r);
	engi_structural_release(&s);
	return 0;
}

static const struct kernel_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} kernels[] = {
    {"fe", kernel_fe, "re-solve a CalculiX deck (C3D4/C3D10/C3D8, linear elastic)"},
    {"frame", kernel_frame, "solve a structural model (frames and trusses, 2D and 3D)"},
    {"mesh", kernel_geom_mesh, "mesh validity, topology, mass properties, self-intersections"},
    {"icp", kernel_geom_icp, "align two point clouds (ICP point-to-plane or point-to-point)"},
    {"distance", kernel_geom_distance, "Chamfer and Hausdorff distances between two clouds"},
    {"brep", kernel_brep, "B-rep properties of an FCStd, STEP or BREP shape (OpenCASCADE)"},
};

static void kernel_usage(FILE *f)
{
	fprintf(f, "usage: engisweep kernel <kernel> [options] FILE\n\nkernels:\n");
	for (size_t i = 0; i < sizeof(kernels) / sizeof(*kernels); i++)
		fprintf(f, "  %-9s %s\n", kernels[i].name, kernels[i].summary);
}

int cmd_kernel(int argc, char **argv)
{
	if (argc < 2) {
		kernel_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		kernel_usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(kernels) / sizeof(*kernels); i++)
		if (!strcmp(argv[1], kernels[i].name))
			return kernels[i].fn(argc - 1, argv + 1);
	cli_errorf("'%s' is not a kernel", argv[1]);
	kernel_usage(stderr);
	return EXIT_USAGE;
}
