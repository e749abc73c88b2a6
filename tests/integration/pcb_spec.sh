# The spec side of pcb-v2 (verifiers/pcb_tree.c, pcb_check.c): the
# validator 0.6.0's spec-consistency checks on FreeCAD documents freecadcmd
# makes here (tests/brep/gen_spec.py):
# - the feature tree read from Document.xml equals FreeCAD's own view of
#   it after a recompute (each listed property, angles in radians, each
#   sketch's non-construction circles, arcs and lines, angle constraints),
#   and the cylinder clusters equal those grouped here from FreeCAD's faces;
# - each parameter of two specs of our own (text and object forms) lands in
#   the state its construction gives it, through the validator's quirks
#   (a "corner" key is a position; a string is never found);
# - the score spends the failure budget of 10;
# - a task declaring the spec gets spec_consistency and the harmonic mean
#   with the geometry; a spec the validator would raise on, one it finds no
#   parameter in (it scores everyone 0), or a spec file that does not read,
#   is unavailable, never a score; declarations that
#   cannot work are refused before anything runs.
. "$(dirname "$0")/lib.sh"
export ENGI_BREP_CACHE="$T/brep-cache"
[ "${ENGI_BREP:?}" = ON ] || { echo "ok: no B-rep kernel in this build: nothing to measure (pcb_scoring checks that it says so)"; exit 0; }
freecad_docs "$ENGI_SRC/tests/brep/gen_spec.py" ENGI_PCB_OUT "gen_spec: wrote"

for d in spec_plate spec_flange; do
	"$ENGISWEEP" kernel brep --json --no-obb "$CACHE/$d.FCStd" > "$d.json"
done
"$PY" - "$CACHE" <<'PY'
import json, math, sys
cache = sys.argv[1]
for d in ("spec_plate", "spec_flange"):
    want = json.load(open("%s/%s.tree.json" % (cache, d)))
    got = json.load(open(d + ".json"))["spec_bank"]
    tree = {f["name"]: f["properties"] for f in got["features"]["tree"]}
    for o in want["tree"]:
        g = tree.pop(o["name"], None)
        assert g is not None, "%s: object %s missing from the tree" % (d, o["name"])
        assert set(g) == set(o["properties"]), (d, o["name"], sorted(g), sorted(o["properties"]))
        for k, v in o["properties"].items():
            assert abs(g[k] - v) <= 1e-9 * max(1, abs(v)), (d, o["name"], k, g[k], v)
    assert not tree, "%s: objects FreeCAD does not list: %s" % (d, sorted(tree))
    # cylinder clusters, grouped here from FreeCAD's faces by the
    # validator's rule: same orientation, radius within 1 %, axis 2 degrees
    cl = []
    for c in want["cylinders"]:
        n = math.sqrt(sum(x * x for x in c["axis"]))
        ax = [x / n for x in c["axis"]]
        for k in cl:
            if (k["convex"] == c["forward"]
                    and abs(k["radius"] - c["radius"]) / max(k["radius"], c["radius"]) <= 0.01
                    and abs(sum(a * b for a, b in zip(k["axis"], ax))) >= math.cos(math.radians(2))):
                k["count"] += 1
                break
        else:
            cl.append({"convex": c["forward"], "radius": c["radius"], "axis": ax, "count": 1})
    gc = got["cylinder_clusters"]
    assert [(k["convex"], k["count"]) for k in cl] == [(k["convex"], k["count"]) for k in gc], (cl, gc)
    for a, b in zip(cl, gc):
        assert abs(a["radius"] - b["radius"]) <= 1e-9, (a, b)
plate = json.load(open("spec_plate.json"))["spec_bank"]["features"]
# four r 2.5 holes 20 by 10 apart: the sketch's grid and the pocket's
g = plate["grids"][0]
assert (g["count"], g["rows"], g["cols"], g["spacing_rows"], g["spacing_cols"]) == (4, 2, 2, 10.0, 20.0), g
assert len(plate["grids"]) == 2 and not plate["circular_patterns"], plate
# the rectangle's four right angles, the 30-degree pair and the arc's lines
assert plate["line_angle_count"] == 5 and sorted(plate["line_angles"]) == sorted([round(math.pi / 2, 10)] * 4 + [round(math.pi / 6, 10)]), plate["line_angles"]
fl = json.load(open("spec_flange.json"))["spec_bank"]["features"]
c = fl["circular_patterns"]
assert len(c) == 1 and c[0]["count"] == 6 and abs(c[0]["radius"] - 15) < 1e-9, c
assert abs(c[0]["angular_pitch"] - math.pi / 3) < 1e-9, c
print("ok: the feature tree and clusters are FreeCAD's")
PY

