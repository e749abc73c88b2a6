# Generates the FreeCAD documents of the brep kernel tests, run by
# freecadcmd (FreeCAD 0.20): ENGI_BREP_OUT names the folder. Next to each
# NAME.FCStd it writes NAME.expect.json with the analytic values (computed
# here from the parameters, never from FreeCAD's shapes) and the document
# facts the kernel must report; plate.step, plate.brep and plate.bin are the
# plate exported by FreeCAD, for the reader agreement test; plate_tess_*
# and plate_bin are plate.FCStd with its shapes rewritten: carrying a
# coarse or a fine triangulation, or in FreeCAD's binary format.
import json
import math
import os
import sys
import zipfile

import FreeCAD as App
import Part
import Sketcher

OUT = os.environ["ENGI_BREP_OUT"]
V = App.Vector
PI = math.pi


def body(doc, name="Body"):
    return doc.addObject("PartDesign::Body", name)


def rect_sketch(doc, b, name, w, h):
    s = b.newObject("Sketcher::SketchObject", name)
    s.Support = (doc.getObject(b.Origin.OriginFeatures[3].Name), [""])  # XY plane
    s.MapMode = "FlatFace"
    p = [V(0, 0, 0), V(w, 0, 0), V(w, h, 0), V(0, h, 0)]
    for i in range(4):
        s.addGeometry(Part.LineSegment(p[i], p[(i + 1) % 4]), False)
    return s


def circles_sketch(doc, b, name, centres, r):
    s = b.newObject("Sketcher::SketchObject", name)
    s.Support = (doc.getObject(b.Origin.OriginFeatures[3].Name), [""])
    s.MapMode = "FlatFace"
    for c in centres:
        s.addGeometry(Part.Circle(V(c[0], c[1], 0), V(0, 0, 1), r), False)
    return s


def plate(doc, b, w, h, t, holes, r):
    pad = b.newObject("PartDesign::Pad", "Pad")
    pad.Profile = rect_sketch(doc, b, "PlateSketch", w, h)
    pad.Length = t
    doc.recompute()
    if holes:
        pocket = b.newObject("PartDesign::Pocket", "Pocket")
        pocket.Profile = circles_sketch(doc, b, "HoleSketch", holes, r)
        pocket.Type = "ThroughAll"
        pocket.Midplane = True  # through the plate whichever way the sketch faces
        doc.recompute()
    return b


def box_expect(lx, ly, lz, c0=(0, 0, 0)):
    m = lx * ly * lz
    return {
        "volume": m,
        "area": 2 * (lx * ly + ly * lz + lx * lz),
        "centroid": [c0[0] + lx / 2, c0[1] + ly / 2, c0[2] + lz / 2],
        "inertia": [[m * (ly * ly + lz * lz) / 12, 0, 0], [0, m * (lx * lx + lz * lz) / 12, 0],
                    [0, 0, m * (lx * lx + ly * ly) / 12]],
        "area_by_type": {"plane": 2 * (lx * ly + ly * lz + lx * lz)},
        "obb_sorted": sorted([lx, ly, lz]),
    }


def plate_expect(w, h, t, holes, r):
    """A w x h x t plate at the origin with through holes of radius r along z."""
    mp = w * h * t
    mh = PI * r * r * t
    m = mp - len(holes) * mh
    cx = (mp * w / 2 - sum(mh * c[0] for c in holes)) / m
    cy = (mp * h / 2 - sum(mh * c[1] for c in holes)) / m
    cz = t / 2
    # second moments about the origin, then about the centroid
    def box_origin(i, j):
        # integral of x_i x_j over the box [0,w]x[0,h]x[0,t]
        L = [w, h, t]
        if i == j:
            return mp * L[i] * L[i] / 3
        return mp * L[i] / 2 * L[j] / 2
    def hole_origin(c, i, j):
        # integral of x_i x_j over a cylinder centred (c0, c1) from z 0 to t
        mu = [c[0], c[1], t / 2]
        own = [[mh * r * r / 4, 0, 0], [0, mh * r * r / 4, 0], [0, 0, mh * t * t / 12]]
        return own[i][j] + mh * mu[i] * mu[j]
    S = [[box_origin(i, j) - sum(hole_origin(c, i, j) for c in holes) for j in range(3)]
         for i in range(3)]
    g = [cx, cy, cz]
    C = [[S[i][j] - m * g[i] * g[j] for j in range(3)] for i in range(3)]
    tr = C[0][0] + C[1][1] + C[2][2]
    # OCCT's matrix: diagonal = integral of the other two squares, off-diagonal = -integral
    I = [[(tr - C[i][i]) if i == j else -C[i][j] for j in range(3)] for i in range(3)]
    cyl = len(holes) * 2 * PI * r * t
    planes = 2 * (w * h - len(holes) * PI * r * r) + 2 * (w + h) * t
    exp = {
        "volume": m,
        "area": planes + cyl,
        "centroid": g,
        "inertia": I,
        "area_by_type": {"plane": planes},
        "obb_sorted": sorted([w, h, t]),
    }
    if holes:
        exp["area_by_type"]["cylinder"] = cyl
    return exp


