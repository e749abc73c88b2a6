/*
 * brep_occt.cpp - the shape half of the B-rep kernel on OpenCASCADE: the
 * one file of engisweep that includes OCCT headers (brep.h is its C face).
 * Reads BREP (text and binary), STEP and the shapes of an FCStd archive,
 * and measures them: GProp volume and surface properties, face types,
 * distinct sub-shape counts and the optimal oriented box made as the
 * validator makes it (occt_bbox.py: cleaned shape, a mesh of deflection
 * volume^(1/3) * 1e-4 and angle 0.1, AddOBB on triangulation, optimal, no
 * tolerance). No OCCT exception leaves this file: each becomes an
 * engi_error naming the file and the entry.
 */
/* error.h is C11: its _Noreturn is C++'s [[noreturn]] */
#define _Noreturn [[noreturn]]
extern "C" {
#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/error.h"
#include "engi/slurp.h"
}
#undef _Noreturn

/* LAPACKE declares itself extern "C"; its complex types as C++'s */
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <complex>
#include <lapacke.h>

#include <BRepAdaptor_Surface.hxx>
#include <BRep_Tool.hxx>
#include <Bnd_Box.hxx>
#include <gp_Cone.hxx>
#include <gp_Cylinder.hxx>
#include <gp_Pln.hxx>
#include <BRepBndLib.hxx>
#include <BRepGProp.hxx>
#include <BRepMesh_IncrementalMesh.hxx>
#include <BRepTools.hxx>
#include <BRep_Builder.hxx>
#include <BinTools.hxx>
#include <BinTools_ShapeSet.hxx>
#include <Bnd_OBB.hxx>
#include <GProp_GProps.hxx>
#include <IFSelect_ReturnStatus.hxx>
#include <Message.hxx>
#include <Message_Messenger.hxx>
#include <Message_PrinterOStream.hxx>
#include <STEPControl_Reader.hxx>
#include <Standard_Failure.hxx>
#include <TopExp.hxx>
#include <TopTools_IndexedMapOfShape.hxx>
#include <TopoDS.hxx>
#include <TopoDS_Face.hxx>
#include <TopoDS_Shape.hxx>

#include <algorithm>
#include <vector>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <sstream>
#include <string>

