/*
 * The spec parameters of Parametric CAD Bench as the validator 0.6.0 reads
 * them (verifiers/pcb_spec.c): each rule of its text and object forms on a
 * case built for it, quirks included (no word boundary after a unit, commas
 * splitting numbers, the value after the last "=", unbalanced parentheses).
 */
#include "engi/pcb_spec.h"

#include "engi/brep.h"

#include "../check.h"

#include <jansson.h>
#include <math.h>

static const struct engi_pcb_param *find(const struct engi_pcb_spec *s, const char *key, int kind)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->p[i].key, key) && s->p[i].kind == kind)
			return &s->p[i];
	return NULL;
}

static struct engi_pcb_spec text(const char *t)
{
	struct engi_pcb_spec s;
	memset(&s, 0, sizeof(s));
	struct engi_error e;
	engi_error_init(&e);
	CHECK(engi_pcb_spec_text(t, strlen(t), &s, &e) == 0);
	return s;
}

static void scalar_is(const struct engi_pcb_spec *s, const char *key, double v)
{
	const struct engi_pcb_param *p = find(s, key, ENGI_PCB_SCALAR);
	CHECK(p != NULL);
	if (p)
		CHECK_NEAR(p->value, v, 1e-12 * fmax(1, fabs(v)));
	else
		fprintf(stderr, "  no scalar '%s'\n", key);
}