def save(doc, name, expect, facts):
    doc.recompute()
    path = os.path.join(OUT, name + ".FCStd")
    doc.saveAs(path)
    expect["document"] = facts
    with open(os.path.join(OUT, name + ".expect.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
    App.closeDocument(doc.Name)


def plate_doc(name, holes, moved=None):
    doc = App.newDocument(name)
    b = plate(doc, body(doc), 100.0, 60.0, 10.0, holes, 5.0)
    b.Tip = doc.getObject("Pocket") or doc.getObject("Pad")
    feats = ["Pad", "PlateSketch", "Pocket", "HoleSketch"] if holes else ["Pad", "PlateSketch"]
    return doc, b, feats


W, H, T, R = 100.0, 60.0, 10.0, 5.0
HOLES = [(25.0, 30.0), (75.0, 30.0)]

# plate with two holes, and its STEP and BREP exports
doc, b, feats = plate_doc("plate", HOLES)
shape = b.Shape.copy()
shape.exportStep(os.path.join(OUT, "plate.step"))
shape.exportBrep(os.path.join(OUT, "plate.brep"))
e = plate_expect(W, H, T, HOLES, R)
e.update({"faces": 8, "vertices": 12, "edges": 18, "solids": 1})
e["face_centre"] = [W / 2, H / 2, T / 2]
save(doc, "plate", e, {"bodies": 1, "tip": "Pocket", "tip_solids": 1,
                       "features": feats, "outside_allow_list": []})

shape.exportBinary(os.path.join(OUT, "plate.bin"))


def variant(src, dst, rewrite):
    """dst: src with each .brp entry passed through rewrite(name, text) -> (name, bytes)."""
    renames = {}
    with zipfile.ZipFile(os.path.join(OUT, src + ".FCStd")) as zi:
        entries = [(i, zi.read(i.filename)) for i in zi.infolist()]
    out = []
    for info, data in entries:
        if info.filename.endswith(".brp"):
            name, data = rewrite(info.filename, data.decode())
            renames[info.filename] = name
            out.append((name, data))
        else:
            out.append((info.filename, data))
    with zipfile.ZipFile(os.path.join(OUT, dst + ".FCStd"), "w", zipfile.ZIP_DEFLATED) as zo:
        for name, data in out:
            if name == "Document.xml":
                text = data.decode()
                for a, b in renames.items():
                    text = text.replace('file="%s"' % a, 'file="%s"' % b)
                data = text.encode()
            zo.writestr(name, data)
    with open(os.path.join(OUT, src + ".expect.json")) as f:
        e = json.load(f)
    with open(os.path.join(OUT, dst + ".expect.json"), "w") as f:
        json.dump(e, f, indent=1, sort_keys=True)


def tessellated(deflection):
    def rewrite(name, text):
        s = Part.Shape()
        s.importBrepFromString(text)
        if s.Faces:
            s.tessellate(deflection)
        out = s.exportBrepToString()
        assert not s.Faces or "Triangulations" in out, name
        return name, out.encode()
    return rewrite


def binary(name, text):
    s = Part.Shape()
    s.importBrepFromString(text)
    path = os.path.join(OUT, "tmp.bin")
    s.exportBinary(path)
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    return name[:-4] + ".bin", data


variant("plate", "plate_tess_coarse", tessellated(5.0))
variant("plate", "plate_tess_fine", tessellated(0.01))
variant("plate", "plate_bin", binary)

# the same plate, one hole moved
MOVED = [(25.0, 20.0), (75.0, 30.0)]
doc, b, feats = plate_doc("plate_moved", MOVED)
e = plate_expect(W, H, T, MOVED, R)
e.update({"faces": 8, "vertices": 12, "edges": 18, "solids": 1})
save(doc, "plate_moved", e, {"bodies": 1, "tip": "Pocket", "tip_solids": 1,
                             "features": feats, "outside_allow_list": []})

# the plate whose pocket feature is missing
doc, b, feats = plate_doc("plate_missing", [])
e = plate_expect(W, H, T, [], R)
e.update({"faces": 6, "vertices": 8, "edges": 12, "solids": 1})
e["face_centre"] = [W / 2, H / 2, T / 2]
save(doc, "plate_missing", e, {"bodies": 1, "tip": "Pad", "tip_solids": 1,
                               "features": feats, "outside_allow_list": []})

# a PartDesign box and a cylinder
doc = App.newDocument("box")
b = body(doc)
bx = b.newObject("PartDesign::AdditiveBox", "Box")
bx.Length, bx.Width, bx.Height = 40.0, 30.0, 10.0
doc.recompute()
b.Tip = bx
e = box_expect(40.0, 30.0, 10.0)
e["face_centre"] = e["centroid"]
e.update({"faces": 6, "vertices": 8, "edges": 12, "solids": 1})
save(doc, "box", e, {"bodies": 1, "tip": "Box", "tip_solids": 1, "features": ["Box"],
                     "outside_allow_list": []})

doc = App.newDocument("cylinder")
b = body(doc)
cy = b.newObject("PartDesign::AdditiveCylinder", "Cylinder")
cr, ch = 5.0, 20.0
cy.Radius, cy.Height = cr, ch
doc.recompute()
b.Tip = cy
m = PI * cr * cr * ch
e = {
    "volume": m,
    "area": 2 * PI * cr * cr + 2 * PI * cr * ch,
    "centroid": [0.0, 0.0, ch / 2],
    "inertia": [[m * (3 * cr * cr + ch * ch) / 12, 0, 0], [0, m * (3 * cr * cr + ch * ch) / 12, 0],
                [0, 0, m * cr * cr / 2]],
    "area_by_type": {"plane": 2 * PI * cr * cr, "cylinder": 2 * PI * cr * ch},
    "obb_sorted": sorted([2 * cr, 2 * cr, ch]),
    "obb_tol": 1e-3,  # the box is made on a mesh of the curved face
    "face_centre": [0.0, 0.0, ch / 2],
    "faces": 3, "vertices": 2, "edges": 3, "solids": 1,
}
save(doc, "cylinder", e, {"bodies": 1, "tip": "Cylinder", "tip_solids": 1,
                          "features": ["Cylinder"], "outside_allow_list": []})

# two bodies: a box each, the second moved; the first is the one measured
doc = App.newDocument("two_bodies")
for i, nm in enumerate(["Body", "Body001"]):
    b = body(doc, nm)
    bx = b.newObject("PartDesign::AdditiveBox", "Box%d" % i)
    bx.Length, bx.Width, bx.Height = 20.0, 20.0, 20.0
    if i:
        bx.Placement = App.Placement(V(50, 0, 0), App.Rotation())
    doc.recompute()
    b.Tip = bx
e = box_expect(20.0, 20.0, 20.0)
e.update({"faces": 6, "vertices": 8, "edges": 12, "solids": 1})
e["face_centre"] = e["centroid"]
save(doc, "two_bodies", e, {"bodies": 2, "nonempty": 2, "tip": "Box0", "tip_solids": 1,
                            "features": ["Box0"], "outside_allow_list": []})

# a Body built on a Part-workbench box (a BaseFeature): outside the allow-list
doc = App.newDocument("part_box")
pb = doc.addObject("Part::Box", "PartBox")
pb.Length, pb.Width, pb.Height = 10.0, 20.0, 30.0
doc.recompute()
b = body(doc)
b.BaseFeature = pb
doc.recompute()
e = box_expect(10.0, 20.0, 30.0)
e.update({"faces": 6, "vertices": 8, "edges": 12, "solids": 1})
save(doc, "part_box", e, {"bodies": 1, "tip": "BaseFeature", "tip_solids": 1,
                          "features": ["BaseFeature", "PartBox"],
                          "outside_allow_list": ["PartBox"]})
# a Body whose Tip is cleared: no shape to measure
doc = App.newDocument("no_tip")
b = body(doc)
bx = b.newObject("PartDesign::AdditiveBox", "Box")
doc.recompute()
b.Tip = None
doc.recompute()
save(doc, "no_tip", {"refused": "no PartDesign::Body with a positive-volume shape"}, {})
print("gen_fcstd: wrote", sorted(os.listdir(OUT)))
sys.exit(0)