namespace
{

const double OBB_DEFLECTION_FRACTION = 1e-4;
const double OBB_ANGULAR_DEFLECTION = 0.1;
const double TIP_VOLUME_REL_TOL = 1e-6;

int surface_type(const TopoDS_Face &f)
{
	BRepAdaptor_Surface s(f, Standard_True);
	switch (s.GetType()) {
	case GeomAbs_Plane:
		return ENGI_SURF_PLANE;
	case GeomAbs_Cylinder:
		return ENGI_SURF_CYLINDER;
	case GeomAbs_Cone:
		return ENGI_SURF_CONE;
	case GeomAbs_Sphere:
		return ENGI_SURF_SPHERE;
	case GeomAbs_Torus:
		return ENGI_SURF_TORUS;
	case GeomAbs_BSplineSurface:
		return ENGI_SURF_BSPLINE;
	case GeomAbs_BezierSurface:
		return ENGI_SURF_BEZIER;
	case GeomAbs_SurfaceOfRevolution:
		return ENGI_SURF_REVOLUTION;
	case GeomAbs_SurfaceOfExtrusion:
		return ENGI_SURF_EXTRUSION;
	case GeomAbs_OffsetSurface:
		return ENGI_SURF_OFFSET;
	default:
		return ENGI_SURF_OTHER;
	}
}

void copy3(double *out, const gp_XYZ &v)
{
	out[0] = v.X();
	out[1] = v.Y();
	out[2] = v.Z();
}

/* The placement of a plane, cylinder or cone face (engi_brep_face). */
void surface_params(const TopoDS_Face &f, struct engi_brep_face *fe)
{
	BRepAdaptor_Surface s(f, Standard_True);
	fe->forward = f.Orientation() == TopAbs_FORWARD;
	double u0 = 0, u1 = 0, v0 = 0, v1 = 0;
	BRepTools::UVBounds(f, u0, u1, v0, v1);
	switch (s.GetType()) {
	case GeomAbs_Plane: {
		gp_Pln p = s.Plane();
		copy3(fe->axis, p.Axis().Direction().XYZ());
		copy3(fe->loc, p.Location().XYZ());
		break;
	}
	case GeomAbs_Cylinder: {
		gp_Cylinder c = s.Cylinder();
		copy3(fe->axis, c.Axis().Direction().XYZ());
		copy3(fe->loc, c.Location().XYZ());
		fe->radius = c.Radius();
		fe->vmin = v0;
		fe->vmax = v1;
		break;
	}
	case GeomAbs_Cone: {
		gp_Cone c = s.Cone();
		copy3(fe->axis, c.Axis().Direction().XYZ());
		copy3(fe->loc, c.Location().XYZ());
		fe->radius = c.RefRadius();
		fe->semi_angle = c.SemiAngle();
		fe->vmin = v0;
		fe->vmax = v1;
		break;
	}
	default:
		break;
	}
}

/* The axis-aligned box of the exact shape and the principal-axes box of
 * its vertices (engi_brep_props), before anything meshes it. */
void boxes(const TopoDS_Shape &shape, struct engi_brep_props *pr)
{
	Bnd_Box bb;
	BRepBndLib::Add(shape, bb, Standard_False);
	bb.SetGap(0.0);
	pr->aabb_ok = !bb.IsVoid();
	if (pr->aabb_ok)
		bb.Get(pr->aabb_min[0], pr->aabb_min[1], pr->aabb_min[2], pr->aabb_max[0],
		       pr->aabb_max[1], pr->aabb_max[2]);
	TopTools_IndexedMapOfShape vm;
	TopExp::MapShapes(shape, TopAbs_VERTEX, vm);
	int n = vm.Extent();
	pr->pca_ok = 0;
	if (n < 3)
		return;
	std::vector<gp_XYZ> p((size_t)n);
	gp_XYZ mean(0, 0, 0);
	for (int i = 1; i <= n; i++) {
		p[(size_t)i - 1] = BRep_Tool::Pnt(TopoDS::Vertex(vm(i))).XYZ();
		mean += p[(size_t)i - 1];
	}
	mean /= n;
	/* the sample covariance (n - 1), as numpy's cov */
	double c[9] = {0};
	for (const gp_XYZ &q : p) {
		double d[3] = {q.X() - mean.X(), q.Y() - mean.Y(), q.Z() - mean.Z()};
		for (int a = 0; a < 3; a++)
			for (int b = 0; b < 3; b++)
				c[3 * a + b] += d[a] * d[b];
	}
	for (double &x : c)
		x /= n - 1;
	double w[3];
	if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'L', 3, c, 3, w) != 0)
		return;
	double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
	for (const gp_XYZ &q : p) {
		double d[3] = {q.X() - mean.X(), q.Y() - mean.Y(), q.Z() - mean.Z()};
		for (int k = 0; k < 3; k++) {
			/* column k of the row-major eigenvector matrix */
			double t = d[0] * c[k] + d[1] * c[3 + k] + d[2] * c[6 + k];
			lo[k] = std::min(lo[k], t);
			hi[k] = std::max(hi[k], t);
		}
	}
	for (int k = 0; k < 3; k++)
		pr->pca_sorted[k] = hi[k] - lo[k];
	std::sort(pr->pca_sorted, pr->pca_sorted + 3);
	pr->pca_ok = std::isfinite(pr->pca_sorted[2]);
}

size_t count(const TopoDS_Shape &s, TopAbs_ShapeEnum t)
{
	TopTools_IndexedMapOfShape m;
	TopExp::MapShapes(s, t, m);
	return (size_t)m.Extent();
}

/* The text BREP format starts with one of these; anything else is read as
 * binary (BinTools). */