static void test_text(void)
{
	struct engi_pcb_spec s = text("length = 40 mm, width = 2 cm\nangle = 30 deg");
	CHECK_INT(s.n, 3);
	scalar_is(&s, "length", 40);
	scalar_is(&s, "width", 20);
	scalar_is(&s, "angle", 30 * (M_PI / 180.0));
	engi_pcb_spec_release(&s);

	/* a comma splits a number; no word boundary after a unit */
	s = text("total = 1,000 mm\nspan = 20 meters\nsize = 10 inch");
	CHECK_INT(s.n, 3);
	scalar_is(&s, "total", 1);
	scalar_is(&s, "span", 20000);
	scalar_is(&s, "size", 10);
	engi_pcb_spec_release(&s);

	/* expressions are dropped; the value after the last "=" */
	s = text("ratio = 100/25, q = 5 * 2, d = z*m = 20*1 mm = 20 mm, w = 2*pi/20 rad");
	CHECK_INT(s.n, 1);
	scalar_is(&s, "d", 20);
	engi_pcb_spec_release(&s);

	/* bullets and bold headers */
	s = text("**Hdr**: a = 5\n- **Hdr**: b = 6\n* c = 7\n\xe2\x80\xa2 d = 8");
	CHECK_INT(s.n, 4);
	scalar_is(&s, "hdr", 5);
	scalar_is(&s, "b", 6);
	scalar_is(&s, "c", 7);
	scalar_is(&s, "d", 8);
	engi_pcb_spec_release(&s);

	/* counts: a count token, integral, no unit */
	s = text("hole_count = 4, rib_count = 4 mm, pin_num = 2.5, teeth = 20, rows = 3.0");
	CHECK(find(&s, "hole_count", ENGI_PCB_COUNT) &&
	      find(&s, "hole_count", ENGI_PCB_COUNT)->count == 4);
	scalar_is(&s, "rib_count", 4);
	scalar_is(&s, "pin_num", 2.5);
	CHECK(find(&s, "teeth", ENGI_PCB_COUNT) && find(&s, "teeth", ENGI_PCB_COUNT)->count == 20);
	CHECK(find(&s, "rows", ENGI_PCB_COUNT) && find(&s, "rows", ENGI_PCB_COUNT)->count == 3);
	engi_pcb_spec_release(&s);

	/* vectors: the outer unit (lower case only) for unitless components */
	s = text("center = (10, 20, 5) mm\noffset = (1 cm, 2)\np = (1, 2) cm\nq = (1, 2) CM\n"
		 "bad = (1, x)\nopen = (1, 2");
	const struct engi_pcb_param *v = find(&s, "center", ENGI_PCB_VECTOR);
	CHECK(v && v->nvec == 3 && v->vec[0] == 10 && v->vec[1] == 20 && v->vec[2] == 5);
	v = find(&s, "offset", ENGI_PCB_VECTOR);
	CHECK(v && v->nvec == 2 && v->vec[0] == 10 && v->vec[1] == 2);
	v = find(&s, "p", ENGI_PCB_VECTOR);
	CHECK(v && v->nvec == 2 && v->vec[0] == 10 && v->vec[1] == 20);
	v = find(&s, "q", ENGI_PCB_VECTOR);
	CHECK(v && v->nvec == 2 && v->vec[0] == 1 && v->vec[1] == 2);
	CHECK(!find(&s, "bad", ENGI_PCB_VECTOR) && !find(&s, "open", ENGI_PCB_VECTOR));
	CHECK_INT(s.n, 4);
	engi_pcb_spec_release(&s);

	/* strings; a number with a tail is the number */
	s = text("helix_hand = right, thread = M6, fit = 6H, note = two words");
	CHECK(find(&s, "helix_hand", ENGI_PCB_STRING) &&
	      !strcmp(find(&s, "helix_hand", ENGI_PCB_STRING)->text, "right"));
	CHECK(find(&s, "thread", ENGI_PCB_STRING) != NULL);
	scalar_is(&s, "fit", 6);
	CHECK_INT(s.n, 3);
	engi_pcb_spec_release(&s);

	/* U+2248, U+2212, the degree sign, exponents, case of keys and units */
	s = text("a \xe2\x89\x88 5, B = \xe2\x88\x92"
		 "3, Angle = 90 \xc2\xb0, t = 1e-3 M, "
		 "overall length = 5");
	scalar_is(&s, "a", 5);
	scalar_is(&s, "b", -3);
	scalar_is(&s, "angle", M_PI / 2);
	scalar_is(&s, "t", 1);
	scalar_is(&s, "overall", 5);
	engi_pcb_spec_release(&s);

	/* the later value of a key in its first place; a key in two kinds */
	s = text("a = 1, b = 2, a = 3, hole_count = 2, hole_count = 2 mm");
	CHECK_INT(s.n, 4);
	CHECK(!strcmp(s.p[0].key, "a") && s.p[0].value == 3 && !strcmp(s.p[1].key, "b"));
	CHECK(find(&s, "hole_count", ENGI_PCB_COUNT) && find(&s, "hole_count", ENGI_PCB_SCALAR));
	engi_pcb_spec_release(&s);

	/* every line break Python's splitlines knows; a ')' too many keeps
	 * commas from splitting */
	s = text("a = 1\rb = 2\r\nc = 3\xe2\x80\xa8"
		 "d = 4\x0b"
		 "e = 5\xc2\x85"
		 "f = 6\n"
		 "g = 1), h = 2");
	CHECK_INT(s.n, 7);
	scalar_is(&s, "f", 6);
	scalar_is(&s, "g", 2);
	CHECK(!find(&s, "h", ENGI_PCB_SCALAR));
	engi_pcb_spec_release(&s);
}

