/*
 * fcdoc.c - the part of a FreeCAD Document.xml the B-rep kernel needs: the
 * objects (name, TypeId) and, per object, the Shape file, Tip, BaseFeature
 * and Group links, and the property values the spec side of pcb-v2 reads
 * (engi_fc_value). A bounded scanner of tags and attributes, not a general
 * XML parser: text content is skipped, entities in attribute values are
 * decoded, nesting is checked.
 */
#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/error.h"
#include "engi/slurp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPTH_MAX 64
#define TAG_MAX	  32
#define ATTR_MAX  16

enum kind { K_OTHER, K_OBJECTS, K_OBJECTDATA, K_OBJECT, K_PROPERTY };

struct attr {
	char name[TAG_MAX];
	char value[ENGI_FC_NAME_MAX];
	int too_long; /* the value did not fit */
};

struct scan {
	const char *s;
	size_t n, pos;
	const char *label;
	struct engi_error *err;
	struct engi_fc_doc *doc;
	size_t objs_cap, links_cap, vals_cap;
	long geom;	/* the value of the <Geometry> being read, -1 none */
	long nth;	/* geometries or constraints of this property so far */
	int value_prop; /* the property is one of engi_fc_value_names */
	char stack[DEPTH_MAX][TAG_MAX];
	enum kind kinds[DEPTH_MAX];
	int depth;
	long cur;	    /* ObjectData object being read, -1 outside */
	char prop[TAG_MAX]; /* property being read, "" outside */
	size_t next_hint;   /* ObjectData usually lists the objects in order */
};

static size_t line_of(const struct scan *sc, size_t pos)
{
	size_t line = 1;
	for (size_t i = 0; i < pos && i < sc->n; i++)
		line += sc->s[i] == '\n';
	return line;
}

#define SCAN_FAIL(sc, code, fmt, ...)                                                              \
	return engi_raise((sc)->err, (code), "%s line %zu: " fmt, (sc)->label,                     \
			  line_of((sc), (sc)->pos), __VA_ARGS__)

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == ':' || c == '-' || c == '.';
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Decodes the attribute value s[0, n) into a (bounded). */
static void decode(struct attr *a, const char *s, size_t n)
{
	size_t j = 0;
	a->too_long = 0;
	for (size_t i = 0; i < n;) {
		char c = s[i];
		size_t used = 1;
		if (c == '&') {
			static const struct {
				const char *ent;
				char c;
			} ents[] = {{"&amp;", '&'},
				    {"&lt;", '<'},
				    {"&gt;", '>'},
				    {"&quot;", '"'},
				    {"&apos;", '\''}};
			c = '?';
			for (size_t k = 0; k < sizeof(ents) / sizeof(*ents); k++) {
				size_t el = strlen(ents[k].ent);
				if (n - i >= el && !memcmp(s + i, ents[k].ent, el)) {
					c = ents[k].c;
					used = el;
					break;
				}
			}
			if (used == 1 && n - i > 2 && s[i + 1] == '#') {
				/* numeric reference: kept as '?' unless printable ASCII */
				size_t k = i + 2;
				int hex = k < n && (s[k] == 'x' || s[k] == 'X');
				k += hex;
				unsigned long v = 0;
				size_t digits = 0;
				while (k < n && digits < 8) {
					char d = s[k];
					int dv = d >= '0' && d <= '9'	       ? d - '0'
						 : hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
						 : hex && d >= 'A' && d <= 'F' ? d - 'A' + 10
									       : -1;
					if (dv < 0)
						break;
					v = v * (hex ? 16 : 10) + (unsigned long)dv;
					k++;
					digits++;
				}
				if (digits && k < n && s[k] == ';') {
					c = v >= 0x20 && v < 0x7f ? (char)v : '?';
					used = k + 1 - i;
				}
			}
		} else if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f) {
			/* names are ASCII identifiers: others print as '?' */
			c = '?';
		}
		if (j + 1 < sizeof(a->value))
			a->value[j++] = c;
		else
			a->too_long = 1;
		i += used;
	}
	a->value[j] = '\0';
}

static const struct attr *attr_get(const struct attr *a, int na, const char *name)
{
	for (int i = 0; i < na; i++)
		if (!strcmp(a[i].name, name))
			return &a[i];
	return NULL;
}

