/*
 * engisweep kernel brep FILE - the B-rep kernel by hand: exact properties
 * of the shape of a FreeCAD document, a STEP or a BREP file, and the
 * document facts of an FCStd (docs/verifiers.md, "kernel brep").
 */
#include "cli.h"

#include "engi/brep.h"
#include "engi/error.h"
#include "engi/cad_geometry.h"
#include "engi/pcb_spec.h"
#include "fsutil.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char brep_help[] =
    "usage: engisweep kernel brep [options] FILE\n"
    "\n"
    "Reads a FreeCAD document (.FCStd), a STEP file (.step, .stp) or a BREP\n"
    "shape (.brep, .brp, .bin) with OpenCASCADE and prints the shape's exact\n"
    "properties: volume, area, centroid, matrix of inertia about the centroid,\n"
    "area per surface type, each face's area and centroid, solid, shell,\n"
    "face, edge and vertex counts and the optimal oriented box. Of a document\n"
    "it measures the first PartDesign::Body with a positive volume and prints\n"
    "the document facts: the bodies, their Tips and solids, and the measured\n"
    "Body's features with those outside the native PartDesign allow-list.\n"
    "\n"
    "options:\n"
    "      --json           one JSON object instead of text\n"
    "      --no-obb         leave the oriented box out (\"obb\": null); its mesh,\n"
    "                       as fine as the validator's, takes most of the time\n"
    "      --spec FILE      check a Parametric CAD Bench spec.json against the\n"
    "                       shape as the validator 0.6.0 does: each key parameter\n"
    "                       consistent, inconsistent or not found, and the score\n"
    "                       with its failure budget of 10 (docs/verifiers.md)\n"
    "      --timeout S      stop OpenCASCADE after S seconds (default 300; it runs\n"
    "                       in a child process, which a hostile shape may hang);\n"
    "                       0: in this process, no limit\n"
    "  -h, --help           this text\n";

static json_t *vec3(const double *v)
{
	return json_pack("[fff]", v[0], v[1], v[2]);
}

static const char *class_name(int cls)
{
	switch (cls) {
	case ENGI_FC_NATIVE:
		return "native";
	case ENGI_FC_CONTAINER:
		return "container";
	case ENGI_FC_SHAPELESS:
		return "outside_shapeless";
	default:
		return "outside";
	}
}

#define LINE_ANGLES_PRINTED 1000

/* The feature tree, grids, circular patterns and line angles of a bank,
 * with the validator's property names. */
static json_t *tree_json(const struct engi_pcb_bank *b)
{
	json_t *fl = json_array();
	for (size_t i = 0; i < b->nfeatures; i++) {
		const struct engi_pcb_feature *f = &b->feature[i];
		json_t *props = json_object();
		for (size_t k = 0; k < f->nprops; k++) {
			const struct engi_pcb_prop *p = &b->prop[f->prop + k];
			char n[64];
			switch (p->kind) {
			case ENGI_PCB_P_NAMED:
				snprintf(n, sizeof(n), "%s", p->name);
				break;
			case ENGI_PCB_P_LINE:
				snprintf(n, sizeof(n), "Geometry[%ld].LineLength", p->index);
				break;
			case ENGI_PCB_P_ANGLE:
				snprintf(n, sizeof(n), "Constraint[%ld].Angle", p->index);
				break;
			default:
				snprintf(n, sizeof(n), "Geometry[%ld].CircleRadius", p->index);
				if (p->kind == ENGI_PCB_P_ARC) {
					char a[64];
					snprintf(a, sizeof(a), "Geometry[%ld].ArcRadius", p->index);
					json_object_set_new(props, a, json_real(p->value));
				}
				break;
			}
			json_object_set_new(props, n, json_real(p->value));
		}
		json_array_append_new(fl, json_pack("{ss, sb, sI, so}", "name", f->name, "sketch",
						    f->sketch, "lines", (json_int_t)f->nlines,
						    "properties", props));
	}
	json_t *gl = json_array(), *cl = json_array(), *la = json_array();
	for (size_t i = 0; i < b->ngrids; i++) {
		const struct engi_pcb_grid *g = &b->grid[i];
		json_array_append_new(
		    gl, json_pack("{sI, sI, sI, sf, sf, so}", "count", (json_int_t)g->count, "rows",
				  (json_int_t)g->rows, "cols", (json_int_t)g->cols, "spacing_rows",
				  g->spacing_rows, "spacing_cols", g->spacing_cols, "origin",
				  vec3(g->origin)));
	}
	for (size_t i = 0; i < b->ncirculars; i++) {
		const struct engi_pcb_circular *c = &b->circular[i];
		json_array_append_new(cl, json_pack("{sI, sf, so, so, sf}", "count",
						    (json_int_t)c->count, "radius", c->radius,
						    "centre", vec3(c->centre), "axis",
						    vec3(c->axis), "angular_pitch", c->pitch));
	}
	/* a sketch of thousands of lines has millions: the first few printed */
	for (size_t i = 0; i < b->nline_angles && i < LINE_ANGLES_PRINTED; i++)
		json_array_append_new(la, json_real(b->line_angle[i]));
	return json_pack("{so, so, so, so, sI, sb}", "tree", fl, "grids", gl, "circular_patterns",
			 cl, "line_angles", la, "line_angle_count", (json_int_t)b->nline_angles,
			 "line_angles_capped", b->line_angles_capped);
}