static void test_object(void)
{
	json_t *spec = json_loads(
	    "{\"name\": \"x\", \"key_parameters\": {\"Length\": {\"value\": 40, \"unit\": \"mm\"}, "
	    "\"angle\": {\"value\": 90, \"unit\": \"deg\"}, \"n_count\": 6, \"bare_angle\": 90, "
	    "\"group\": {\"inner_radius\": 3}, \"pos\": [1, 2, 3], \"label\": \"right\", "
	    "\"flag\": true, \"none\": null, \"k\": {\"value\": [1, 2], \"unit\": \"cm\"}, "
	    "\"bad key\": 1, \"expr\": \"100/25\"}}",
	    0, NULL);
	CHECK(spec != NULL);
	struct engi_pcb_spec s;
	struct engi_error e;
	engi_error_init(&e);
	CHECK(engi_pcb_spec_read(spec, &s, &e) == 0);
	scalar_is(&s, "length", 40);
	scalar_is(&s, "angle", M_PI / 2);
	scalar_is(&s, "bare_angle", 90); /* a bare number: no unit applied */
	scalar_is(&s, "inner_radius", 3);
	CHECK(find(&s, "n_count", ENGI_PCB_COUNT) &&
	      find(&s, "n_count", ENGI_PCB_COUNT)->count == 6);
	const struct engi_pcb_param *v = find(&s, "pos", ENGI_PCB_VECTOR);
	CHECK(v && v->nvec == 3 && v->vec[2] == 3);
	v = find(&s, "k", ENGI_PCB_VECTOR);
	CHECK(v && v->nvec == 2 && v->vec[0] == 10 && v->vec[1] == 20);
	CHECK(find(&s, "label", ENGI_PCB_STRING) != NULL);
	CHECK(!find(&s, "group", ENGI_PCB_SCALAR) && !find(&s, "flag", ENGI_PCB_SCALAR));
	CHECK_INT(s.n, 8);
	engi_pcb_spec_release(&s);
	json_decref(spec);

	/* not an object: the spec's fault, said */
	spec = json_string("key_parameters");
	CHECK(engi_pcb_spec_read(spec, &s, &e) == ENGI_EPARSE);
	json_decref(spec);
	/* text key parameters through the object reader */
	spec = json_pack("{s:s}", "key_parameters", "a = 1 mm, b = 2");
	CHECK(engi_pcb_spec_read(spec, &s, &e) == 0 && s.n == 2);
	engi_pcb_spec_release(&s);
	json_decref(spec);
}

static struct engi_brep_face cyl(int forward, double r, double ax, double ay, double az, double v0,
				 double v1, double cx)
{
	struct engi_brep_face f = {.type = ENGI_SURF_CYLINDER,
				   .radius = r,
				   .forward = forward,
				   .vmin = v0,
				   .vmax = v1,
				   .area = 1};
	f.axis[0] = ax, f.axis[1] = ay, f.axis[2] = az;
	f.centroid[0] = cx;
	return f;
}

static struct engi_brep_face pln(double nx, double ny, double nz, double px, double py, double pz,
				 double area)
{
	struct engi_brep_face f = {.type = ENGI_SURF_PLANE, .area = area};
	f.axis[0] = nx, f.axis[1] = ny, f.axis[2] = nz;
	f.loc[0] = px, f.loc[1] = py, f.loc[2] = pz;
	return f;
}

