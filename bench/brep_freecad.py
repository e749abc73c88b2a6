# The freecadcmd side of bench/brep_bench: what `engisweep kernel brep`
# extracts, through FreeCAD's Python on Part shapes. ENGI_BENCH_FILE names
# the document, ENGI_BENCH_REPS the repetitions; with ENGI_BENCH_GEN set it
# first writes a plate of ENGI_BENCH_GEN x ENGI_BENCH_GEN/2 holes there.
# Prints "name value" lines: the fastest repetition (open the document,
# take the first PartDesign::Body with volume, measure it, close), the
# volume and the area.
import os
import sys
import time

import FreeCAD as App
import Part
import Sketcher

path = os.environ["ENGI_BENCH_FILE"]
if os.environ.get("ENGI_BENCH_GEN"):
    n = int(os.environ["ENGI_BENCH_GEN"])
    V = App.Vector
    doc = App.newDocument("bench")
    b = doc.addObject("PartDesign::Body", "Body")
    xy = doc.getObject(b.Origin.OriginFeatures[3].Name)
    w, h, t = 10.0 * n, 5.0 * n, 4.0
    s = b.newObject("Sketcher::SketchObject", "Plate")
    s.Support, s.MapMode = (xy, [""]), "FlatFace"
    p = [V(0, 0, 0), V(w, 0, 0), V(w, h, 0), V(0, h, 0)]
    for i in range(4):
        s.addGeometry(Part.LineSegment(p[i], p[(i + 1) % 4]), False)
    pad = b.newObject("PartDesign::Pad", "Pad")
    pad.Profile, pad.Length = s, t
    doc.recompute()
    c = b.newObject("Sketcher::SketchObject", "Holes")
    c.Support, c.MapMode = (xy, [""]), "FlatFace"
    for i in range(n):
        for j in range(n // 2):
            c.addGeometry(Part.Circle(V(5 + 10 * i, 5 + 10 * j, 0), V(0, 0, 1), 3.0), False)
    pocket = b.newObject("PartDesign::Pocket", "Pocket")
    pocket.Profile, pocket.Type, pocket.Midplane = c, "ThroughAll", True
    doc.recompute()
    # rounded hole edges on the top face: tori and B-splines beside planes and cylinders
    top = ["Edge%d" % (k + 1) for k, e in enumerate(pocket.Shape.Edges)
           if abs(e.CenterOfMass.z - t) < 1e-9 and type(e.Curve).__name__ == "Circle"]
    fil = b.newObject("PartDesign::Fillet", "Fillet")
    fil.Base = (pocket, top)
    fil.Radius = 0.5
    doc.recompute()
    b.Tip = fil
    doc.recompute()
    doc.saveAs(path)
    App.closeDocument(doc.Name)

reps = int(os.environ.get("ENGI_BENCH_REPS", "5"))
best = None
for _ in range(reps):
    t0 = time.perf_counter()
    doc = App.openDocument(path)
    body = next(o for o in doc.Objects if o.TypeId == "PartDesign::Body" and not o.Shape.isNull()
                and o.Shape.Volume > 0)
    s = body.Shape
    props = {
        "volume": s.Volume, "area": s.Area, "centroid": s.CenterOfMass,
        "inertia": s.MatrixOfInertia, "solids": len(s.Solids), "shells": len(s.Shells),
        "faces": len(s.Faces), "edges": len(s.Edges), "vertices": len(s.Vertexes),
    }
    by_type, faces = {}, []
    for f in s.Faces:
        k = type(f.Surface).__name__
        by_type[k] = by_type.get(k, 0.0) + f.Area
        faces.append((f.Area, f.CenterOfMass))
    dt = time.perf_counter() - t0
    App.closeDocument(doc.Name)
    best = dt if best is None else min(best, dt)
print("\nfreecad_extract_s %.6f" % best)
print("freecad_volume %.17g" % props["volume"])
print("freecad_area %.17g" % props["area"])
print("freecad_faces %d" % props["faces"])
sys.exit(0)
