/*
 * brep.h - the B-rep kernel: exact properties of OpenCASCADE shapes read
 * from FreeCAD documents (.FCStd), STEP (.step/.stp) and BREP (.brep/.brp,
 * text or binary), and the document facts of an FCStd (its PartDesign
 * Bodies, their Tips and features).
 *
 * Two halves. The archive and document readers (engi_zip_*, engi_fc_*) are
 * C on zlib and always built. The shape half needs OCCT
 * (kernels/brep/brep_occt.cpp, the one place OCCT headers are included),
 * which only the program engisweep-brep links: engi_brep_analyze
 * (brep_run.c) runs it as a child process, under a time limit, and reads
 * its report, so that no other process pays OCCT's start-up and a hostile
 * shape that makes OCCT loop or crash costs only that child. Without OCCT
 * (ENGI_BREP off) engi_brep_built() is 0 and engi_brep_analyze returns
 * ENGI_ENOTSUP.
 */
#ifndef ENGI_BREP_H
#define ENGI_BREP_H

#include <stddef.h>
#include <stdint.h>

struct engi_error;

/* ---- zip archives (kernels/brep/zip.c) ---- */

#define ENGI_ZIP_MAX_ENTRIES 4096	  /* central directory records */
#define ENGI_ZIP_NAME_MAX    256	  /* bytes of a name, NUL included */
#define ENGI_ZIP_ENTRY_MAX   (256u << 20) /* uncompressed bytes of one entry */
#define ENGI_ZIP_RATIO_MAX   1100u	  /* uncompressed / compressed (deflate tops at 1032) */
#define ENGI_ZIP_FILE_MAX    ((size_t)1 << 30) /* bytes of an archive read from disk */

struct engi_zip_entry {
	char name[ENGI_ZIP_NAME_MAX];
	uint64_t csize, usize; /* compressed and uncompressed sizes */
	uint64_t header;       /* offset of its local header */
	uint32_t crc;
	uint16_t method; /* 0 stored, 8 deflate */
};

struct engi_zip {
	const unsigned char *data; /* the archive bytes (borrowed) */
	size_t size;
	struct engi_zip_entry *entries;
	size_t n;
	char label[256]; /* what messages call the archive */
};

/*
 * Reads the central directory of the archive in data[0, size). Refused
 * (ENGI_EPARSE / ENGI_ETOOBIG, the message names label and the entry):
 * no end record, records out of bounds, more than ENGI_ZIP_MAX_ENTRIES,
 * an unsafe name (empty, absolute, a ".." component, a backslash, control
 * bytes, over ENGI_ZIP_NAME_MAX), duplicates, encrypted or zip64 entries,
 * methods other than stored and deflate, and sizes over the caps.
 */
int engi_zip_open(struct engi_zip *z, const void *data, size_t size, const char *label,
		  struct engi_error *err);
/* The entry named name (exact), or NULL. */
const struct engi_zip_entry *engi_zip_find(const struct engi_zip *z, const char *name);
/*
 * Extracts e into *out (engi_malloc'd, NUL-terminated, *len without the
 * NUL): raw inflate bounded by the declared size, which must match, as
 * must the CRC-32. cap bounds the uncompressed size (ENGI_ETOOBIG).
 */
int engi_zip_extract(const struct engi_zip *z, const struct engi_zip_entry *e, size_t cap,
		     unsigned char **out, size_t *len, struct engi_error *err);
void engi_zip_release(struct engi_zip *z);

/* ---- FreeCAD Document.xml (kernels/brep/fcdoc.c) ---- */

#define ENGI_FC_NAME_MAX    128
#define ENGI_FC_MAX_OBJECTS 10000
#define ENGI_FC_MAX_LINKS   200000

struct engi_fc_object {
	char name[ENGI_FC_NAME_MAX];
	char type[ENGI_FC_NAME_MAX];	   /* TypeId, "PartDesign::Pad" */
	char shape_file[ENGI_FC_NAME_MAX]; /* <Part file> of its Shape, "" if none */
	char tip[ENGI_FC_NAME_MAX];	   /* Tip link (Bodies), "" if unset */
	char base[ENGI_FC_NAME_MAX];	   /* BaseFeature link, "" if unset */
	size_t group, ngroup;		   /* its Group: links[group .. group+ngroup) */
};

/*
 * The property values the spec side of pcb-v2 reads (verifiers/pcb_tree.c),
 * as the document saved them: the numeric properties named in
 * engi_fc_value_names (a <Float>, <Integer> or <Bool> value; angles in
 * degrees), each sketch's Geometry (by index: circles and arcs with their
 * radius and centre, line segments with their ends, in sketch coordinates;
 * construction geometry flagged) and its angle constraints (by index in the
 * Constraints list, radians).
 */
#define ENGI_FC_MAX_VALUES 200000
#define ENGI_FC_VALUE_NAME 16