/* The bank's clusters, pairs and cones on faces built for each rule. */
static void test_bank(void)
{
	double t1 = tan(1 * M_PI / 180), t3 = tan(3 * M_PI / 180);
	struct engi_brep_face f[] = {
	    cyl(0, 1.5, 0, 0, 1, 0, 3, 10),    /* cluster 0 */
	    cyl(0, 1.5075, 0, 0, 1, 0, 2, 11), /* 0.5 % larger: cluster 0 */
	    cyl(0, 1.54, 0, 0, 1, 0, 3, 12),   /* 2.6 %: cluster 1 */
	    cyl(0, 1.5, t1, 0, 1, 0, 4, 13),   /* 1 degree: cluster 0 */
	    cyl(0, 1.5, t3, 0, 1, 0, 3, 14),   /* 3 degrees: cluster 2 */
	    cyl(1, 1.5, 0, 0, 1, 0, 3, 15),    /* convex: cluster 3 */
	    cyl(0, 1.5, 0, 0, -1, -5, 0, 16),  /* the other sense: cluster 0 */
	    pln(1, 0, 0, 0, 0, 0, 15),		pln(-1, 0, 0, 10, 1, 1, 15),
	    pln(0, 1, 0, 0, 0, 0, 30),		pln(0, -1, 0, 0, 5, 0, 30),
	    pln(0, 0, -1, 0, 0, 0, 50),		pln(0, 0, 1, 0, 0, 3, 50),
	    pln(0, 0, 1, 7, 7, 3, 5),		/* coplanar with the top: no pair; its pair with the
						   bottom repeats (3, z): dropped */
	    pln(0.0548, 0, 0.9985, 0, 0, 9, 1), /* |n . z| 0.9985 < 0.999: no pair with z */
	};
	struct engi_brep_face cone = {.type = ENGI_SURF_CONE,
				      .radius = 2,
				      .semi_angle = 30 * M_PI / 180,
				      .vmin = -1,
				      .vmax = 1};
	cone.axis[2] = 1;
	size_t n = sizeof(f) / sizeof(*f);
	struct engi_brep_face all[32];
	memcpy(all, f, sizeof(f));
	all[n++] = cone;
	struct engi_brep_report rep;
	memset(&rep, 0, sizeof(rep));
	rep.props.face = all;
	rep.props.faces = n;
	rep.props.volume = 150.0000000004;
	struct engi_pcb_bank b;
	struct engi_error e;
	engi_error_init(&e);
	CHECK(engi_pcb_bank_build(&rep, &b, &e) == 0);
	CHECK_INT(b.nclusters, 4);
	if (b.nclusters == 4) {
		CHECK_INT(b.cluster[0].count, 4);
		CHECK(b.cluster[0].radius == 1.5 && b.cluster[0].axial_extent == 5);
		CHECK(b.cluster[0].centroids[3][0] == 16);
		CHECK(b.cluster[1].radius == 1.54 && b.cluster[1].count == 1);
		CHECK(b.cluster[2].count == 1 && b.cluster[3].convex == 1 && !b.cluster[0].convex);
	}
	/* x: 10, y: 5, z: 3 (and the tilted plane pairs with nothing but the
	 * z planes' 0.9985 is under 0.999) */
	CHECK_INT(b.npairs, 3);
	if (b.npairs == 3) {
		CHECK(b.pair[0].offset == 3 && b.pair[1].offset == 5 && b.pair[2].offset == 10);
		CHECK(b.pair[0].min_area == 50 && b.pair[2].normal[0] == 1);
	}
	CHECK_INT(b.ncones, 1);
	if (b.ncones == 1) {
		CHECK_NEAR(b.cone[0].radius_min, 2 - tan(30 * M_PI / 180), 1e-9);
		CHECK_NEAR(b.cone[0].radius_max, 2 + tan(30 * M_PI / 180), 1e-9);
		CHECK(b.cone[0].axial_extent == 2);
	}
	CHECK(b.volume == 150); /* rounded to 9 decimals */
	engi_pcb_bank_release(&b);
	/* Python's round: the exact binary value decides */
	CHECK(engi_pcb_round(2.675, 2) == 2.67);
	CHECK(engi_pcb_round(0.1 + 0.2, 9) == 0.3);
	CHECK(engi_pcb_round(1e-10, 9) == 0);
}

/* A Document.xml in FreeCAD's format, written here: a Pad, a sketch in the
 * 0.19+ form (construction in geometryModeFlags), a sketch in the older
 * form (<Construction value>), an origin, and ObjectData in another order
 * than Objects. */