static const char *state_name(int st)
{
	return st == ENGI_PCB_CONSISTENT     ? "consistent"
	       : st == ENGI_PCB_INCONSISTENT ? "inconsistent"
					     : "not_found";
}

/* The spec checked against bank (NULL: nothing measured). */
static json_t *spec_json(const struct engi_pcb_spec *spec, const struct engi_pcb_bank *bank)
{
	struct engi_pcb_spec_result res;
	struct engi_error e;
	engi_error_init(&e);
	if (engi_pcb_spec_check(spec, bank, &res, &e) < 0)
		return json_pack("{ss}", "error", e.msg);
	json_t *fl = json_array();
	for (size_t i = 0; i < res.n; i++) {
		const struct engi_pcb_finding *f = &res.f[i];
		json_t *o = json_pack("{ss, ss, ss}", "key", f->param->key, "check",
				      engi_pcb_check_name(f->check), "state", state_name(f->state));
		if (f->has_measured) {
			int nv = f->check == ENGI_PCB_C_VECTOR ? f->param->nvec : 1;
			json_t *m = nv == 1 ? json_real(f->measured[0]) : json_array();
			for (int k = 0; nv > 1 && k < nv && k < 3; k++)
				json_array_append_new(m, json_real(f->measured[k]));
			json_object_set_new(o, "measured", m);
		}
		if (f->state != ENGI_PCB_NOT_FOUND)
			json_object_set_new(o, "rel_diff", json_real(f->rel));
		if (f->reason)
			json_object_set_new(o, "reason", json_string(f->reason));
		json_array_append_new(fl, o);
	}
	size_t failures = res.inconsistent + res.not_found;
	json_t *out =
	    json_pack("{sI, sI, sI, sI, sf, so}", "total", (json_int_t)res.n, "consistent",
		      (json_int_t)res.consistent, "inconsistent", (json_int_t)res.inconsistent,
		      "not_found", (json_int_t)res.not_found, "score",
		      engi_pcb_spec_score(res.n, failures, ENGI_PCB_SPEC_BUDGET), "findings", fl);
	if (res.raises)
		json_object_set_new(out, "validator_raises", json_string(res.raises));
	engi_pcb_spec_result_release(&res);
	return out;
}