/* A name attribute copied into dst: over-long names are refused. */
static int take_name(struct scan *sc, const struct attr *a, const char *what, char *dst)
{
	if (a->too_long)
		SCAN_FAIL(sc, ENGI_EPARSE, "%s '%.40s...' is over %d bytes", what, a->value,
			  ENGI_FC_NAME_MAX - 1);
	memcpy(dst, a->value, sizeof(a->value));
	return 0;
}

static int add_object(struct scan *sc, const struct attr *a, int na)
{
	const struct attr *name = attr_get(a, na, "name"), *type = attr_get(a, na, "type");
	if (!name || !type)
		SCAN_FAIL(sc, ENGI_EPARSE, "an <Object> of <Objects> lacks %s",
			  name ? "its type" : "its name");
	struct engi_fc_doc *d = sc->doc;
	if (d->n >= ENGI_FC_MAX_OBJECTS)
		SCAN_FAIL(sc, ENGI_ETOOBIG, "over %d objects", ENGI_FC_MAX_OBJECTS);
	if (engi_fc_find(d, name->value))
		SCAN_FAIL(sc, ENGI_EPARSE, "object '%s' is declared twice", name->value);
	if (engi_grow((void **)&d->objs, &sc->objs_cap, d->n + 1, sizeof(*d->objs)))
		SCAN_FAIL(sc, ENGI_ENOMEM, "no memory for object '%s'", name->value);
	struct engi_fc_object *o = &d->objs[d->n];
	memset(o, 0, sizeof(*o));
	TRY(take_name(sc, name, "object name", o->name));
	TRY(take_name(sc, type, "type", o->type));
	d->n++;
	return 0;
}

static int begin_data_object(struct scan *sc, const struct attr *a, int na)
{
	const struct attr *name = attr_get(a, na, "name");
	if (!name)
		SCAN_FAIL(sc, ENGI_EPARSE, "an <Object> of <ObjectData> lacks its name%s", "");
	struct engi_fc_doc *d = sc->doc;
	long idx = -1;
	if (sc->next_hint < d->n && !strcmp(d->objs[sc->next_hint].name, name->value))
		idx = (long)sc->next_hint;
	else
		for (size_t i = 0; i < d->n; i++)
			if (!strcmp(d->objs[i].name, name->value)) {
				idx = (long)i;
				break;
			}
	if (idx < 0)
		SCAN_FAIL(sc, ENGI_EPARSE,
			  "<ObjectData> has object '%.60s' not declared in <Objects>", name->value);
	sc->cur = idx;
	sc->next_hint = (size_t)idx + 1;
	return 0;
}

const char *const engi_fc_value_names[] = {
    "Length",	   "Length2",	  "Radius",	 "Radius1",	"Radius2", "Diameter", "Depth",
    "Size",	   "Height",	  "Width",	 "Angle",	"Angle1",  "Angle2",   "TaperAngle",
    "TaperAngle2", "MajorRadius", "MinorRadius", "Occurrences", NULL};

static int is_value_name(const char *name)
{
	for (const char *const *n = engi_fc_value_names; *n; n++)
		if (!strcmp(*n, name))
			return 1;
	return 0;
}

static int add_value(struct scan *sc, int kind, struct engi_fc_value **out)
{
	struct engi_fc_doc *d = sc->doc;
	if (d->nvals >= ENGI_FC_MAX_VALUES)
		SCAN_FAIL(sc, ENGI_ETOOBIG, "over %d property values and sketch elements",
			  ENGI_FC_MAX_VALUES);
	if (engi_grow((void **)&d->vals, &sc->vals_cap, d->nvals + 1, sizeof(*d->vals)))
		SCAN_FAIL(sc, ENGI_ENOMEM, "no memory for the values of '%s'",
			  d->objs[sc->cur].name);
	struct engi_fc_value *v = &d->vals[d->nvals++];
	memset(v, 0, sizeof(*v));
	v->obj = (size_t)sc->cur;
	v->kind = kind;
	*out = v;
	return 0;
}

/* The number in attribute name of a (0 when absent: FreeCAD writes every
 * coordinate, so a missing one is a hand-made file's). */
static double num_attr(const struct attr *a, int na, const char *name)
{
	const struct attr *x = attr_get(a, na, name);
	return x ? strtod(x->value, NULL) : 0;
}

static void point_attr(const struct attr *a, int na, const char *prefix, double out[3])
{
	static const char axes[] = "XYZ";
	for (int k = 0; k < 3; k++) {
		char n[TAG_MAX];
		snprintf(n, sizeof(n), "%s%c", prefix, axes[k]);
		out[k] = num_attr(a, na, n);
	}
}