static const char tree_xml[] =
    "<?xml version='1.0' encoding='utf-8'?>\n<Document SchemaVersion=\"4\">\n"
    "<Objects Count=\"4\">\n"
    "<Object type=\"App::Origin\" name=\"Origin\"/>\n"
    "<Object type=\"PartDesign::Pad\" name=\"Pad\"/>\n"
    "<Object type=\"Sketcher::SketchObject\" name=\"New\"/>\n"
    "<Object type=\"Sketcher::SketchObject\" name=\"Old\"/>\n"
    "</Objects>\n<ObjectData Count=\"4\">\n"
    "<Object name=\"New\"><Properties Count=\"2\">\n"
    "<Property name=\"Geometry\" type=\"Part::PropertyGeometryList\"><GeometryList count=\"4\">\n"
    "<Geometry type=\"Part::GeomLineSegment\"><GeoExtensions count=\"1\"><GeoExtension "
    "type=\"Sketcher::SketchGeometryExtension\" "
    "geometryModeFlags=\"00000000000000000000000000000000\"/>"
    "</GeoExtensions><LineSegment StartX=\"0\" StartY=\"0\" StartZ=\"0\" EndX=\"3\" EndY=\"4\" "
    "EndZ=\"0\"/></Geometry>\n"
    "<Geometry type=\"Part::GeomCircle\"><GeoExtensions count=\"1\"><GeoExtension "
    "type=\"Sketcher::SketchGeometryExtension\" "
    "geometryModeFlags=\"00000000000000000000000000000010\"/>"
    "</GeoExtensions><Circle CenterX=\"1\" CenterY=\"2\" CenterZ=\"0\" Radius=\"9\"/></Geometry>\n"
    "<Geometry type=\"Part::GeomPoint\"><Point X=\"0\" Y=\"0\" Z=\"0\"/></Geometry>\n"
    "<Geometry type=\"Part::GeomArcOfCircle\"><ArcOfCircle CenterX=\"5\" CenterY=\"6\" "
    "CenterZ=\"0\" Radius=\"2.25\" StartAngle=\"0\" EndAngle=\"1\"/></Geometry>\n"
    "</GeometryList></Property>\n"
    "<Property name=\"Constraints\" type=\"Sketcher::PropertyConstraintList\"><ConstraintList "
    "count=\"3\"><Constrain Name=\"\" Type=\"6\" Value=\"5\"/><Constrain Name=\"\" Type=\"9\" "
    "Value=\"0.5\"/><Constrain Name=\"\" Type=\"9\" Value=\"1.25\"/></ConstraintList></Property>\n"
    "</Properties></Object>\n"
    "<Object name=\"Pad\"><Properties Count=\"4\">\n"
    "<Property name=\"Length\" type=\"App::PropertyLength\"><Float value=\"12.5\"/></Property>\n"
    "<Property name=\"TaperAngle\" type=\"App::PropertyAngle\"><Float value=\"90\"/></Property>\n"
    "<Property name=\"Offset\" type=\"App::PropertyLength\"><Float value=\"7\"/></Property>\n"
    "<Property name=\"Occurrences\" type=\"App::PropertyIntegerConstraint\"><Integer "
    "value=\"3\"/></Property>\n"
    "</Properties></Object>\n"
    "<Object name=\"Old\"><Properties Count=\"1\">\n"
    "<Property name=\"Geometry\" type=\"Part::PropertyGeometryList\"><GeometryList count=\"2\">\n"
    "<Geometry type=\"Part::GeomLineSegment\"><LineSegment StartX=\"0\" StartY=\"0\" "
    "StartZ=\"0\" EndX=\"1\" EndY=\"0\" EndZ=\"0\"/><Construction value=\"1\"/></Geometry>\n"
    "<Geometry type=\"Part::GeomLineSegment\"><LineSegment StartX=\"0\" StartY=\"0\" "
    "StartZ=\"0\" EndX=\"0\" EndY=\"2\" EndZ=\"0\"/><Construction value=\"0\"/></Geometry>\n"
    "</GeometryList></Property>\n"
    "</Properties></Object>\n"
    "<Object name=\"Origin\"><Properties Count=\"1\"><Property name=\"Length\" "
    "type=\"App::PropertyLength\"><Float value=\"99\"/></Property></Properties></Object>\n"
    "</ObjectData>\n</Document>\n";

static const struct engi_pcb_prop *prop(const struct engi_pcb_bank *b, const char *feature,
					int kind, const char *name, long index)
{
	for (size_t f = 0; f < b->nfeatures; f++) {
		if (strcmp(b->feature[f].name, feature))
			continue;
		for (size_t i = 0; i < b->feature[f].nprops; i++) {
			const struct engi_pcb_prop *p = &b->prop[b->feature[f].prop + i];
			if (p->kind == kind && (name ? !strcmp(p->name, name) : p->index == index))
				return p;
		}
	}
	return NULL;
}

