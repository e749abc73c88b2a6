"""Compares `engisweep kernel brep --json` output with the analytic values
of tests/brep/gen_fcstd.py: check_brep.py RESULT.json EXPECT.json, or
check_brep.py --same A.json B.json (two readings of one part agree).
Exit 1 with the differences listed."""
import json
import sys

REL = 1e-9
bad = []


def close(what, got, want, scale=None, rel=REL):
    """|got - want| <= rel * max(|want|, scale): scale is the size of the
    quantity, for entries whose analytic value is zero."""
    s = max(abs(want), scale or 0.0)
    if s == 0.0:
        s = 1.0
    if not abs(got - want) <= rel * s:
        bad.append("%s: %.17g, expected %.17g (rel. %.2g)" % (what, got, want, abs(got - want) / s))


def vec(what, got, want, scale, rel=REL):
    for i, (g, w) in enumerate(zip(got, want)):
        close("%s[%d]" % (what, i), g, w, scale, rel)


def props(r, e, rel=REL):
    size = max(e["obb_sorted"])
    close("volume", r["volume"], e["volume"], rel=rel)
    close("area", r["area"], e["area"], rel=rel)
    vec("centroid", r["centroid"], e["centroid"], size, rel)
    iscale = max(abs(e["inertia"][i][i]) for i in range(3))
    for i in range(3):
        vec("inertia[%d]" % i, r["inertia"][i], e["inertia"][i], iscale, rel)
    if set(r["area_by_type"]) != set(e["area_by_type"]):
        bad.append("area_by_type kinds %s, expected %s" % (sorted(r["area_by_type"]),
                                                           sorted(e["area_by_type"])))
    for k, v in e["area_by_type"].items():
        close("area_by_type." + k, r["area_by_type"].get(k, 0.0), v, rel=rel)
    vec("obb.sorted_sizes", r["obb"]["sorted_sizes"], e["obb_sorted"], size, e.get("obb_tol", rel))
    if "face_centre" in e:
        vec("face_centre", r["face_centre"], e["face_centre"], size, rel)
    for k in ("faces", "edges", "vertices", "solids"):
        if r[k] != e[k]:
            bad.append("%s: %d, expected %d" % (k, r[k], e[k]))
    # the face list sums to the area, its weighted centre is face_centre
    fl = r["face_list"]
    if len(fl) != r["faces"]:
        bad.append("face_list has %d faces, faces says %d" % (len(fl), r["faces"]))
    close("sum of face areas", sum(f["area"] for f in fl), r["area"], rel=1e-12)
    wc = [sum(f["area"] * f["centroid"][i] for f in fl) / r["area"] for i in range(3)]
    vec("area-weighted face centroids", wc, r["face_centre"], size, 1e-12)


def document(r, f):
    d = r.get("document")
    if d is None:
        bad.append("no document facts")
        return
    checks = [("body_count", f["bodies"]), ("tip", f["tip"]), ("tip_solids", f["tip_solids"]),
              ("tip_set", True), ("nonempty_bodies", f.get("nonempty", 1)),
              ("outside_allow_list", f["outside_allow_list"])]
    for k, want in checks:
        if d[k] != want:
            bad.append("document.%s: %r, expected %r" % (k, d[k], want))
    names = [x["name"] for x in d["features"]]
    if names != f["features"]:
        bad.append("document.features: %r, expected %r" % (names, f["features"]))
    measured = [b for b in d["bodies"] if b["measured"]]
    if len(measured) != 1 or not measured[0]["tip_agrees"]:
        bad.append("document.bodies: measured %r" % measured)


def same(a, b):
    """Two readings of one part: equal counts and properties to 1e-9."""
    e = {k: b[k] for k in ("volume", "area", "centroid", "inertia", "area_by_type", "faces",
                           "edges", "vertices", "solids", "face_centre")}
    e["obb_sorted"] = b["obb"]["sorted_sizes"]
    e["obb_tol"] = 1e-6  # a mesh of another reading's geometry
    props(a, e)


if sys.argv[1] == "--same":
    same(json.load(open(sys.argv[2])), json.load(open(sys.argv[3])))
else:
    r, e = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    props(r, e)
    document(r, e["document"])
if bad:
    print("\n".join("  " + b for b in bad))
    sys.exit(1)