static json_t *report_json(const char *path, const struct engi_brep_report *r, double secs,
			   const struct engi_pcb_spec *spec)
{
	const struct engi_brep_props *p = &r->props;
	json_t *o = json_object();
	json_object_set_new(o, "file", json_string(path));
	json_object_set_new(o, "format", json_string(r->format));
	if (r->is_doc) {
		json_t *d = json_object();
		json_object_set_new(d, "objects", json_integer((json_int_t)r->objects));
		json_object_set_new(d, "body_count", json_integer((json_int_t)r->nbodies));
		json_object_set_new(d, "nonempty_bodies", json_integer((json_int_t)r->nonempty));
		json_t *bl = json_array();
		for (size_t i = 0; i < r->nbodies; i++) {
			const struct engi_brep_body *b = &r->body[i];
			json_array_append_new(
			    bl, json_pack("{ss, ss?, ss?, ss?, sf, sI, sI, sb, sb}", "name",
					  b->name, "tip", b->tip[0] ? b->tip : NULL, "tip_type",
					  b->tip_type[0] ? b->tip_type : NULL, "shape_file",
					  b->shape_file[0] ? b->shape_file : NULL, "volume",
					  b->volume, "solids", (json_int_t)b->solids, "faces",
					  (json_int_t)b->faces, "tip_agrees", b->tip_agrees,
					  "measured", (long)i == r->measured));
		}
		json_object_set_new(d, "bodies", bl);
		const struct engi_brep_body *m = r->measured >= 0 ? &r->body[r->measured] : NULL;
		json_object_set_new(d, "measured", m ? json_string(m->name) : json_null());
		json_object_set_new(d, "tip_set", json_boolean(m && m->tip[0]));
		json_object_set_new(d, "tip", m && m->tip[0] ? json_string(m->tip) : json_null());
		json_object_set_new(d, "tip_solids", json_integer(m ? (json_int_t)m->solids : 0));
		json_t *fl = json_array(), *out = json_array();
		for (size_t i = 0; i < r->nfeatures; i++) {
			const struct engi_brep_feature *f = &r->feature[i];
			json_array_append_new(fl, json_pack("{ss, ss, ss}", "name", f->name, "type",
							    f->type, "class", class_name(f->cls)));
			if (f->cls == ENGI_FC_OUTSIDE)
				json_array_append_new(out, json_string(f->name));
		}
		json_object_set_new(d, "features", fl);
		json_object_set_new(d, "outside_allow_list", out);
		json_object_set_new(o, "document", d);
	}
	json_object_set_new(o, "solids", json_integer((json_int_t)p->solids));
	json_object_set_new(o, "shells", json_integer((json_int_t)p->shells));
	json_object_set_new(o, "faces", json_integer((json_int_t)p->faces));
	json_object_set_new(o, "edges", json_integer((json_int_t)p->edges));
	json_object_set_new(o, "vertices", json_integer((json_int_t)p->vertices));
	json_object_set_new(o, "volume", json_real(p->volume));
	json_object_set_new(o, "area", json_real(p->area));
	json_object_set_new(o, "centroid", vec3(p->centroid));
	json_object_set_new(
	    o, "inertia",
	    json_pack("[ooo]", vec3(p->inertia[0]), vec3(p->inertia[1]), vec3(p->inertia[2])));
	json_t *bt = json_object();
	for (int t = 0; t < ENGI_SURF_COUNT; t++)
		if (p->area_by_type[t] != 0)
			json_object_set_new(bt, engi_brep_surface_name(t),
					    json_real(p->area_by_type[t]));
	json_object_set_new(o, "area_by_type", bt);
	json_object_set_new(o, "face_centre", vec3(p->face_centre));
	json_t *fa = json_array();
	for (size_t i = 0; i < p->faces; i++)
		json_array_append_new(
		    fa, json_pack("{ss, sf, so}", "type", engi_brep_surface_name(p->face[i].type),
				  "area", p->face[i].area, "centroid", vec3(p->face[i].centroid)));
	json_object_set_new(o, "face_list", fa);
	if (p->obb_ok)
		json_object_set_new(o, "obb",
				    json_pack("{so, s[ooo], so, so}", "centre", vec3(p->obb_centre),
					      "axes", vec3(p->obb_axes[0]), vec3(p->obb_axes[1]),
					      vec3(p->obb_axes[2]), "half_sizes", vec3(p->obb_half),
					      "sorted_sizes", vec3(p->obb_sorted)));
	else
		json_object_set_new(o, "obb", json_null());
	/* what the validator's spec checks match parameters to: of a
	 * document, with its feature tree */
	struct engi_pcb_bank bank;
	struct engi_error be;
	engi_error_init(&be);
	int found = 0;
	if (engi_pcb_bank_of(r, path, &bank, &found, &be) == 0 &&
	    (found || engi_pcb_bank_build(r, &bank, &be) == 0)) {
		json_t *cl = json_array(), *pp = json_array(), *co = json_array();
		for (size_t i = 0; i < bank.nclusters; i++) {
			const struct engi_pcb_cluster *c = &bank.cluster[i];
			json_array_append_new(
			    cl, json_pack("{sb, sI, sf, so, sf}", "convex", c->convex, "count",
					  (json_int_t)c->count, "radius", c->radius, "axis",
					  vec3(c->axis), "axial_extent", c->axial_extent));
		}
		for (size_t i = 0; i < bank.npairs; i++)
			json_array_append_new(pp, json_pack("{sf, so, sf}", "offset",
							    bank.pair[i].offset, "normal",
							    vec3(bank.pair[i].normal), "min_area",
							    bank.pair[i].min_area));
		for (size_t i = 0; i < bank.ncones; i++)
			json_array_append_new(co, json_pack("{sf, sf, sf}", "radius_min",
							    bank.cone[i].radius_min, "radius_max",
							    bank.cone[i].radius_max, "axial_extent",
							    bank.cone[i].axial_extent));
		json_t *sb = json_pack("{so, so, sb, so, so}", "cylinder_clusters", cl,
				       "plane_pairs", pp, "plane_pairs_capped", bank.pairs_capped,
				       "cones", co, "obb_sorted", vec3(bank.obb_sorted));
		if (bank.has_aabb) {
			json_object_set_new(sb, "aabb_sorted", vec3(bank.aabb_sorted));
			json_object_set_new(sb, "aabb_min_corner", vec3(bank.aabb_min));
			json_object_set_new(sb, "aabb_max_corner", vec3(bank.aabb_max));
		}
		json_object_set_new(sb, "features", tree_json(&bank));
		json_object_set_new(o, "spec_bank", sb);
		if (spec)
			json_object_set_new(o, "spec", spec_json(spec, found ? &bank : NULL));
		engi_pcb_bank_release(&bank);
	}
	json_object_set_new(o, "seconds", json_real(secs));
	return o;
}