cat > plate_spec.json <<'J'
{"name": "plate", "description": "a plate with four holes",
 "key_parameters": "- **Plate**: length = 40 mm, width = 30 mm, thickness = 5 mm\n- hole_diameter = 5 mm, hole_count = 4, hole_spacing = 20 mm, row_spacing = 10 mm\n- hole_rows = 2, hole_columns = 2, fillet_radius = 7 mm, material = aluminium\n- corner_angle = 90 deg, draft_angle = 30 deg, slot_width = 12 mm, part_origin = (0, 0, 0) mm\n- hole_center = (10, 5, 0) mm, volume = 5607.3 mm, arc_radius = 4 mm, bolt_count = 6, hole_count = 4.5 mm\n- overall length = 4 x 10 mm, pitch = 100/5 mm"}
J
cat > flange_spec.json <<'J'
{"name": "flange", "key_parameters": {"outer_diameter": {"value": 50, "unit": "mm"}, "thickness": {"value": 6, "unit": "mm"},
 "holes": {"hole_count": 6, "hole_pcd": {"value": 30, "unit": "mm"}, "hole_diameter": {"value": 6, "unit": "mm"}},
 "fillet_radius": {"value": 1, "unit": "mm"}, "pattern_angle": {"value": 360, "unit": "deg"},
 "bolt_circle_radius": {"value": 15, "unit": "mm"}, "rib_count": 3}}
J
"$ENGISWEEP" kernel brep --json --no-obb --spec plate_spec.json "$CACHE/spec_plate.FCStd" > plate.spec.json
"$ENGISWEEP" kernel brep --json --no-obb --spec flange_spec.json "$CACHE/spec_flange.FCStd" > flange.spec.json
"$ENGISWEEP" kernel brep --no-obb --spec plate_spec.json "$CACHE/spec_plate.FCStd" > plate.spec.txt
grep -q "^spec .*score 0.3\$" plate.spec.txt || { cat plate.spec.txt; fail "the text report does not give the spec's score"; }
"$PY" - <<'PY'
import json
def states(f):
    s = json.load(open(f))["spec"]
    return s, [(x["key"], x["check"], x["state"]) for x in s["findings"]]
s, st = states("plate.spec.json")
# scalars, vectors, counts, strings, each in the order first given
want = [
    ("length", "length", "consistent"), ("width", "length", "consistent"),
    ("thickness", "thickness", "consistent"), ("hole_diameter", "diameter", "consistent"),
    ("hole_spacing", "distance", "consistent"), ("row_spacing", "distance", "consistent"),
    ("fillet_radius", "radius", "inconsistent"),         # 7 against 2.5 and 4
    ("corner_angle", "vector", "not_found"),             # "corner" routes to positions
    ("draft_angle", "angle", "consistent"),              # the 30-degree line pair
    ("slot_width", "length", "inconsistent"),
    ("volume", "volume", "consistent"), ("arc_radius", "radius", "consistent"),
    ("hole_count", "count", "inconsistent"),             # 4.5 mm: a scalar, not whole
    ("overall", "none", "not_found"),                    # the key stops at the space
    ("part_origin", "vector", "consistent"),             # the box's lower corner
    ("hole_center", "vector", "consistent"),             # a hole less the centroid
    ("hole_count", "count", "consistent"),               # the same key as a count
    ("hole_rows", "count", "consistent"), ("hole_columns", "count", "consistent"),
    ("bolt_count", "count", "not_found"),                # "bolt" is no counted noun
    ("material", "none", "not_found"),                   # strings are never found
]
assert st == want, [(g, w) for g, w in zip(st, want) if g != w] or (len(st), len(want))
# "pitch = 100/5 mm" is an expression: dropped, as the validator drops it
assert s["total"] == 21 and s["consistent"] == 14 and s["inconsistent"] == 3 and s["not_found"] == 4, s
assert abs(s["score"] - (1 - 7 / 10)) < 1e-12, s   # 7 failures of a budget of 10
s, st = states("flange.spec.json")
assert all(x[2] == "consistent" for x in st if x[0] != "rib_count"), st
assert ("rib_count", "count", "inconsistent") in st, st  # the 6 holes, pattern and Occurrences
assert abs(s["score"] - 8 / 9) < 1e-12, s              # under 10 parameters: the rate
print("ok: each parameter's state and the budgeted score")
PY