bool is_text_brep(const char *data, size_t len)
{
	size_t i = 0;
	while (i < len && i < 256 &&
	       (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t'))
		i++;
	std::string head(data + i, std::min<size_t>(len - i, 64));
	return head.rfind("DBRep_DrawableShape", 0) == 0 ||
	       head.rfind("CASCADE Topology V", 0) == 0;
}

/* Binary BREP as FreeCAD writes it (TopoShape::exportBinary) and OCCT's
 * BinTools before format 4: a shape set, then the shape's index, location
 * index and orientation, each checked against the set. Format 4 goes to
 * BinTools::Read. */
bool read_bin(std::istream &in, TopoDS_Shape &shape)
{
	std::string head;
	std::getline(in, head);
	if (head.empty())
		std::getline(in, head);
	in.seekg(0);
	if (head.find("Topology V4") != std::string::npos) {
		BinTools::Read(shape, in);
		return !shape.IsNull();
	}
	BinTools_ShapeSet set;
	set.Read(in);
	if (!in)
		return false;
	Standard_Integer id = 0, loc = 0, orient = 0;
	BinTools::GetInteger(in, id);
	BinTools::GetInteger(in, loc);
	BinTools::GetInteger(in, orient);
	if (!in || id < 1 || id > set.NbShapes() || loc < 0 ||
	    loc > set.Locations().NbLocations() || orient < 0 || orient > 3)
		return false;
	shape = set.Shape(id);
	shape.Location(set.Locations().Location(loc));
	shape.Orientation(static_cast<TopAbs_Orientation>(orient));
	return true;
}

/* allow_empty: an empty entry (FreeCAD's null shape) reads as a null
 * shape; otherwise it is refused like any shapeless file. */
int read_brep_mem(const char *data, size_t len, const char *what, TopoDS_Shape &shape,
		  struct engi_error *err, bool allow_empty = false)
{
	size_t blank = 0;
	while (blank < len && (data[blank] == ' ' || data[blank] == '\n' || data[blank] == '\r' ||
			       data[blank] == '\t'))
		blank++;
	if (blank == len) {
		shape.Nullify();
		if (allow_empty)
			return 0;
		RAISE(err, ENGI_EPARSE, "%s: empty, no BREP shape", what);
	}
	try {
		std::string buf(data, len);
		std::istringstream in(buf);
		if (is_text_brep(data, len)) {
			BRep_Builder b;
			BRepTools::Read(shape, in, b);
		} else if (!read_bin(in, shape)) {
			RAISE(err, ENGI_EPARSE,
			      "%s: not a readable binary BREP shape (its shape reference is out "
			      "of range)",
			      what);
		}
	} catch (const Standard_Failure &e) {
		shape.Nullify();
		RAISE(err, ENGI_EPARSE, "%s: not a readable BREP shape (%s)", what,
		      e.GetMessageString() ? e.GetMessageString() : "OCCT failure");
	} catch (const std::bad_alloc &) {
		shape.Nullify();
		RAISE(err, ENGI_ENOMEM, "%s: out of memory reading the BREP shape", what);
	} catch (...) {
		shape.Nullify();
		RAISE(err, ENGI_EPARSE, "%s: not a readable BREP shape", what);
	}
	if (shape.IsNull())
		RAISE(err, ENGI_EPARSE, "%s: holds no BREP shape", what);
	return 0;
}

int read_step(const char *path, TopoDS_Shape &shape, struct engi_error *err)
{
	try {
		STEPControl_Reader r;
		if (r.ReadFile(path) != IFSelect_RetDone)
			RAISE(err, ENGI_EPARSE, "'%s': not a readable STEP file", path);
		if (r.TransferRoots() <= 0)
			RAISE(err, ENGI_EPARSE, "'%s': STEP file with no transferable shape", path);
		shape = r.OneShape();
	} catch (const Standard_Failure &e) {
		RAISE(err, ENGI_EPARSE, "'%s': STEP reading failed (%s)", path,
		      e.GetMessageString() ? e.GetMessageString() : "OCCT failure");
	} catch (const std::bad_alloc &) {
		RAISE(err, ENGI_ENOMEM, "'%s': out of memory reading STEP", path);
	} catch (...) {
		RAISE(err, ENGI_EPARSE, "'%s': STEP reading failed", path);
	}
	if (shape.IsNull())
		RAISE(err, ENGI_EPARSE, "'%s': STEP file with no shape", path);
	return 0;
}

double volume_of(const TopoDS_Shape &s)
{
	GProp_GProps p;
	BRepGProp::VolumeProperties(s, p);
	return p.Mass();
}

/* vol: the shape's volume properties when the caller has them already. */
int measure(TopoDS_Shape &shape, const char *what, unsigned flags, struct engi_brep_props *pr,
	    struct engi_error *err, const GProp_GProps *vol = nullptr)
{
	try {
		BRepTools::Clean(shape);
		pr->solids = count(shape, TopAbs_SOLID);
		pr->shells = count(shape, TopAbs_SHELL);
		pr->edges = count(shape, TopAbs_EDGE);
		pr->vertices = count(shape, TopAbs_VERTEX);
		GProp_GProps vp;
		if (vol)
			vp = *vol;
		else
			BRepGProp::VolumeProperties(shape, vp);
		pr->volume = vp.Mass();
		gp_Pnt g = vp.CentreOfMass();
		pr->centroid[0] = g.X();
		pr->centroid[1] = g.Y();
		pr->centroid[2] = g.Z();
		gp_Mat m = vp.MatrixOfInertia();
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++)
				pr->inertia[i][j] = m.Value(i + 1, j + 1);
		GProp_GProps sp;
		BRepGProp::SurfaceProperties(shape, sp);
		pr->area = sp.Mass();

		TopTools_IndexedMapOfShape faces;
		TopExp::MapShapes(shape, TopAbs_FACE, faces);
		pr->faces = (size_t)faces.Extent();
		pr->face = pr->faces
			       ? (struct engi_brep_face *)engi_calloc(pr->faces, sizeof(*pr->face))
			       : nullptr;
		if (pr->faces && !pr->face)
			RAISE(err, ENGI_ENOMEM, "%s: no memory for %zu faces", what, pr->faces);
		double wsum = 0, wc[3] = {0, 0, 0};
		for (int i = 1; i <= faces.Extent(); i++) {
			const TopoDS_Face &f = TopoDS::Face(faces(i));
			struct engi_brep_face *fe = &pr->face[i - 1];
			GProp_GProps fp;
			BRepGProp::SurfaceProperties(f, fp);
			gp_Pnt c = fp.CentreOfMass();
			fe->type = surface_type(f);
			surface_params(f, fe);
			fe->area = fp.Mass();
			fe->centroid[0] = c.X();
			fe->centroid[1] = c.Y();
			fe->centroid[2] = c.Z();
			pr->area_by_type[fe->type] += fe->area;
			wsum += fe->area;
			for (int k = 0; k < 3; k++)
				wc[k] += fe->area * fe->centroid[k];
		}
		for (int k = 0; k < 3; k++)
			pr->face_centre[k] = wsum > 0 ? wc[k] / wsum : 0;

		boxes(shape, pr);
		pr->obb_ok = 0;
		bool capped = (flags & ENGI_BREP_OBB_CAPPED) && pr->faces > ENGI_BREP_OBB_FACES_MAX;
		if (!(flags & ENGI_BREP_NO_OBB) && !capped && pr->volume > 0 &&
		    std::isfinite(pr->volume)) {
			double defl = std::cbrt(pr->volume) * OBB_DEFLECTION_FRACTION;
			BRepMesh_IncrementalMesh mesh(shape, defl, Standard_False,
						      OBB_ANGULAR_DEFLECTION, Standard_False);
			Bnd_OBB box;
			if (mesh.IsDone())
				BRepBndLib::AddOBB(shape, box, Standard_True, Standard_True,
						   Standard_False);
			if (mesh.IsDone() && !box.IsVoid()) {
				pr->obb_ok = 1;
				gp_XYZ c = box.Center();
				const gp_XYZ ax[3] = {box.XDirection(), box.YDirection(),
						      box.ZDirection()};
				pr->obb_centre[0] = c.X();
				pr->obb_centre[1] = c.Y();
				pr->obb_centre[2] = c.Z();
				for (int i = 0; i < 3; i++) {
					pr->obb_axes[i][0] = ax[i].X();
					pr->obb_axes[i][1] = ax[i].Y();
					pr->obb_axes[i][2] = ax[i].Z();
				}
				pr->obb_half[0] = box.XHSize();
				pr->obb_half[1] = box.YHSize();
				pr->obb_half[2] = box.ZHSize();
				for (int i = 0; i < 3; i++)
					pr->obb_sorted[i] = 2 * pr->obb_half[i];
				std::sort(pr->obb_sorted, pr->obb_sorted + 3);
			}
		}
	} catch (const Standard_Failure &e) {
		RAISE(err, ENGI_EPARSE, "%s: measuring the shape failed (%s)", what,
		      e.GetMessageString() ? e.GetMessageString() : "OCCT failure");
	} catch (const std::bad_alloc &) {
		RAISE(err, ENGI_ENOMEM, "%s: out of memory measuring the shape", what);
	} catch (...) {
		RAISE(err, ENGI_EPARSE, "%s: measuring the shape failed", what);
	}
	return 0;
}

/* An FCStd open: the archive bytes, its directory and its objects. */
struct fcstd {
	const char *path;
	char *bytes = nullptr;
	size_t len = 0;
	struct engi_zip zip;
	struct engi_fc_doc doc;
	bool zip_open = false;
	~fcstd()
	{
		if (zip_open)
			engi_zip_release(&zip);
		engi_fc_doc_release(&doc);
		engi_free(bytes);
	}
};

/* The shape of entry name: a null shape when the entry is empty (FreeCAD
 * writes a null shape so); an error when it is absent or unreadable. */
int entry_shape(fcstd &fc, const char *name, TopoDS_Shape &shape, struct engi_error *err)
{
	const struct engi_zip_entry *e = engi_zip_find(&fc.zip, name);
	if (!e)
		RAISE(err, ENGI_EPARSE,
		      "'%s': Document.xml names shape file '%s', which is not in "
		      "the archive",
		      fc.path, name);
	unsigned char *data = nullptr;
	size_t len = 0;
	TRY(engi_zip_extract(&fc.zip, e, ENGI_ZIP_ENTRY_MAX, &data, &len, err));
	char what[ENGI_ERROR_MSG_MAX / 2];
	snprintf(what, sizeof(what), "'%s' entry '%s'", fc.path, name);
	int rc = read_brep_mem((const char *)data, len, what, shape, err, true);
	engi_free(data);
	return rc;
}

int push_feature(struct engi_brep_report *rep, size_t *cap, const struct engi_fc_object *o)
{
	for (size_t i = 0; i < rep->nfeatures; i++)
		if (!strcmp(rep->feature[i].name, o->name))
			return 0;
	if (engi_grow((void **)&rep->feature, cap, rep->nfeatures + 1, sizeof(*rep->feature)))
		return ENGI_ENOMEM;
	struct engi_brep_feature *f = &rep->feature[rep->nfeatures++];
	memcpy(f->name, o->name, sizeof(f->name));
	memcpy(f->type, o->type, sizeof(f->type));
	f->cls = engi_fc_classify(o->type);
	return 1;
}

/* The measured Body's features: its Group and, transitively, BaseFeature
 * links (a FeatureBase's Part-workbench shape). An object outside the
 * allow-list counts when its own shape has faces, as the validator counts
 * shape-bearing leaves. */
int collect_features(fcstd &fc, const struct engi_fc_object *body, struct engi_brep_report *rep,
		     struct engi_error *err)
{
	size_t cap = 0;
	const struct engi_fc_doc *d = &fc.doc;
	for (size_t i = 0; i < body->ngroup; i++) {
		const struct engi_fc_object *o = engi_fc_find(d, d->links[body->group + i]);
		if (o && push_feature(rep, &cap, o) < 0)
			RAISE(err, ENGI_ENOMEM, "'%s': no memory for the feature list", fc.path);
	}
	/* base links, to a fixed point (each pass adds at least one or stops) */
	const struct engi_fc_object *b = body->base[0] ? engi_fc_find(d, body->base) : nullptr;
	if (b && push_feature(rep, &cap, b) < 0)
		RAISE(err, ENGI_ENOMEM, "'%s': no memory for the feature list", fc.path);
	for (size_t i = 0; i < rep->nfeatures; i++) {
		const struct engi_fc_object *o = engi_fc_find(d, rep->feature[i].name);
		const struct engi_fc_object *base =
		    o && o->base[0] ? engi_fc_find(d, o->base) : nullptr;
		if (base && push_feature(rep, &cap, base) < 0)
			RAISE(err, ENGI_ENOMEM, "'%s': no memory for the feature list", fc.path);
	}
	for (size_t i = 0; i < rep->nfeatures; i++) {
		struct engi_brep_feature *f = &rep->feature[i];
		if (f->cls != ENGI_FC_OUTSIDE)
			continue;
		const struct engi_fc_object *o = engi_fc_find(d, f->name);
		if (!o->shape_file[0] || !engi_zip_find(&fc.zip, o->shape_file)) {
			f->cls = ENGI_FC_SHAPELESS;
			continue;
		}
		TopoDS_Shape s;
		struct engi_error e2;
		engi_error_init(&e2);
		/* an unreadable shape of a foreign object is counted: it bears one */
		if (entry_shape(fc, o->shape_file, s, &e2) < 0 || count(s, TopAbs_FACE) > 0) {
			rep->noutside++;
		} else {
			f->cls = ENGI_FC_SHAPELESS;
		}
	}
	return 0;
}

int analyze_fcstd(const char *path, unsigned flags, struct engi_brep_report *rep,
		  struct engi_error *err)
{
	fcstd fc;
	fc.path = path;
	memset(&fc.doc, 0, sizeof(fc.doc));
	TRY(engi_io_slurp(path, nullptr, "FCStd", ENGI_ZIP_FILE_MAX, &fc.bytes, &fc.len, err));
	TRY(engi_zip_open(&fc.zip, fc.bytes, fc.len, path, err));
	fc.zip_open = true;
	TRY(engi_fc_doc_from_zip(&fc.zip, path, &fc.doc, err));
	rep->is_doc = 1;
	rep->objects = fc.doc.n;
	rep->measured = -1;
	size_t nb = 0;
	for (size_t i = 0; i < fc.doc.n; i++)
		nb += !strcmp(fc.doc.objs[i].type, "PartDesign::Body");
	rep->body = nb ? (struct engi_brep_body *)engi_calloc(nb, sizeof(*rep->body)) : nullptr;
	if (nb && !rep->body)
		RAISE(err, ENGI_ENOMEM, "'%s': no memory for %zu bodies", path, nb);
	TopoDS_Shape chosen;
	GProp_GProps chosen_vp;
	const struct engi_fc_object *chosen_obj = nullptr;
	for (size_t i = 0; i < fc.doc.n; i++) {
		const struct engi_fc_object *o = &fc.doc.objs[i];
		if (strcmp(o->type, "PartDesign::Body"))
			continue;
		struct engi_brep_body *b = &rep->body[rep->nbodies++];
		memcpy(b->name, o->name, sizeof(b->name));
		memcpy(b->tip, o->tip, sizeof(b->tip));
		const struct engi_fc_object *tip =
		    o->tip[0] ? engi_fc_find(&fc.doc, o->tip) : nullptr;
		if (o->tip[0] && !tip)
			RAISE(err, ENGI_EPARSE, "'%s': Body '%s' has Tip '%s', which is no object",
			      path, o->name, o->tip);
		if (tip)
			memcpy(b->tip_type, tip->type, sizeof(b->tip_type));
		const char *file = o->shape_file[0]	       ? o->shape_file
				   : tip && tip->shape_file[0] ? tip->shape_file
							       : nullptr;
		if (!file)
			continue;
		snprintf(b->shape_file, sizeof(b->shape_file), "%s", file);
		TopoDS_Shape s;
		TRY(entry_shape(fc, file, s, err));
		if (s.IsNull())
			continue;
		GProp_GProps vp;
		try {
			BRepGProp::VolumeProperties(s, vp);
			b->volume = vp.Mass();
			b->solids = count(s, TopAbs_SOLID);
			b->faces = count(s, TopAbs_FACE);
			b->tip_agrees = 0;
			if (tip && tip->shape_file[0]) {
				TopoDS_Shape ts;
				bool same = !strcmp(tip->shape_file, file);
				if (same)
					ts = s;
				else
					TRY(entry_shape(fc, tip->shape_file, ts, err));
				double tv = same ? b->volume : ts.IsNull() ? 0.0 : volume_of(ts);
				double scale = std::max({std::fabs(b->volume), std::fabs(tv), 1.0});
				b->tip_agrees =
				    count(ts, TopAbs_FACE) == b->faces &&
				    std::fabs(tv - b->volume) <= TIP_VOLUME_REL_TOL * scale;
			}
		} catch (...) {
			RAISE(err, ENGI_EPARSE, "'%s' entry '%s': measuring the shape failed", path,
			      file);
		}
		if (b->volume > 0 && std::isfinite(b->volume)) {
			rep->nonempty++;
			if (rep->measured < 0) {
				rep->measured = (long)(rep->nbodies - 1);
				chosen = s;
				chosen_vp = vp;
				chosen_obj = o;
			}
		}
	}
	if (!chosen_obj)
		RAISE(err, ENGI_ENOTFOUND,
		      "'%s': no PartDesign::Body with a positive-volume shape (%zu bodies)", path,
		      rep->nbodies);
	TRY(collect_features(fc, chosen_obj, rep, err));
	char what[ENGI_ERROR_MSG_MAX / 2];
	snprintf(what, sizeof(what), "'%s' entry '%s'", path, rep->body[rep->measured].shape_file);
	return measure(chosen, what, flags, &rep->props, err, &chosen_vp);
}

/* Some OCCT readers write their warnings to std::cout, which carries the
 * JSON: while the kernel runs they go to std::cerr. */
struct cout_to_cerr {
	std::streambuf *saved;
	cout_to_cerr() : saved(std::cout.rdbuf(std::cerr.rdbuf()))
	{
	}
	~cout_to_cerr()
	{
		std::cout.rdbuf(saved);
	}
	cout_to_cerr(const cout_to_cerr &) = delete;
	cout_to_cerr &operator=(const cout_to_cerr &) = delete;
};

bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcasecmp(s + n - m, suf);
}

} // namespace