/* Children of a Geometry, Constraints or listed numeric property. */
static int value_child(struct scan *sc, const char *tag, const struct attr *a, int na)
{
	struct engi_fc_value *v;
	if (sc->value_prop &&
	    (!strcmp(tag, "Float") || !strcmp(tag, "Integer") || !strcmp(tag, "Bool"))) {
		const struct attr *x = attr_get(a, na, "value");
		if (!x)
			return 0;
		TRY(add_value(sc, ENGI_FCV_NUMBER, &v));
		snprintf(v->name, sizeof(v->name), "%s", sc->prop);
		v->v = !strcmp(tag, "Bool") ? !strcmp(x->value, "true") || !strcmp(x->value, "1")
					    : strtod(x->value, NULL);
		return 0;
	}
	if (!strcmp(sc->prop, "Geometry")) {
		if (!strcmp(tag, "Geometry")) {
			TRY(add_value(sc, ENGI_FCV_GEOMETRY, &v));
			v->index = sc->nth++;
			sc->geom = (long)(v - sc->doc->vals);
			return 0;
		}
		if (sc->geom < 0)
			return 0;
		v = &sc->doc->vals[sc->geom];
		const struct attr *x;
		if (!strcmp(tag, "Construction") && (x = attr_get(a, na, "value")))
			v->construction |= !strcmp(x->value, "1") || !strcmp(x->value, "true");
		else if (!strcmp(tag, "GeoExtension") &&
			 (x = attr_get(a, na, "geometryModeFlags"))) {
			/* a bitset written most significant first: bit 1 is
			 * Construction (bit 0 Blocked) */
			size_t l = strlen(x->value);
			v->construction |= l >= 2 && x->value[l - 2] == '1';
		} else if (!strcmp(tag, "Circle") || !strcmp(tag, "ArcOfCircle")) {
			v->kind = tag[0] == 'C' ? ENGI_FCV_CIRCLE : ENGI_FCV_ARC;
			v->v = num_attr(a, na, "Radius");
			point_attr(a, na, "Center", v->p);
		} else if (!strcmp(tag, "LineSegment")) {
			v->kind = ENGI_FCV_LINE;
			point_attr(a, na, "Start", v->p);
			point_attr(a, na, "End", v->q);
		}
		return 0;
	}
	if (!strcmp(sc->prop, "Constraints") && !strcmp(tag, "Constrain")) {
		long i = sc->nth++;
		const struct attr *t = attr_get(a, na, "Type");
		if (!t || strcmp(t->value, "9")) /* Sketcher's ConstraintType Angle */
			return 0;
		TRY(add_value(sc, ENGI_FCV_ANGLE_CONSTRAINT, &v));
		v->index = i;
		v->v = num_attr(a, na, "Value");
	}
	return 0;
}

/* A <Link value> or <Part file> inside a property of the current object. */
static int property_child(struct scan *sc, const char *tag, const struct attr *a, int na)
{
	struct engi_fc_doc *d = sc->doc;
	struct engi_fc_object *o = &d->objs[sc->cur];
	TRY(value_child(sc, tag, a, na));
	if (!strcmp(tag, "Part") && !strcmp(sc->prop, "Shape")) {
		const struct attr *f = attr_get(a, na, "file");
		if (f)
			TRY(take_name(sc, f, "shape file name", o->shape_file));
		return 0;
	}
	if (strcmp(tag, "Link"))
		return 0;
	const struct attr *v = attr_get(a, na, "value");
	if (!v)
		return 0;
	if (!strcmp(sc->prop, "Tip"))
		return take_name(sc, v, "Tip link", o->tip);
	if (!strcmp(sc->prop, "BaseFeature"))
		return take_name(sc, v, "BaseFeature link", o->base);
	if (!strcmp(sc->prop, "Group")) {
		if (d->nlinks >= ENGI_FC_MAX_LINKS)
			SCAN_FAIL(sc, ENGI_ETOOBIG, "over %d Group links", ENGI_FC_MAX_LINKS);
		if (o->ngroup == 0)
			o->group = d->nlinks;
		else if (o->group + o->ngroup != d->nlinks)
			SCAN_FAIL(sc, ENGI_EPARSE, "object '%s' has its Group twice", o->name);
		if (engi_grow((void **)&d->links, &sc->links_cap, d->nlinks + 1, sizeof(*d->links)))
			SCAN_FAIL(sc, ENGI_ENOMEM, "no memory for the Group of '%s'", o->name);
		TRY(take_name(sc, v, "Group link", d->links[d->nlinks]));
		d->nlinks++;
		o->ngroup++;
	}
	return 0;
}

