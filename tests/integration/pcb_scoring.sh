# Scoring "pcb-v2" (verifiers/cad_pcb.c), the Parametric CAD Bench
# validator's v2 geometry score, on FreeCAD documents freecadcmd makes here
# (tests/brep/gen_pcb.py): each gate on a document built to trigger it, each
# term against its value computed here from the parts' dimensions (volume,
# area, principal moments of boxes; the surface-type error of a hole of
# radius 1.455 against 1.5) and the combination of the recorded terms by
# the published weights; the moved-hole (0.52) and 1.1-scaled (box error
# 0.091, gate passed) cases; a reference that fails a gate is unavailable,
# never a score; a sweep records the scorer with the verifier; the
# reference's report is kept and read back, the same verdicts; the spec
# side's cylinder clusters and plane pairs of a plate with holes. The
# documents are cached in the build folder, keyed by the generator's hash.
. "$(dirname "$0")/lib.sh"
# the references' kept reports go here, not to the user's cache
export ENGI_BREP_CACHE="$T/brep-cache"
if [ "${ENGI_BREP:?}" = OFF ]; then
	CACHE=$PWD/fake
	mkdir -p fake && echo "not a document" > fake/box.FCStd
fi

# task REF: a task folder t-REF judging answer.FCStd against REF with pcb-v2
task() {
	mkdir -p "t-$1/ref"
	cp "$CACHE/$1.FCStd" "t-$1/ref/ref.FCStd"
	cat > "t-$1/task.json" <<J
{"schema": 1, "id": "pcb-$1", "title": "pcb-v2 against $1", "domain": "CAD", "software": ["freecad"],
 "type": "single", "interface": "cli", "instruction": "Model the part in FreeCAD; save answer.FCStd.",
 "environment": {"image": "tools"},
 "deliverables": [{"path": "answer.FCStd"}],
 "verifier": {"kind": "cad_similarity", "file": "answer.FCStd", "reference": "ref/ref.FCStd",
   "geometry": "pcb-v2",
   "criteria": [{"name": "geometry", "check": "similarity", "min": 0.9},
                {"name": "document", "check": "document_gate"},
                {"name": "extents", "check": "obb_extent_gate"},
                {"name": "counts", "check": "count_gate"}]},
 "reference": [{"write": "answer.FCStd", "from": "ref/ref.FCStd"}, {"done": "saved"}]}
J
}
# judge REF CAND: the verdict of CAND against REF in CAND-vs-REF.json
judge() {
	[ -d "t-$1" ] || task "$1"
	mkdir -p "art-$2"
	cp "$CACHE/$2.FCStd" "art-$2/answer.FCStd"
	"$ENGISWEEP" judge --out "$2-vs-$1.json" "t-$1/task.json" "art-$2" > "$2-vs-$1.txt" 2>&1 \
		|| { cat "$2-vs-$1.txt"; fail "judge $2 against $1"; }
}
if [ "$ENGI_BREP" = OFF ]; then
	# without OpenCASCADE the similarity is unavailable and says why
	judge box box
	"$PY" -c 'import json, sys
a = {x["name"]: x for x in json.load(open("box-vs-box.json"))["assertions"]}["geometry"]
sys.exit(not (a["state"] == "unavailable" and "not built into this binary" in a["detail"]))' \
		|| { cat box-vs-box.json; fail "a build without the B-rep kernel does not say so"; }
	echo "ok: not built in, and the verdict says so"
	exit 0
fi
freecad_docs "$ENGI_SRC/tests/brep/gen_pcb.py" ENGI_PCB_OUT "gen_pcb: wrote"
for pair in box:box box:box_turned box:box_thin box:box_scaled box:box_double box:cylinder \
	box:plate_8holes box:two_bodies box:part_box plate:plate_moved plate:plate_r1455 \
	plate:plate_plain plate:prism_5003 two_bodies:box; do
	judge "${pair%%:*}" "${pair#*:}"
done

"$PY" - <<'PY'
import json, math

def load(cand, ref):
    r = json.load(open("%s-vs-%s.json" % (cand, ref)))
    a = {x["name"]: x for x in r["assertions"]}
    m = dict(r["metrics"]) if isinstance(r["metrics"], dict) else {x["name"]: x["value"] for x in r["metrics"]}
    return a, m

def near(x, y, tol, what):
    assert abs(x - y) <= tol, "%s: %r, expected %r" % (what, x, y)