static void report_text(const char *path, const struct engi_brep_report *r, double secs)
{
	const struct engi_brep_props *p = &r->props;
	printf("file          %s (%s)\n", path, r->format);
	if (r->is_doc) {
		printf("document      %zu objects, %zu PartDesign bodies (%zu with volume)\n",
		       r->objects, r->nbodies, r->nonempty);
		for (size_t i = 0; i < r->nbodies; i++) {
			const struct engi_brep_body *b = &r->body[i];
			printf("  body        %s%s: tip %s (%s), %zu solids, volume %.10g%s\n",
			       b->name, (long)i == r->measured ? " [measured]" : "",
			       b->tip[0] ? b->tip : "(not set)", b->tip_type[0] ? b->tip_type : "-",
			       b->solids, b->volume,
			       b->tip_agrees ? "" : ", shape differs from tip");
		}
		printf("features     ");
		for (size_t i = 0; i < r->nfeatures; i++)
			printf(" %s (%s%s)", r->feature[i].name, r->feature[i].type,
			       r->feature[i].cls == ENGI_FC_OUTSIDE ? ", outside the allow-list"
								    : "");
		printf("\n");
	}
	printf("topology      %zu solids, %zu shells, %zu faces, %zu edges, %zu vertices\n",
	       p->solids, p->shells, p->faces, p->edges, p->vertices);
	printf("volume        %.15g\n", p->volume);
	printf("area          %.15g\n", p->area);
	printf("centroid      %.15g %.15g %.15g\n", p->centroid[0], p->centroid[1], p->centroid[2]);
	for (int i = 0; i < 3; i++)
		printf("%s %.15g %.15g %.15g\n", i ? "             " : "inertia      ",
		       p->inertia[i][0], p->inertia[i][1], p->inertia[i][2]);
	printf("area by type ");
	for (int t = 0; t < ENGI_SURF_COUNT; t++)
		if (p->area_by_type[t] != 0)
			printf(" %s %.10g", engi_brep_surface_name(t), p->area_by_type[t]);
	printf("\n");
	if (p->obb_ok)
		printf("oriented box  %.10g x %.10g x %.10g\n", p->obb_sorted[0], p->obb_sorted[1],
		       p->obb_sorted[2]);
	else
		printf("oriented box  none\n");
	printf("time          %.3f s\n", secs);
}

