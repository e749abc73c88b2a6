/*
 * engisweep truth MODEL.json | DECK.inp - freezes the results of a
 * reference model. A structural model (for the "structural" verifier) is
 * solved twice: as written (AMD ordering, supernodal factorisation), and
 * with its nodes, elements and loads in reverse order and every member
 * reversed (METIS ordering, simplicial factorisation). A CalculiX deck is
 * solved as read (the kernel's default ordering, supernodal), and with its
 * nodes, elements, boundaries and pressures in reverse order (the other of
 * AMD and METIS, simplicial). The truth is written only when the two agree
 * and equilibrium holds. The solving and the deck's truth file are
 * verifiers/truth.c's (engi/truth.h); here are the options and the report.
 */
#include "cli.h"

#include "engi/error.h"
#include "engi/fe.h"
#include "engi/structural.h"
#include "engi/truth.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char truth_help[] =
    "usage: engisweep truth [options] MODEL.json | DECK.inp\n"
    "\n"
    "Solves a structural model twice (as written with AMD + supernodal\n"
    "Cholesky; reversed entity, load and member order with METIS + simplicial)\n"
    "and writes its displacements, reactions and member end forces for every\n"
    "load case and combination when both solves agree to 1e-10 and\n"
    "equilibrium holds to 1e-9. Exit 1 when they do not. A StructureClaw\n"
    "model is read too, in engisweep's axes and units (printed: normalised).\n"
    "\n"
    "With --id ID, MODEL.json is a list of {\"id\", \"model\"} entries\n"
    "(StructureClaw-Bench's fixtures/ground-truth-models.json) and entry ID's\n"
    "model is solved: the truth the verifier check responses_match makes of it\n"
    "(written to ID.truth.json in the current folder by default; the list's\n"
    "folder is never written).\n"
    "\n"
    "A CalculiX deck (.inp) is solved as read (default ordering, supernodal)\n"
    "and with nodes, elements, boundaries and pressures in reverse order (the\n"
    "other of AMD and METIS, simplicial). Both must agree on max |u| and on\n"
    "every nodal displacement to 1e-10 of max |u|, and reactions must balance\n"
    "the loads to 1e-9; then fe-solid-truth/1 is written: max |u| and its node,\n"
    "reaction and load sums per axis, dof counts and the displacement of every\n"
    "node (above 200000 nodes every k-th node by number, k = ceil(nodes /\n"
    "200000), and the node of max |u|).\n"
    "\n"
    "options:\n"
    "  -o, --out FILE       where to write (default: MODEL or DECK with\n"
    "                       .truth.json)\n"
    "      --id ID          the entry of a list of reference models to solve\n"
    "  -h, --help           this text\n";

/* What both kinds of truth print about their two solves. */
static void print_solves(const struct engi_truth_check *c, const char *reversed)
{
	printf("solve 1       %s, %s ordering, %.3f s\n", c->solve[0].method, c->solve[0].ordering,
	       c->solve[0].seconds);
	printf("solve 2       %s, %s ordering, %.3f s (reversed %s)\n", c->solve[1].method,
	       c->solve[1].ordering, c->solve[1].seconds, reversed);
}

static void print_check(const struct engi_truth_check *c)
{
	printf("agreement     %.3g (needs <= %g)\n", c->agreement_rel, ENGI_TRUTH_AGREEMENT_REL);
	printf("equilibrium   %.3g (needs <= %g)\n", c->equilibrium_rel,
	       ENGI_TRUTH_EQUILIBRIUM_REL);
}

/* EXIT_FAILED for our own failures, EXIT_USAGE for a model that is wrong. */
static int error_exit(const struct engi_error *err, int rc)
{
	cli_error(err);
	return rc == ENGI_ENOMEM || rc == ENGI_EIO ? EXIT_FAILED : EXIT_USAGE;
}