def tier(e, m, f):
    # the validator's logarithmic credit, written here from its definition
    if e <= m: return 1.0
    if e >= f: return 0.0
    return 1 - math.log10(e / m) / math.log10(f / m)

def box_moments(a, b, c):
    v = a * b * c
    ev = sorted([v * (b * b + c * c) / 12, v * (a * a + c * c) / 12, v * (a * a + b * b) / 12])
    return [x / v ** (5 / 3) for x in ev]

def rel(x, y):
    return abs(x - y) / max(abs(x), abs(y), 1e-9)

# the same part, and turned and moved anywhere: exactly 1
for c in ("box", "box_turned"):
    a, m = load(c, "box")
    near(m["geometry_similarity"], 1.0, 1e-12, c)
    assert a["geometry"]["state"] == "pass" and a["document"]["state"] == "pass", a

# 10 x 5 x 2.91 against 10 x 5 x 3: every term from the dimensions
a, m = load("box_thin", "box")
near(m["volume_rel_err"], 0.03, 1e-12, "volume error")
near(m["area_rel_err"], 2.7 / 190, 1e-12, "area error")
pm = max(rel(x, y) for x, y in zip(box_moments(10, 5, 3), box_moments(10, 5, 2.91)))
near(m["moments_rel_err"], pm, 1e-9, "principal-moment error")
near(pm, 0.0201013571, 1e-9, "the validator's own figure")
near(tier(pm, 0.01, 0.1), 0.69677462, 1e-8, "its credit")
near(m["obb_extent_rel_err"], 0.03, 1e-6, "oriented-box error")
near(m["surface_types_rel_err"], 2.7 / 190, 1e-12, "surface types (all planes)")
prop = (0.05 * tier(2.7 / 190, .01, .1) + 0.175 * tier(0.03, .001, .01)
        + 0.175 * tier(2.7 / 190, .01, .1) + 0.10 * tier(pm, .01, .1)) / 0.5
near(m["property_score"], prop, 1e-9, "property score")
k = -math.log(0.9) / 0.1
near(m["q_icp"], math.exp(-k * m["icp_max_residual"]), 1e-12, "ICP reward")
assert 0 < m["icp_max_residual"] < 0.1, m
near(m["geometry_similarity"], prop * (0.5 + 0.5 * m["q_icp"]), 1e-12, "geometry")

# scaled by 1.1: the box error is 0.1/1.1 = 0.0909 over the larger, under the gate
a, m = load("box_scaled", "box")
near(m["obb_extent_rel_err"], 0.1 / 1.1, 1e-6, "scaled box error")
assert a["extents"]["state"] == "pass", a["extents"]
near(m["volume_rel_err"], 1 - 1 / 1.331, 1e-9, "scaled volume error")
assert 0 < m["geometry_similarity"] < 0.5, m

# a hole moved 3 mm: every property term full, the face-centre ICP's worst
# residual 3 mm, the score about half
a, m = load("plate_moved", "plate")
near(m["property_score"], 1.0, 1e-9, "moved hole: properties")
near(m["icp_max_residual"], 3.0, 0.05, "moved hole: worst residual")
assert m["q_icp"] < 0.9, m
assert 0.50 < m["geometry_similarity"] < 0.55, m
print("moved hole: %.4f" % m["geometry_similarity"])

# a hole of radius 1.455 for 1.5: the cylinder's area is off by 3 %
a, m = load("plate_r1455", "plate")
near(m["surface_types_rel_err"], 0.03, 1e-9, "cylinder area error")
p = (0.05 * tier(0.03, .01, .1) + 0.175 * tier(m["volume_rel_err"], .001, .01)
     + 0.175 * tier(m["area_rel_err"], .01, .1) + 0.10 * tier(m["moments_rel_err"], .01, .1)) / 0.5
near(m["property_score"], p, 1e-12, "property score of the recorded terms")
near(tier(0.03, .01, .1), 0.5228787452803376, 1e-15, "surface-type credit")

# the hole missing: no cylinder at all, the surface-type term 0
a, m = load("plate_plain", "plate")
assert m["surface_types_rel_err"] >= 0.1, m
assert 0 < m["geometry_similarity"] < 0.7, m