static void test_tree(void)
{
	struct engi_error e;
	engi_error_init(&e);
	struct engi_fc_doc doc;
	CHECK_INT(engi_fc_doc_parse(tree_xml, strlen(tree_xml), "'t'", &doc, &e), 0);
	struct engi_pcb_bank b;
	memset(&b, 0, sizeof(b));
	CHECK_INT(engi_pcb_bank_tree(&doc, &b, &e), 0);
	/* the origin is no feature; the others in the order of Objects */
	CHECK_INT(b.nfeatures, 3);
	if (b.nfeatures == 3) {
		CHECK_STR(b.feature[0].name, "Pad");
		CHECK_STR(b.feature[1].name, "New");
		CHECK(b.feature[1].sketch && !b.feature[0].sketch);
	}
	const struct engi_pcb_prop *p = prop(&b, "Pad", ENGI_PCB_P_NAMED, "Length", 0);
	CHECK(p && p->value == 12.5);
	p = prop(&b, "Pad", ENGI_PCB_P_NAMED, "TaperAngle", 0);
	CHECK(p && p->value == engi_pcb_round(M_PI / 2, 10));	       /* degrees to radians */
	CHECK(prop(&b, "Pad", ENGI_PCB_P_NAMED, "Offset", 0) == NULL); /* not a listed name */
	p = prop(&b, "Pad", ENGI_PCB_P_NAMED, "Occurrences", 0);
	CHECK(p && p->value == 3);
	/* the construction circle is left out; indices are the list's */
	CHECK(prop(&b, "New", ENGI_PCB_P_CIRCLE, NULL, 1) == NULL);
	p = prop(&b, "New", ENGI_PCB_P_LINE, NULL, 0);
	CHECK(p && p->value == 5);
	p = prop(&b, "New", ENGI_PCB_P_ARC, NULL, 3);
	CHECK(p && p->value == 2.25 && p->centre[0] == 5 && p->centre[1] == 6);
	p = prop(&b, "New", ENGI_PCB_P_ANGLE, NULL, 2);
	CHECK(p && p->value == 1.25);
	CHECK(prop(&b, "New", ENGI_PCB_P_ANGLE, NULL, 0) == NULL); /* a distance */
	CHECK(prop(&b, "Old", ENGI_PCB_P_LINE, NULL, 0) == NULL);  /* the old construction flag */
	p = prop(&b, "Old", ENGI_PCB_P_LINE, NULL, 1);
	CHECK(p && p->value == 2);
	CHECK_INT(b.nline_angles, 0); /* one line per sketch: no pair */
	engi_pcb_bank_release(&b);
	engi_fc_doc_release(&doc);
}

/* A bank by hand: its checks' routing and candidates. */
static int state_of(const char *spec_text, const struct engi_pcb_bank *b, size_t i, double *rel)
{
	struct engi_pcb_spec s = text(spec_text);
	struct engi_pcb_spec_result r;
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(engi_pcb_spec_check(&s, b, &r, &e), 0);
	int st = i < r.n ? r.f[i].state : -1;
	if (rel && i < r.n)
		*rel = r.f[i].rel;
	engi_pcb_spec_result_release(&r);
	engi_pcb_spec_release(&s);
	return st;
}