# ---- as a task's verifier ----
mkdir -p t/ref art
cp "$CACHE/spec_plate.FCStd" t/ref/ref.FCStd
cp "$CACHE/spec_plate.FCStd" art/answer.FCStd
cp plate_spec.json t/ref/spec.json
printf '{"name": "v", "key_parameters": "hole_diameter = (5, 6) mm"}' > t/ref/vector.json
printf '{"name": "broken", ' > t/ref/broken.json
printf '{"name": "empty", "key_parameters": "a plate, 40 by 30, pitch = 100/5 mm"}' > t/ref/empty.json
task() { # SPEC [GEOMETRY]
	cat > t/task.json <<J
{"schema": 1, "id": "pcb-spec", "title": "pcb-v2 with a spec", "domain": "CAD", "software": ["freecad"],
 "type": "single", "interface": "cli", "instruction": "Model the plate in FreeCAD; save answer.FCStd.",
 "environment": {"image": "tools"}, "deliverables": [{"path": "answer.FCStd"}],
 "verifier": {"kind": "cad_similarity", "file": "answer.FCStd", "reference": "ref/ref.FCStd",
   "geometry": "${2:-pcb-v2}", "spec": "$1",
   "criteria": [{"name": "geometry", "check": "similarity", "min": 0.9},
                {"name": "spec", "check": "spec_consistency", "min": 0.5},
                {"name": "score", "check": "pcb_score", "min": 0.5}]},
 "reference": [{"write": "answer.FCStd", "from": "ref/ref.FCStd"}, {"done": "saved"}]}
J
}
task ref/spec.json
"$ENGISWEEP" judge --out same.json t/task.json art > same.txt 2>&1 || { cat same.txt; fail "judge"; }
"$PY" - <<'PY'
import json
r = json.load(open("same.json"))
a = {x["name"]: x for x in r["assertions"]}
m = r["metrics"] if isinstance(r["metrics"], dict) else {x["name"]: x["value"] for x in r["metrics"]}
assert abs(m["geometry_similarity"] - 1) < 1e-12, m
assert abs(m["spec_consistency"] - 0.3) < 1e-12, m
assert (m["spec_consistent"], m["spec_inconsistent"], m["spec_not_found"]) == (14, 3, 4), m
assert abs(m["pcb_score"] - 2 * 0.3 / 1.3) < 1e-12, m   # the harmonic mean
assert a["geometry"]["state"] == "pass" and a["spec"]["state"] == "fail" and a["score"]["state"] == "fail", a
assert a["spec"]["stage"] == "specification", a["spec"]
assert "fillet_radius" in a["spec"]["detail"] and "corner_angle not found" in a["spec"]["detail"], a["spec"]
print("ok: spec_consistency and the harmonic mean recorded")
PY
for bad in vector broken missing empty; do
	task "ref/$bad.json"
	"$ENGISWEEP" judge --out "$bad.json" t/task.json art > "$bad.txt" 2>&1 || { cat "$bad.txt"; fail "judge $bad"; }
	"$PY" - "$bad" <<'PY'
import json, sys
bad = sys.argv[1]
r = json.load(open(bad + ".json"))
a = {x["name"]: x for x in r["assertions"]}
m = r["metrics"] if isinstance(r["metrics"], dict) else {x["name"]: x["value"] for x in r["metrics"]}
assert a["geometry"]["state"] == "pass", a
for n in ("spec", "score"):
    assert a[n]["state"] == "unavailable", (bad, a[n])
assert "spec_consistency" not in m and "pcb_score" not in m, m
why = {"vector": "raises", "broken": "line", "missing": "spec", "empty": "no parameter"}[bad]
assert why in a["spec"]["detail"], a["spec"]
print("ok: %s spec: unavailable (%s)" % (bad, a["spec"]["detail"][:70]))
PY
done
task ref/spec.json mesh
expect_rc 2 "$ENGISWEEP" validate t > mesh.txt 2>&1
grep -q "pcb-v2" mesh.txt || { cat mesh.txt; fail "a spec on mesh scoring is not refused"; }
sed -i 's/"spec": "ref\/spec.json",//' t/task.json
expect_rc 2 "$ENGISWEEP" validate t > nospec.txt 2>&1
grep -q "needs the verifier's \"spec\"" nospec.txt || { cat nospec.txt; fail "spec_consistency without a spec is not refused"; }
echo "ok: pcb_spec"