static int open_tag(struct scan *sc, const char *tag, const struct attr *a, int na, int empty)
{
	enum kind parent = sc->depth ? sc->kinds[sc->depth - 1] : K_OTHER;
	enum kind k = K_OTHER;
	if (!strcmp(tag, "Objects") && sc->depth == 1)
		k = K_OBJECTS;
	else if (!strcmp(tag, "ObjectData") && sc->depth == 1)
		k = K_OBJECTDATA;
	else if (!strcmp(tag, "Object") && parent == K_OBJECTS)
		TRY(add_object(sc, a, na));
	else if (!strcmp(tag, "Object") && parent == K_OBJECTDATA) {
		k = K_OBJECT;
		TRY(begin_data_object(sc, a, na));
	} else if (!strcmp(tag, "Property") && sc->cur >= 0 && sc->depth >= 1 &&
		   sc->kinds[sc->depth - 1] == K_OTHER && sc->depth >= 2 &&
		   sc->kinds[sc->depth - 2] == K_OBJECT) {
		/* <Object><Properties><Property name=...> */
		const struct attr *n = attr_get(a, na, "name");
		k = K_PROPERTY;
		snprintf(sc->prop, sizeof(sc->prop), "%s", n && !n->too_long ? n->value : "");
		sc->value_prop = is_value_name(sc->prop);
		sc->geom = -1;
		sc->nth = 0;
	} else if (sc->prop[0] && sc->cur >= 0) {
		TRY(property_child(sc, tag, a, na));
	}
	if (empty) {
		if (k == K_OBJECT)
			sc->cur = -1;
		if (k == K_PROPERTY)
			sc->prop[0] = '\0';
		return 0;
	}
	if (sc->depth >= DEPTH_MAX)
		SCAN_FAIL(sc, ENGI_EPARSE, "elements nested over %d deep", DEPTH_MAX);
	snprintf(sc->stack[sc->depth], TAG_MAX, "%s", tag);
	sc->kinds[sc->depth++] = k;
	return 0;
}

static int close_tag(struct scan *sc, const char *tag)
{
	if (sc->depth == 0 || strcmp(sc->stack[sc->depth - 1], tag))
		SCAN_FAIL(sc, ENGI_EPARSE, "</%s> closes %s%s%s", tag, sc->depth ? "<" : "nothing",
			  sc->depth ? sc->stack[sc->depth - 1] : "", sc->depth ? ">" : "");
	enum kind k = sc->kinds[--sc->depth];
	if (k == K_OBJECT)
		sc->cur = -1;
	if (k == K_PROPERTY) {
		sc->prop[0] = '\0';
		sc->geom = -1;
	}
	return 0;
}

/* Skips past the terminator t starting at sc->pos; an error when absent. */
static int skip_past(struct scan *sc, const char *t, const char *what)
{
	size_t tl = strlen(t);
	for (size_t i = sc->pos; i + tl <= sc->n; i++)
		if (!memcmp(sc->s + i, t, tl)) {
			sc->pos = i + tl;
			return 0;
		}
	SCAN_FAIL(sc, ENGI_EPARSE, "unterminated %s", what);
}