static void test_checks(void)
{
	struct engi_pcb_bank b;
	memset(&b, 0, sizeof(b));
	double cents[4][3] = {{0, 0, 0}, {10, 0, 0}, {0, 5, 0}, {10, 5, 0}};
	struct engi_pcb_cluster cl[2] = {
	    {.convex = 0,
	     .count = 4,
	     .radius = 1.5,
	     .axis = {0, 0, 1},
	     .axial_extent = 8,
	     .centroids = cents},
	    {.convex = 1,
	     .count = 1,
	     .radius = 4,
	     .axis = {0, 0, 1},
	     .axial_extent = 8,
	     .centroids = cents},
	};
	b.cluster = cl;
	b.nclusters = 2;
	struct engi_pcb_plane_pair pp = {.normal = {0, 0, 1}, .offset = 8, .min_area = 1};
	b.pair = &pp;
	b.npairs = 1;
	b.has_aabb = 1;
	double sz[3] = {8, 20, 30};
	memcpy(b.aabb_sorted, sz, sizeof(sz));
	memcpy(b.obb_sorted, sz, sizeof(sz));
	b.aabb_max[0] = 30, b.aabb_max[1] = 20, b.aabb_max[2] = 8;
	b.volume = 4000;
	struct engi_pcb_grid g = {
	    .count = 4, .rows = 2, .cols = 2, .spacing_rows = 5, .spacing_cols = 10};
	b.grid = &g;
	b.ngrids = 1;
	double rel = -1;
	CHECK_INT(state_of("hole_diameter = 3 mm", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	CHECK_INT(state_of("hole_diameter = 3.1 mm", &b, 0, &rel), ENGI_PCB_INCONSISTENT);
	CHECK_NEAR(rel, 0.1 / 3.1, 1e-12); /* of the larger */
	CHECK_INT(state_of("pitch_diameter = 8 mm", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	CHECK_INT(state_of("rows_spacing = 5 mm", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	/* taper_length routes to the angle check: no angle, not found */
	CHECK_INT(state_of("taper_length = 8 mm", &b, 0, NULL), ENGI_PCB_NOT_FOUND);
	CHECK_INT(state_of("teeth_height = 8 mm", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	/* a scalar to the vector check: not found */
	CHECK_INT(state_of("center_x = 5 mm", &b, 0, NULL), ENGI_PCB_NOT_FOUND);
	/* radial wall: the boss r 4 and the hole r 1.5 are coaxial (centroid 0) */
	CHECK_INT(state_of("wall_thickness = 2.5 mm", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	CHECK_INT(state_of("hole_count = 4", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	CHECK_INT(state_of("hole_count = 5", &b, 0, &rel), ENGI_PCB_INCONSISTENT);
	CHECK_NEAR(rel, 1.0 / 5, 1e-12);
	CHECK_INT(state_of("hole_rows = 2", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	CHECK_INT(state_of("rib_count = 4", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	CHECK_INT(state_of("bolt_count = 4", &b, 0, NULL), ENGI_PCB_NOT_FOUND);
	CHECK_INT(state_of("box_corner = (30, 20, 8)", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	CHECK_INT(state_of("volume = 4000", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	CHECK_INT(state_of("clearance = 8 mm", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	CHECK_INT(state_of("offset_x = 10 mm", &b, 0, NULL), ENGI_PCB_CONSISTENT);
	CHECK_INT(state_of("offset_y = 10 mm", &b, 0, NULL), ENGI_PCB_INCONSISTENT);
	/* a vector where one number is wanted: the validator raises */
	struct engi_pcb_spec s = text("hole_diameter = (3, 4) mm");
	struct engi_pcb_spec_result r;
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(engi_pcb_spec_check(&s, &b, &r, &e), 0);
	CHECK(r.raises != NULL);
	engi_pcb_spec_result_release(&r);
	/* nothing measured: every parameter not found */
	CHECK_INT(engi_pcb_spec_check(&s, NULL, &r, &e), 0);
	CHECK(r.not_found == 1 && r.raises == NULL);
	engi_pcb_spec_result_release(&r);
	engi_pcb_spec_release(&s);
	/* the failure budget */
	CHECK(engi_pcb_spec_score(4, 1, 10) == 0.75);
	CHECK(engi_pcb_spec_score(25, 3, 10) == 1 - 0.3);
	CHECK(engi_pcb_spec_score(25, 12, 10) == 0);
	CHECK(engi_pcb_spec_score(0, 0, 10) == 0);
}

int main(void)
{
	test_text();
	test_object();
	test_bank();
	test_tree();
	test_checks();
	return check_exit();
}