/* The spec's findings as text. */
static void spec_text(const char *path, const struct engi_brep_report *r,
		      const struct engi_pcb_spec *spec)
{
	struct engi_pcb_bank bank;
	struct engi_error e;
	engi_error_init(&e);
	int found = 0;
	if (engi_pcb_bank_of(r, path, &bank, &found, &e) < 0) {
		cli_error(&e);
		return;
	}
	json_t *o = spec_json(spec, found ? &bank : NULL);
	if (found)
		engi_pcb_bank_release(&bank);
	json_t *err = json_object_get(o, "error");
	if (err) {
		cli_errorf("%s", json_string_value(err));
		json_decref(o);
		return;
	}
	printf("spec          %lld consistent, %lld inconsistent, %lld not found: score %.4g\n",
	       (long long)json_integer_value(json_object_get(o, "consistent")),
	       (long long)json_integer_value(json_object_get(o, "inconsistent")),
	       (long long)json_integer_value(json_object_get(o, "not_found")),
	       json_real_value(json_object_get(o, "score")));
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(o, "findings"), i, f)
	{
		json_t *m = json_object_get(f, "measured"), *why = json_object_get(f, "reason");
		printf("  %-28s %-10s %-13s", json_string_value(json_object_get(f, "key")),
		       json_string_value(json_object_get(f, "check")),
		       json_string_value(json_object_get(f, "state")));
		if (json_is_real(m))
			printf(" closest %.10g", json_real_value(m));
		if (why)
			printf(" (%s)", json_string_value(why));
		printf("\n");
	}
	json_t *raises = json_object_get(o, "validator_raises");
	if (raises)
		printf("  the validator 0.6.0 raises on this spec: %s\n",
		       json_string_value(raises));
	json_decref(o);
}

int kernel_brep(int argc, char **argv)
{
	enum { O_JSON = 256, O_NO_OBB, O_TIMEOUT, O_SPEC };
	static const struct option opts[] = {
	    {"json", no_argument, NULL, O_JSON},
	    {"no-obb", no_argument, NULL, O_NO_OBB},
	    {"timeout", required_argument, NULL, O_TIMEOUT},
	    {"spec", required_argument, NULL, O_SPEC},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int json = 0, c;
	const char *spec_path = NULL;
	struct engi_brep_opts bo = {.flags = 0, .timeout_s = 300};
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_JSON:
			json = 1;
			break;
		case O_NO_OBB:
			bo.flags |= ENGI_BREP_NO_OBB;
			break;
		case O_SPEC:
			spec_path = optarg;
			break;
		case O_TIMEOUT:
			if (cli_num("--timeout", optarg, 0, 1e6, &bo.timeout_s))
				return EXIT_USAGE;
			break;
		case 'h':
			fputs(brep_help, stdout);
			return 0;
		default:
			fputs(brep_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fputs(brep_help, stderr);
		return EXIT_USAGE;
	}
	const char *path = argv[optind];
	struct engi_error err;
	engi_error_init(&err);
	struct engi_pcb_spec spec = {0};
	if (spec_path && engi_pcb_spec_file(spec_path, NULL, &spec, &err) < 0) {
		cli_error(&err);
		return EXIT_USAGE;
	}
	struct engi_brep_report r;
	double t0 = clk_now_mono();
	int rc = engi_brep_analyze(path, &bo, &r, &err);
	double secs = clk_now_mono() - t0;
	if (rc < 0) {
		engi_pcb_spec_release(&spec);
		cli_error(&err);
		return rc == ENGI_ENOMEM || rc == ENGI_EIO || rc == ENGI_EENV ? EXIT_FAILED
									      : EXIT_USAGE;
	}
	if (json) {
		json_t *o = report_json(path, &r, secs, spec_path ? &spec : NULL);
		char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER | JSON_INDENT(1) |
						JSON_REAL_PRECISION(17))
			    : NULL;
		json_decref(o);
		if (!s) {
			engi_brep_report_release(&r);
			cli_errorf("'%s': out of memory writing the JSON report", path);
			return EXIT_FAILED;
		}
		puts(s);
		free(s);
	} else {
		report_text(path, &r, secs);
		if (spec_path)
			spec_text(path, &r, &spec);
	}
	engi_pcb_spec_release(&spec);
	engi_brep_report_release(&r);
	return 0;
}
