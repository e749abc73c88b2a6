# Generates the FreeCAD documents of the spec-side tests (tests/integration/
# pcb_spec.sh), run by freecadcmd: ENGI_PCB_OUT names the folder. Beside
# each NAME.FCStd it writes NAME.tree.json, the feature-tree values as
# FreeCAD's own Python API gives them after a recompute (the listed numeric
# properties, angles in radians; each sketch's non-construction circles,
# arcs and line lengths by geometry index; its angle constraints), so that
# the test compares engisweep's reading of Document.xml with FreeCAD's; and
# the Body's cylinder faces (radius, axis, orientation) for its clusters.
#   spec_plate: a 40 x 30 x 5 pad with four r 2.5 holes 20 by 10 apart
#     (a sketch of four circles, with a construction line and circle),
#     and an unused sketch of two lines 30 degrees apart with an angle
#     constraint and an arc;
#   spec_flange: a disc of r 25 and 6 high with one r 3 hole on a 30 mm
#     pitch circle repeated 6 times by a PolarPattern, and a 1 mm fillet.
import json
import math
import os
import sys

import FreeCAD as App
import Part
import Sketcher

OUT = os.environ["ENGI_PCB_OUT"]
V = App.Vector
NAMES = ["Length", "Length2", "Radius", "Radius1", "Radius2", "Diameter", "Depth", "Size",
         "Height", "Width", "Angle", "Angle1", "Angle2", "TaperAngle", "TaperAngle2",
         "MajorRadius", "MinorRadius", "Occurrences"]
ANGLES = {"Angle", "Angle1", "Angle2", "TaperAngle", "TaperAngle2"}
SKIP = {"App::Origin", "App::Line", "App::Plane", "App::DocumentObjectGroup",
        "PartDesign::CoordinateSystem"}


def number(v):
    if hasattr(v, "Value"):
        return float(v.Value)
    if isinstance(v, (bool, int, float)):
        return float(v)
    return None


def tree(doc):
    out = []
    for o in doc.Objects:
        if o.TypeId in SKIP:
            continue
        props = {}
        for n in NAMES:
            if n in o.PropertiesList:
                v = number(getattr(o, n))
                if v is not None:
                    props[n] = math.radians(v) if n in ANGLES else v
        if o.TypeId == "Sketcher::SketchObject":
            for k, g in enumerate(o.Geometry):
                if o.getConstruction(k):
                    continue
                t = type(g).__name__
                if "Circle" in t:
                    props["Geometry[%d].CircleRadius" % k] = g.Radius
                    if "Arc" in t:
                        props["Geometry[%d].ArcRadius" % k] = g.Radius
                elif t == "LineSegment":
                    props["Geometry[%d].LineLength" % k] = (g.EndPoint - g.StartPoint).Length
            for i, c in enumerate(o.Constraints):
                if c.Type == "Angle":
                    props["Constraint[%d].Angle" % i] = float(c.Value)
        out.append({"name": o.Name, "properties": props})
    return out


def new(name):
    doc = App.newDocument(name)
    return doc, doc.addObject("PartDesign::Body", "Body")


def cylinders(body):
    # each cylinder face of the Body's shape, in its order: radius, axis and
    # whether its orientation is Forward (the validator's "convex")
    out = []
    for f in body.Shape.Faces:
        if type(f.Surface).__name__ == "Cylinder":
            a = f.Surface.Axis
            out.append({"radius": f.Surface.Radius, "axis": [a.x, a.y, a.z],
                        "forward": f.Orientation == "Forward"})
    return out


def save(doc, name):
    doc.recompute()
    doc.saveAs(os.path.join(OUT, name + ".FCStd"))
    with open(os.path.join(OUT, name + ".tree.json"), "w") as f:
        json.dump({"tree": tree(doc), "cylinders": cylinders(doc.getObject("Body"))}, f,
                  indent=1)
    App.closeDocument(doc.Name)


def sketch(doc, b, name):
    s = b.newObject("Sketcher::SketchObject", name)
    s.Support = (doc.getObject(b.Origin.OriginFeatures[3].Name), [""])
    s.MapMode = "FlatFace"
    return s


def rect(s, w, h):
    p = [V(0, 0, 0), V(w, 0, 0), V(w, h, 0), V(0, h, 0)]
    for i in range(4):
        s.addGeometry(Part.LineSegment(p[i], p[(i + 1) % 4]), False)


doc, b = new("spec_plate")
s = sketch(doc, b, "PlateSketch")
rect(s, 40.0, 30.0)
pad = b.newObject("PartDesign::Pad", "Pad")
pad.Profile = s
pad.Length = 5.0
doc.recompute()
hs = sketch(doc, b, "HoleSketch")
for c in [(10, 10), (30, 10), (10, 20), (30, 20)]:
    hs.addGeometry(Part.Circle(V(c[0], c[1], 0), V(0, 0, 1), 2.5), False)
hs.addGeometry(Part.LineSegment(V(0, 0, 0), V(40, 30, 0)), True)  # construction
hs.addGeometry(Part.Circle(V(20, 15, 0), V(0, 0, 1), 7.0), True)  # construction
pocket = b.newObject("PartDesign::Pocket", "Pocket")
pocket.Profile = hs
pocket.Type = "ThroughAll"
pocket.Midplane = True
doc.recompute()
a = sketch(doc, b, "AngleSketch")
a.addGeometry(Part.LineSegment(V(0, 0, 0), V(10, 0, 0)), False)
a.addGeometry(Part.LineSegment(V(0, 0, 0), V(10 * math.cos(math.pi / 6),
                                             10 * math.sin(math.pi / 6), 0)), False)
a.addConstraint(Sketcher.Constraint("Angle", 0, 1, 1, 1, math.pi / 6))
a.addGeometry(Part.ArcOfCircle(Part.Circle(V(0, 0, 0), V(0, 0, 1), 4.0), 0.0, math.pi / 6),
              False)
b.Tip = pocket
save(doc, "spec_plate")

doc, b = new("spec_flange")
s = sketch(doc, b, "DiscSketch")
s.addGeometry(Part.Circle(V(0, 0, 0), V(0, 0, 1), 25.0), False)
pad = b.newObject("PartDesign::Pad", "Pad")
pad.Profile = s
pad.Length = 6.0
doc.recompute()
hs = sketch(doc, b, "HoleSketch")
hs.addGeometry(Part.Circle(V(15, 0, 0), V(0, 0, 1), 3.0), False)
pocket = b.newObject("PartDesign::Pocket", "Pocket")
pocket.Profile = hs
pocket.Type = "ThroughAll"
pocket.Midplane = True
doc.recompute()
pp = b.newObject("PartDesign::PolarPattern", "PolarPattern")
pp.Originals = [pocket]
pp.Axis = (doc.getObject(b.Origin.OriginFeatures[2].Name), [""])
pp.Angle = 360
pp.Occurrences = 6
b.Tip = pp
doc.recompute()
top = max(pp.Shape.Edges, key=lambda e: (e.BoundBox.ZMax + e.BoundBox.ZMin, e.Length))
idx = [i for i, e in enumerate(pp.Shape.Edges) if e.isSame(top)][0]
fl = b.newObject("PartDesign::Fillet", "Fillet")
fl.Base = (pp, ["Edge%d" % (idx + 1)])
fl.Radius = 1.0
b.Tip = fl
doc.recompute()
b.Tip = fl
save(doc, "spec_flange")

print("gen_spec: wrote", sorted(os.listdir(OUT)))
sys.exit(0)