static int scan_tag(struct scan *sc)
{
	const char *s = sc->s;
	size_t n = sc->n, i = sc->pos + 1; /* past '<' */
	if (i < n && s[i] == '!') {
		if (n - i >= 3 && !memcmp(s + i, "!--", 3))
			return skip_past(sc, "-->", "comment");
		if (n - i >= 8 && !memcmp(s + i, "![CDATA[", 8))
			return skip_past(sc, "]]>", "CDATA section");
		return skip_past(sc, ">", "declaration");
	}
	if (i < n && s[i] == '?')
		return skip_past(sc, "?>", "processing instruction");
	int closing = i < n && s[i] == '/';
	i += closing;
	char tag[TAG_MAX];
	size_t tl = 0;
	while (i < n && is_name_char(s[i])) {
		if (tl + 1 < sizeof(tag))
			tag[tl++] = s[i];
		i++;
	}
	tag[tl] = '\0';
	if (tl == 0)
		SCAN_FAIL(sc, ENGI_EPARSE, "a '<' not followed by a tag name%s", "");
	struct attr a[ATTR_MAX];
	int na = 0, empty = 0;
	for (;;) {
		while (i < n && is_space(s[i]))
			i++;
		if (i >= n)
			SCAN_FAIL(sc, ENGI_EPARSE, "unterminated <%s>", tag);
		if (s[i] == '>') {
			i++;
			break;
		}
		if (s[i] == '/' && i + 1 < n && s[i + 1] == '>') {
			empty = 1;
			i += 2;
			break;
		}
		if (closing)
			SCAN_FAIL(sc, ENGI_EPARSE, "attributes in </%s>", tag);
		size_t ns = i;
		while (i < n && is_name_char(s[i]))
			i++;
		size_t nl = i - ns;
		while (i < n && is_space(s[i]))
			i++;
		if (nl == 0 || i >= n || s[i] != '=')
			SCAN_FAIL(sc, ENGI_EPARSE, "a malformed attribute in <%s>", tag);
		i++;
		while (i < n && is_space(s[i]))
			i++;
		if (i >= n || (s[i] != '"' && s[i] != '\''))
			SCAN_FAIL(sc, ENGI_EPARSE, "an unquoted attribute value in <%s>", tag);
		char q = s[i++];
		size_t vs = i;
		while (i < n && s[i] != q) {
			if (s[i] == '<')
				SCAN_FAIL(sc, ENGI_EPARSE, "a '<' inside an attribute of <%s>",
					  tag);
			i++;
		}
		if (i >= n)
			SCAN_FAIL(sc, ENGI_EPARSE, "an unterminated attribute value in <%s>", tag);
		if (na < ATTR_MAX && nl < TAG_MAX) {
			memcpy(a[na].name, s + ns, nl);
			a[na].name[nl] = '\0';
			decode(&a[na], s + vs, i - vs);
			na++;
		}
		i++; /* closing quote */
	}
	if (closing && empty)
		SCAN_FAIL(sc, ENGI_EPARSE, "a malformed </%s/>", tag);
	int rc = closing ? close_tag(sc, tag) : open_tag(sc, tag, a, na, empty);
	sc->pos = i;
	return rc;
}

int engi_fc_doc_parse(const char *xml, size_t len, const char *label, struct engi_fc_doc *doc,
		      struct engi_error *err)
{
	memset(doc, 0, sizeof(*doc));
	struct scan *sc = engi_calloc(1, sizeof(*sc));
	if (!sc)
		RAISE(err, ENGI_ENOMEM, "%s: no memory to parse", label ? label : "Document.xml");
	sc->s = xml;
	sc->n = len;
	sc->label = label ? label : "'Document.xml'";
	sc->err = err;
	sc->doc = doc;
	sc->cur = -1;
	sc->geom = -1;
	int rc = 0, seen_root = 0;
	while (sc->pos < sc->n && rc == 0) {
		const char *lt = memchr(xml + sc->pos, '<', sc->n - sc->pos);
		if (!lt)
			break;
		sc->pos = (size_t)(lt - xml);
		int before = sc->depth;
		rc = scan_tag(sc);
		if (before == 0 && sc->depth == 1)
			seen_root = 1;
	}
	if (rc == 0 && sc->depth != 0)
		rc = engi_raise(err, ENGI_EPARSE, "%s line %zu: ends inside <%s>", sc->label,
				line_of(sc, sc->n), sc->stack[sc->depth - 1]);
	if (rc == 0 && !seen_root)
		rc = engi_raise(err, ENGI_EPARSE, "%s: no document element", sc->label);
	/* a Group link past the list (a hostile nlinks) cannot happen: checked
	 * as they are added */
	engi_free(sc);
	if (rc)
		engi_fc_doc_release(doc);
	return rc;
}

const struct engi_fc_object *engi_fc_find(const struct engi_fc_doc *doc, const char *name)
{
	for (size_t i = 0; i < doc->n; i++)
		if (!strcmp(doc->objs[i].name, name))
			return &doc->objs[i];
	return NULL;
}

/* The validator's allow-list of native PartDesign leaves
 * (freecad_validator/comparators/integrity_gates.py, 0.6.0). */