# the gates, each on its own case, in the validator's order
for cand, ref, gate in (("box_double", "box", "bbox gate"), ("cylinder", "box", "vertex_count gate"),
                        ("plate_8holes", "box", "face_count gate"), ("two_bodies", "box", "body gate"),
                        ("part_box", "box", "feature_tree gate"), ("prism_5003", "plate", "complexity gate")):
    a, m = load(cand, ref)
    assert m["geometry_similarity"] == 0, (cand, m)
    assert gate in a["geometry"]["detail"], (cand, a["geometry"]["detail"])
    assert "q_icp" not in m, (cand, "ICP ran past a gate")
a, m = load("two_bodies", "box")
assert a["document"]["state"] == "fail" and "2 PartDesign Bodies" in a["document"]["detail"], a["document"]
a, m = load("part_box", "box")
assert "'PartBox' (Part::Box)" in a["document"]["detail"], a["document"]
a, m = load("box_double", "box")
near(m["obb_extent_rel_err"], 0.5, 1e-6, "doubled box error")
assert a["extents"]["state"] == "fail"

# a reference the validator would gate: the benchmark's fault, never a score
a, m = load("box", "two_bodies")
assert a["geometry"]["state"] == "unavailable", a["geometry"]
assert "reference: fails the body gate" in a["geometry"]["detail"], a["geometry"]
assert "geometry_similarity" not in m, m
print("ok: terms, combination and gates")
PY