enum engi_fc_value_kind {
	ENGI_FCV_NUMBER,	   /* name, v */
	ENGI_FCV_CIRCLE,	   /* v the radius, p the centre */
	ENGI_FCV_ARC,		   /* an arc of circle: the same */
	ENGI_FCV_LINE,		   /* a line segment from p to q */
	ENGI_FCV_GEOMETRY,	   /* other geometry (points, ellipses, B-splines...) */
	ENGI_FCV_ANGLE_CONSTRAINT, /* v the angle */
};

struct engi_fc_value {
	size_t obj; /* its object, an index in objs */
	int kind;   /* enum engi_fc_value_kind */
	int construction;
	long index; /* in the Geometry or Constraints list */
	char name[ENGI_FC_VALUE_NAME];
	double v, p[3], q[3];
};

struct engi_fc_doc {
	struct engi_fc_object *objs; /* in document order */
	size_t n;
	char (*links)[ENGI_FC_NAME_MAX];
	size_t nlinks;
	struct engi_fc_value *vals; /* in document order */
	size_t nvals;
};

/* "Length", "Length2", "Radius", ... "Occurrences": the validator's
 * feature-tree properties, NULL-terminated. */
extern const char *const engi_fc_value_names[];

/* Allow-list classes of a TypeId (the published validator's gate). */
enum engi_fc_class {
	ENGI_FC_OUTSIDE = 0, /* shape-bearing type outside the allow-list */
	ENGI_FC_NATIVE,	     /* native PartDesign feature, sketch or datum */
	ENGI_FC_CONTAINER,   /* Body, Part, Link, FeatureBase, binder, boolean */
	ENGI_FC_SHAPELESS,   /* outside the allow-list, but its shape has no faces */
};

/*
 * Parses the objects of a FreeCAD Document.xml: their names and types
 * (<Objects>), and from <ObjectData> each one's Shape file, Tip, BaseFeature
 * and Group. label names the file in messages, quoted as it should print
 * ("'a.FCStd' entry 'Document.xml'"). Unknown elements are skipped;
 * malformed markup, an object of ObjectData not declared in Objects, or an
 * over-long name is ENGI_EPARSE.
 */
int engi_fc_doc_parse(const char *xml, size_t len, const char *label, struct engi_fc_doc *doc,
		      struct engi_error *err);
/* The object named name, or NULL. */
const struct engi_fc_object *engi_fc_find(const struct engi_fc_doc *doc, const char *name);
/* Parses the Document.xml of z, an FCStd archive read from path (messages
 * name both; ENGI_EPARSE when there is none: not a FreeCAD document). */
#define ENGI_FC_XML_MAX (64u << 20) /* bytes of a Document.xml */
int engi_fc_doc_from_zip(const struct engi_zip *z, const char *path, struct engi_fc_doc *doc,
			 struct engi_error *err);
/* The same from the file at path (an archive of at most ENGI_ZIP_FILE_MAX
 * bytes). */
int engi_fc_doc_read(const char *path, struct engi_fc_doc *doc, struct engi_error *err);
enum engi_fc_class engi_fc_classify(const char *type);
void engi_fc_doc_release(struct engi_fc_doc *doc);

/* ---- shape properties (kernels/brep/brep_occt.cpp, OCCT) ---- */

/* BRepAdaptor_Surface's types; FreeCAD's class names in brackets. */
enum engi_brep_surface {
	ENGI_SURF_PLANE,      /* Plane */
	ENGI_SURF_CYLINDER,   /* Cylinder */
	ENGI_SURF_CONE,	      /* Cone */
	ENGI_SURF_SPHERE,     /* Sphere */
	ENGI_SURF_TORUS,      /* Toroid */
	ENGI_SURF_BSPLINE,    /* BSplineSurface */
	ENGI_SURF_BEZIER,     /* BezierSurface */
	ENGI_SURF_REVOLUTION, /* SurfaceOfRevolution */
	ENGI_SURF_EXTRUSION,  /* SurfaceOfExtrusion */
	ENGI_SURF_OFFSET,     /* OffsetSurface */
	ENGI_SURF_OTHER,
	ENGI_SURF_COUNT
};
/* "plane", "cylinder", ... "other" */
const char *engi_brep_surface_name(int type);

struct engi_brep_face {
	int type; /* enum engi_brep_surface */
	double area, centroid[3];
	/* the surface's own placement, in the shape's coordinates, for
	 * planes, cylinders and cones (0 for other types): axis the plane's
	 * normal or the axis (unit), loc the plane's or the axis' location,
	 * radius the cylinder's (a cone's reference radius), semi_angle the
	 * cone's (radians), vmin and vmax the face's range of the surface's v
	 * (along the axis of cylinders and cones), forward the face's
	 * orientation is FORWARD */
	double axis[3], loc[3], radius, semi_angle, vmin, vmax;
	int forward;
};