static const char *const native_types[] = {
    "Sketcher::SketchObject",
    "PartDesign::Pad",
    "PartDesign::Pocket",
    "PartDesign::Revolution",
    "PartDesign::Groove",
    "PartDesign::Hole",
    "PartDesign::AdditiveBox",
    "PartDesign::AdditiveCylinder",
    "PartDesign::AdditiveCone",
    "PartDesign::AdditiveSphere",
    "PartDesign::AdditiveEllipsoid",
    "PartDesign::AdditiveTorus",
    "PartDesign::AdditivePrism",
    "PartDesign::AdditiveWedge",
    "PartDesign::SubtractiveBox",
    "PartDesign::SubtractiveCylinder",
    "PartDesign::SubtractiveCone",
    "PartDesign::SubtractiveSphere",
    "PartDesign::SubtractiveEllipsoid",
    "PartDesign::SubtractiveTorus",
    "PartDesign::SubtractivePrism",
    "PartDesign::SubtractiveWedge",
    "PartDesign::AdditiveLoft",
    "PartDesign::SubtractiveLoft",
    "PartDesign::AdditivePipe",
    "PartDesign::SubtractivePipe",
    "PartDesign::AdditiveHelix",
    "PartDesign::SubtractiveHelix",
    "PartDesign::Fillet",
    "PartDesign::Chamfer",
    "PartDesign::Draft",
    "PartDesign::Thickness",
    "PartDesign::LinearPattern",
    "PartDesign::PolarPattern",
    "PartDesign::Mirrored",
    "PartDesign::Scaled",
    "PartDesign::MultiTransform",
    "PartDesign::Plane",
    "PartDesign::Line",
    "PartDesign::Point",
    "PartDesign::CoordinateSystem",
    "App::Origin",
    "App::Plane",
    "App::Line",
};

/* Its containers: their shapes come from what they link to. */
static const char *const container_types[] = {
    "App::Part",
    "App::Link",
    "App::LinkGroup",
    "PartDesign::Body",
    "PartDesign::FeatureBase",
    "PartDesign::SubShapeBinder",
    "PartDesign::Boolean",
};

enum engi_fc_class engi_fc_classify(const char *type)
{
	for (size_t i = 0; i < sizeof(native_types) / sizeof(*native_types); i++)
		if (!strcmp(type, native_types[i]))
			return ENGI_FC_NATIVE;
	for (size_t i = 0; i < sizeof(container_types) / sizeof(*container_types); i++)
		if (!strcmp(type, container_types[i]))
			return ENGI_FC_CONTAINER;
	return ENGI_FC_OUTSIDE;
}

int engi_fc_doc_from_zip(const struct engi_zip *z, const char *path, struct engi_fc_doc *doc,
			 struct engi_error *err)
{
	memset(doc, 0, sizeof(*doc));
	const struct engi_zip_entry *dx = engi_zip_find(z, "Document.xml");
	if (!dx)
		RAISE(err, ENGI_EPARSE,
		      "'%s': no Document.xml in the archive: not a FreeCAD document", path);
	unsigned char *xml = NULL;
	size_t xlen = 0;
	TRY(engi_zip_extract(z, dx, ENGI_FC_XML_MAX, &xml, &xlen, err));
	char label[ENGI_ERROR_MSG_MAX / 2];
	snprintf(label, sizeof(label), "'%s' entry 'Document.xml'", path);
	int rc = engi_fc_doc_parse((const char *)xml, xlen, label, doc, err);
	engi_free(xml);
	return rc;
}

int engi_fc_doc_read(const char *path, struct engi_fc_doc *doc, struct engi_error *err)
{
	memset(doc, 0, sizeof(*doc));
	char *bytes = NULL;
	size_t len = 0;
	TRY(engi_io_slurp(path, NULL, "FCStd", ENGI_ZIP_FILE_MAX, &bytes, &len, err));
	struct engi_zip z;
	int rc = engi_zip_open(&z, bytes, len, path, err);
	if (rc == 0) {
		rc = engi_fc_doc_from_zip(&z, path, doc, err);
		engi_zip_release(&z);
	}
	engi_free(bytes);
	return rc;
}

void engi_fc_doc_release(struct engi_fc_doc *doc)
{
	engi_free(doc->objs);
	engi_free(doc->links);
	engi_free(doc->vals);
	memset(doc, 0, sizeof(*doc));
}

const char *engi_brep_surface_name(int type)
{
	static const char *const names[ENGI_SURF_COUNT] = {
	    "plane",  "cylinder",   "cone",	 "sphere", "torus", "bspline",
	    "bezier", "revolution", "extrusion", "offset", "other"};
	return type >= 0 && type < ENGI_SURF_COUNT ? names[type] : "other";
}

void engi_brep_report_release(struct engi_brep_report *rep)
{
	engi_free(rep->props.face);
	engi_free(rep->body);
	engi_free(rep->feature);
	memset(rep, 0, sizeof(*rep));
	rep->measured = -1;
}