# the spec side's measurements (kernel brep --json, spec_bank): the eight
# holes of a plate are one cluster of the validator's rules (same
# orientation, radius within 1 %, axes within 2 degrees), through its
# thickness; its parallel faces give the pairs 5, 30 and 40 mm, the top's
# area less the holes the smaller face
"$ENGISWEEP" kernel brep --json "$CACHE/plate_8holes.FCStd" > bank.json || fail "kernel brep plate_8holes"
"$PY" - <<'PY' || fail "the spec bank of plate_8holes"
import json, math
j = json.load(open("bank.json"))
b = j["spec_bank"]
cyl = [f for f in j["face_list"] if f["type"] == "cylinder"]
assert len(b["cylinder_clusters"]) == 1, b
c = b["cylinder_clusters"][0]
assert c["count"] == len(cyl) >= 8 and c["radius"] == 1.0 and c["axial_extent"] == 5.0, c
assert abs(abs(c["axis"][2]) - 1) < 1e-12, c
offs = [p["offset"] for p in b["plane_pairs"]]
assert offs == [5.0, 30.0, 40.0], offs
assert abs(b["plane_pairs"][0]["min_area"] - round(40 * 30 - 8 * math.pi, 9)) < 1e-9, b["plane_pairs"][0]
assert b["cones"] == [] and not b["plane_pairs_capped"]
assert b["aabb_sorted"] == [5.0, 30.0, 40.0] and b["obb_sorted"] == [5.0, 30.0, 40.0], b
assert b["aabb_min_corner"] == [0.0, 0.0, 0.0] and b["aabb_max_corner"] == [40.0, 30.0, 5.0], b
print("ok: the spec bank of plate_8holes")
PY
# the boxes: the turned box's principal-axes box of its vertices is its own
# 10 x 5 x 3, its axis-aligned box the rotated extents; a cylinder has two
# vertices, so its principal box is the axis-aligned one (the fallback)
"$ENGISWEEP" kernel brep --json "$CACHE/box_turned.FCStd" > bank-turned.json || fail "kernel brep box_turned"
"$ENGISWEEP" kernel brep --json "$CACHE/cylinder.FCStd" > bank-cyl.json || fail "kernel brep cylinder"
"$PY" - <<'PY' || fail "the spec bank's boxes"
import json, math
b = json.load(open("bank-turned.json"))["spec_bank"]
assert all(abs(x - y) < 1e-9 for x, y in zip(b["obb_sorted"], [3, 5, 10])), b["obb_sorted"]
# FreeCAD's Rotation(axis (1, 2, 3), 37 degrees) on a 10 x 5 x 3 box
n = math.sqrt(14)
x, y, z = 1 / n, 2 / n, 3 / n
a = math.radians(37)
c, s, t = math.cos(a), math.sin(a), 1 - math.cos(a)
R = [[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
     [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
     [t * x * z - s * y, t * y * z + s * x, t * z * z + c]]
d = [10, 5, 3]
ext = sorted(sum(abs(R[i][j]) * d[j] for j in range(3)) for i in range(3))
assert all(abs(p - q) < 1e-6 for p, q in zip(b["aabb_sorted"], ext)), (b["aabb_sorted"], ext)
c = json.load(open("bank-cyl.json"))["spec_bank"]
assert c["obb_sorted"] == c["aabb_sorted"], c
print("ok: the spec bank's boxes")
PY

# the kernel failing is never a verdict: the verifier fails (exit 3)
printf '#!/bin/sh\nkill -SEGV $$\n' > crash.sh && chmod +x crash.sh
set +e
ENGI_BREP_HELPER="$PWD/crash.sh" "$ENGISWEEP" judge --out crashed.json t-box/task.json art-box > crashed.txt 2>&1
rc=$?
set -e
[ "$rc" -eq 3 ] || { cat crashed.txt; fail "a crashed kernel gave a verdict (exit $rc)"; }
grep -q "died of signal 11" crashed.txt || { cat crashed.txt; fail "the crash is not named"; }

# the reference's report is kept by content: a second judgement of the same
# task reads only the agent's file; a kept report that is not one is read
# afresh; the verdicts are the same each time
real=$("$PY" -c "import os,sys; print(os.path.realpath(sys.argv[1]))" "$(dirname "$ENGISWEEP")/engisweep-brep")
printf '#!/bin/sh\necho "$@" >> "%s/helper-runs.log"\nexec "%s" "$@"\n' "$PWD" "$real" > counting.sh
chmod +x counting.sh
export ENGI_BREP_CACHE="$T/brep-cache-2"
for i in 1 2 3; do
	[ "$i" -ne 3 ] || for f in "$ENGI_BREP_CACHE"/*.rep; do echo "not a report" > "$f"; done
	: > helper-runs.log
	ENGI_BREP_HELPER="$PWD/counting.sh" "$ENGISWEEP" judge --out kept-$i.json t-plate/task.json \
		art-plate_moved > kept-$i.txt 2>&1 || { cat kept-$i.txt; fail "judge with kept reports"; }
	runs=$(wc -l < helper-runs.log)
	want=2
	[ "$i" -ne 2 ] || want=1
	[ "$runs" -eq "$want" ] || { cat helper-runs.log; fail "judgement $i ran the shape reader $runs times, expected $want"; }
done
ls "$ENGI_BREP_CACHE"/*.rep > /dev/null || fail "no report was kept"
"$PY" - <<'PY' || fail "kept reports changed a verdict"
import json
v = [json.load(open(f"kept-{i}.json")) for i in (1, 2, 3)]
m = [{x["name"]: x["value"] for x in j["metrics"]} for j in v]
a = [{x["name"]: x["state"] for x in j["assertions"]} for j in v]
assert m[0] == m[1] == m[2] and a[0] == a[1] == a[2], (m, a)
first = {x["name"]: x["value"] for x in json.load(open("plate_moved-vs-plate.json"))["metrics"]}
assert m[0] == first, (m[0], first)
PY
export ENGI_BREP_CACHE="$T/brep-cache"

# a sweep: the reference agent delivers the plate; the record names the scorer
mkdir suite && cp -r t-plate/ref suite/ && cp t-plate/task.json suite/plate.json
"$ENGISWEEP" run --agents reference --quiet --out r suite > run.log 2>&1 || { cat run.log; fail "run"; }
"$PY" - <<'PY'
import h5py
with h5py.File("r/results.h5", "r") as f:
    ep = f["episodes"][:]
    assert len(ep) == 1, len(ep)
    e = ep[0]
    v = e["verifier"].decode()
    assert v == "cad_similarity@1/pcb-v2@0.6.0", v
    assert e["score"] == 1.0 and e["success"] == 1, e
print("ok: the sweep records", v)
PY

# settings are checked before anything runs
sed 's/"pcb-v2"/"pcb-v3"/' t-plate/task.json > bad.json
mkdir bad && cp -r t-plate/ref bad/ && mv bad.json bad/task.json
says "$ENGISWEEP" validate bad/task.json | grep -qF "/verifier/geometry: unknown geometry scoring 'pcb-v3' (valid: mesh, pcb-v2)" \
	|| fail "an unknown scoring is not refused with its pointer"
sed 's/"pcb-v2",/"mesh",/' t-plate/task.json > bad/task.json
says "$ENGISWEEP" validate bad/task.json | grep -qF "check 'document_gate' needs" \
	|| fail "a document gate on a mesh is not refused"
echo "ok: pcb-v2 scoring"