static int truth_deck(const char *deck, const char *out)
{
	struct engi_error err;
	struct engi_fe_solid m;
	struct engi_fe_solid_result r;
	struct engi_truth_check c;
	engi_error_init(&err);
	engi_fe_solid_init(&m);
	engi_fe_solid_result_init(&r);
	int exit_code = EXIT_FAILED;
	int rc = engi_inp_read(deck, &m, &err);
	if (rc == 0)
		rc = engi_fe_solid_truth_build(&m, &r, &c, &err);
	if (rc < 0) {
		exit_code = error_exit(&err, rc);
		goto done;
	}
	printf("truth         %s: %zu nodes, %zu elements, %zu dof (%zu free)\n", deck, m.nnodes,
	       m.nelems, c.ndof, c.neq);
	print_solves(&c, "nodes, elements, loads");
	printf("max |u|       %.17g at node %lld\n", r.max_u, (long long)r.max_u_node);
	print_check(&c);
	if (!engi_truth_accepted(&c)) {
		cli_errorf("'%s': the two solves disagree or equilibrium fails; no truth written",
			   deck);
		goto done;
	}
	const char *slash = strrchr(deck, '/');
	if (engi_fe_solid_truth_write(out, slash ? slash + 1 : deck, &m, &r, &c, &err) < 0) {
		cli_error(&err);
		goto done;
	}
	printf("wrote         %s\n", out);
	exit_code = 0;
done:
	engi_fe_solid_result_release(&r);
	engi_fe_solid_release(&m);
	return exit_code;
}

static int truth_model(const char *model, const char *id, const char *out)
{
	struct engi_error err;
	struct engi_structural s;
	struct engi_structural_truth t;
	struct engi_truth_check c;
	engi_error_init(&err);
	engi_structural_init(&s);
	engi_structural_truth_init(&t);
	int exit_code = EXIT_FAILED;
	char label[4096 + 256];
	snprintf(label, sizeof(label), "%s", model);
	int rc = id ? engi_structural_read_entry(model, model, id, &s, label, sizeof(label), &err)
		    : engi_structural_read(model, &s, &err);
	if (rc == 0)
		rc = engi_structural_truth_build(&s, &t, &c, &err);
	if (rc < 0) {
		exit_code = error_exit(&err, rc);
		goto done;
	}
	printf("truth         %s: %zu states, %zu dof (%zu free)\n", label, t.nstates, c.ndof,
	       c.neq);
	if (s.normalised[0])
		printf("normalised    %s\n", s.normalised);
	print_solves(&c, "entities, loads, members");
	print_check(&c);
	if (!engi_truth_accepted(&c)) {
		cli_errorf("%s: the two solves disagree or equilibrium fails; no truth written",
			   label);
		goto done;
	}
	const char *slash = strrchr(model, '/');
	if (engi_structural_truth_write(out, &t, id ? id : slash ? slash + 1 : model, &err) < 0) {
		cli_error(&err);
		goto done;
	}
	printf("wrote         %s\n", out);
	exit_code = 0;
done:
	engi_structural_truth_release(&t);
	engi_structural_release(&s);
	return exit_code;
}

int cmd_truth(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"out", required_argument, NULL, 'o'},
	    {"id", required_argument, NULL, 'I'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *out = NULL, *id = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'I':
			id = optarg;
			break;
		case 'h':
			fputs(truth_help, stdout);
			return 0;
		default:
			fputs(truth_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(truth_help, stderr);
		return EXIT_USAGE;
	}
	const char *model = argv[optind];
	char outbuf[4096];
	size_t mlen = strlen(model);
	int deck = mlen > 4 && !strcasecmp(model + mlen - 4, ".inp");
	if (id && deck) {
		cli_errorf("--id names an entry of a list of structural models, not of a deck");
		return EXIT_USAGE;
	}
	if (id && (!*id || strlen(id) > 200 || strchr(id, '/') || !strcmp(id, ".."))) {
		cli_errorf("--id '%s': expected an entry id without '/', at most 200 bytes", id);
		return EXIT_USAGE;
	}
	if (!out && id) {
		snprintf(outbuf, sizeof(outbuf), "%s.truth.json", id);
		out = outbuf;
	} else if (!out) {
		size_t n = mlen;
		if (n > 5 && !strcmp(model + n - 5, ".json"))
			n -= 5;
		else if (deck)
			n -= 4;
		snprintf(outbuf, sizeof(outbuf), "%.*s.truth.json", (int)n, model);
		out = outbuf;
	}
	return deck ? truth_deck(model, out) : truth_model(model, id, out);
}