struct engi_brep_props {
	size_t solids, shells, faces, edges, vertices; /* distinct (TopExp::MapShapes) */
	double volume, area;
	double centroid[3];   /* of the volume */
	double inertia[3][3]; /* matrix of inertia about the centroid, unit density */
	double area_by_type[ENGI_SURF_COUNT];
	struct engi_brep_face *face; /* faces entries, in MapShapes order */
	double face_centre[3];	     /* area-weighted mean of the face centroids */
	/* the axis-aligned box of the exact shape (no triangulation, no gap),
	 * as FreeCAD's Shape.BoundBox of a recomputed shape; the sizes of the
	 * box of the B-rep vertices in their principal axes, ascending (the
	 * spec side's obb_sorted; pca_ok 0: fewer than 3 vertices or no
	 * decomposition, the validator's fallback to the axis-aligned box) */
	int aabb_ok;
	double aabb_min[3], aabb_max[3];
	int pca_ok;
	double pca_sorted[3];
	int obb_ok; /* 0: the box could not be made (no solid, void) */
	double obb_centre[3], obb_axes[3][3], obb_half[3];
	double obb_sorted[3]; /* full sizes, ascending */
};

struct engi_brep_body {
	char name[ENGI_FC_NAME_MAX];
	char tip[ENGI_FC_NAME_MAX];
	char tip_type[ENGI_FC_NAME_MAX];
	char shape_file[ENGI_FC_NAME_MAX]; /* the file measured: the Body's Shape, else the Tip's */
	double volume;			   /* of that shape, 0 if none */
	size_t solids, faces;
	int tip_agrees; /* the Body's shape and the Tip's: same faces, volume to 1e-6 */
};

struct engi_brep_feature {
	char name[ENGI_FC_NAME_MAX];
	char type[ENGI_FC_NAME_MAX];
	int cls; /* enum engi_fc_class (SHAPELESS only here, after its shape is read) */
};

struct engi_brep_report {
	char format[8]; /* "fcstd", "step", "brep" */
	struct engi_brep_props props;
	/* FCStd only */
	int is_doc;
	size_t objects;
	struct engi_brep_body *body;	   /* every PartDesign::Body, document order */
	size_t nbodies, nonempty;	   /* nonempty: positive volume */
	long measured;			   /* index in body of the one measured, -1 none */
	struct engi_brep_feature *feature; /* the measured Body's Group and base features */
	size_t nfeatures, noutside;
	double seconds; /* reading and measuring, in the helper (its start excluded) */
};

/* 1 when built with OCCT and its program engisweep-brep is found. */
int engi_brep_built(void);

/* Flags of engi_brep_opts. */
#define ENGI_BREP_NO_OBB 1u /* leave the oriented box out (its mesh is most of the time) */
/* no box for a shape of more than ENGI_BREP_OBB_FACES_MAX faces: the
 * validator scores such a candidate 0 before it makes one, and its fine
 * mesh of thousands of faces costs minutes and gigabytes */
#define ENGI_BREP_OBB_CAPPED	2u
#define ENGI_BREP_OBB_FACES_MAX 5000

struct engi_brep_opts {
	unsigned flags;
	/* > 0: the child running OCCT is stopped after this many seconds
	 * (a hostile shape can make OCCT loop: ENGI_ETIMEOUT; one that crashes
	 * it, or a limit that kills it, is ENGI_EBUG naming the signal); 0: no
	 * limit. A helper that cannot run is ENGI_EENV. */
	double timeout_s;
	/* a folder where reports of files read before are kept, by the
	 * file's content, the flags and the helper program (NULL: none): for
	 * a benchmark's own reference, read again by every episode of its
	 * task. A kept report that does not decode is read afresh. Only
	 * reports of files that read are kept. */
	const char *cache_dir;
};

/* The folder of kept reports: $ENGI_BREP_CACHE ("off": none, NULL), else
 * $XDG_CACHE_HOME/engisweep/brep, else $HOME/.cache/engisweep/brep; into
 * buf, or NULL when there is none. */
const char *engi_brep_cache_dir(char *buf, size_t n);

/*
 * Reads path (by its extension: .FCStd, .step/.stp, .brep/.brp/.bin) and
 * measures its shape; for a document, the first PartDesign::Body with
 * positive volume (the validator's choice; its Shape, else its Tip's).
 * Errors name the file and the entry. opts may be NULL (no flags, no time
 * limit). Runs engisweep-brep ($ENGI_BREP_HELPER, else beside the running
 * program, else where the build made it). kernels/brep/brep_run.c.
 */
int engi_brep_analyze(const char *path, const struct engi_brep_opts *opts,
		      struct engi_brep_report *rep, struct engi_error *err);
/* The same in this process, without a time limit: only in engisweep-brep,
 * the one program linked with OCCT (brep_occt.cpp). */
int engi_brep_measure_file(const char *path, unsigned flags, struct engi_brep_report *rep,
			   struct engi_error *err);
void engi_brep_report_release(struct engi_brep_report *rep);

#endif