extern "C" {

int engi_brep_measure_file(const char *path, unsigned flags, struct engi_brep_report *rep,
			   struct engi_error *err)
{
	memset(rep, 0, sizeof(*rep));
	rep->measured = -1;
	int rc;
	cout_to_cerr quiet;
	try {
		/* OCCT's messenger prints warnings on stdout, which carries the
		 * JSON: what matters comes back as an error */
		Message::DefaultMessenger()->RemovePrinters(STANDARD_TYPE(Message_PrinterOStream));
		if (ends_with(path, ".fcstd")) {
			snprintf(rep->format, sizeof(rep->format), "fcstd");
			rc = analyze_fcstd(path, flags, rep, err);
		} else if (ends_with(path, ".step") || ends_with(path, ".stp")) {
			snprintf(rep->format, sizeof(rep->format), "step");
			TopoDS_Shape s;
			rc = read_step(path, s, err);
			if (rc == 0) {
				char what[ENGI_ERROR_MSG_MAX / 2];
				snprintf(what, sizeof(what), "'%s'", path);
				rc = measure(s, what, flags, &rep->props, err);
			}
		} else if (ends_with(path, ".brep") || ends_with(path, ".brp") ||
			   ends_with(path, ".bin")) {
			snprintf(rep->format, sizeof(rep->format), "brep");
			char *buf = nullptr;
			size_t len = 0;
			rc = engi_io_slurp(path, nullptr, "BREP", ENGI_ZIP_ENTRY_MAX, &buf, &len,
					   err);
			TopoDS_Shape s;
			char what[ENGI_ERROR_MSG_MAX / 2];
			snprintf(what, sizeof(what), "'%s'", path);
			if (rc == 0)
				rc = read_brep_mem(buf, len, what, s, err);
			engi_free(buf);
			if (rc == 0)
				rc = measure(s, what, flags, &rep->props, err);
		} else {
			rc = engi_raise(err, ENGI_EINVALID,
					"'%s': not a known shape file (.FCStd, .step, .stp, .brep, "
					".brp, .bin)",
					path);
		}
	} catch (const std::bad_alloc &) {
		rc = engi_raise(err, ENGI_ENOMEM, "'%s': out of memory", path);
	} catch (...) {
		rc = engi_raise(err, ENGI_EPARSE, "'%s': reading the shape failed", path);
	}
	if (rc < 0)
		engi_brep_report_release(rep);
	return rc;
}

} /* extern "C" */
