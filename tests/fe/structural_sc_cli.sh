#!/usr/bin/env bash
# `engisweep kernel frame` and `engisweep truth` on StructureClaw model files:
# StructureClaw-Bench's beam-simple-6m (fixed at both ends by its file:
# midspan w L^4 / (384 E I)) and a 3D frame of its ground truths, each
# saying what was normalised, with a frozen truth; the structural kind
# judging structural/1 and StructureClaw deliveries against a StructureClaw
# reference; a roof truss refused as a mechanism of 7 free degrees of
# freedom; a malformed file named by pointer.
# The ground truths come from ENGI_SC_BENCH (../shared), which must exist.
source "$ENGI_SRC/tests/integration/lib.sh"
: "${ENGI_SC_BENCH:?}"
truths="$ENGI_SC_BENCH/fixtures/ground-truth-models.json"
[ -f "$truths" ] || fail "StructureClaw-Bench's ground truths are missing: $truths"

"$PY" - "$truths" <<'PY'
import json, sys
models = {m["id"]: m["model"] for m in json.load(open(sys.argv[1]))}
for name in ("beam-simple-6m", "frame3d-steel-3s-1x2y-10k", "truss-warren-12m-2m-8k"):
    json.dump(models[name], open(name + ".json", "w"), indent=1)
bad = models["beam-simple-6m"]
bad["load_cases"][0]["loads"][1]["wy"] = 3
json.dump(bad, open("bad.json", "w"))
PY

"$ENGISWEEP" kernel frame beam-simple-6m.json | tee frame.log
grep -qF "normalised    StructureClaw 2.0.0; SI: kN, m, E and G MPa -> kN/m^2; 2D x-z plane -> x-y" frame.log ||
	fail "kernel frame prints no normalisation"
"$ENGISWEEP" kernel frame --json beam-simple-6m.json >frame.json
"$PY" - <<'PY' || fail "beam-simple-6m differs from w L^4 / (384 E I)"
import json
r = json.load(open("frame.json"))
w, L, E, I = 20.0, 6.0, 205e6, 1e-4
want = w * L**4 / (384 * E * I)
assert r["normalised"].startswith("StructureClaw 2.0.0; SI: kN, m"), r["normalised"]
s = r["states"][0]
print("midspan %.9e, closed form %.9e" % (s["max_u"], want))
assert abs(s["max_u"] - want) <= 1e-9 * want and s["max_u_node"] == 2
assert abs(s["reaction_sum"][1] - w * L) <= 1e-9 * w * L and s["equilibrium_rel"] <= 1e-10
PY

"$ENGISWEEP" truth -o beam.truth.json beam-simple-6m.json | tee truth.log
grep -q "^normalised    StructureClaw 2.0.0" truth.log || fail "truth prints no normalisation"
"$ENGISWEEP" truth frame3d-steel-3s-1x2y-10k.json | tee truth3d.log
grep -qF "3D axes kept; local axes from reference Z (X near vertical); string ids numbered in file order" truth3d.log ||
	fail "3D normalisation"
# the same truth straight from the list, by id, written where we are; the
# list's folder untouched; a mechanism and an unknown id refused
"$ENGISWEEP" truth --id beam-simple-6m "$truths" | tee truthid.log
grep -q "^wrote         beam-simple-6m.truth.json" truthid.log || fail "truth --id wrote elsewhere"
[ ! -e "$ENGI_SC_BENCH/fixtures/beam-simple-6m.truth.json" ] || fail "truth --id wrote into the benchmark"
expect_rc 2 "$ENGISWEEP" truth --id truss-roof-18m-3m-12k -o no.json "$truths" 2> mech.err
grep -q "mechanism: 7 free degrees of freedom" mech.err || fail "truth --id of a mechanism: $(cat mech.err)"
[ ! -e no.json ] || fail "a mechanism's truth was written"
expect_rc 2 "$ENGISWEEP" truth --id nope "$truths" 2> nope.err
grep -q "has no entry 'nope' with a model (47 entries)" nope.err || fail "unknown id: $(cat nope.err)"
expect_rc 2 "$ENGISWEEP" truth --id ../x "$truths" 2> slash.err
"$PY" - <<'PY' || fail "truth --id differs from truth of the extracted model"
import json
a, b = json.load(open("beam.truth.json")), json.load(open("beam-simple-6m.truth.json"))
assert a["states"] == b["states"], "states differ"
PY
"$PY" - <<'PY' || fail "truth files"
import json
for name, states, nodes in (("beam.truth.json", ["LC1", "ULS"], 3),
                            ("frame3d-steel-3s-1x2y-10k.truth.json", ["D", "ULS"], 24)):
    t = json.load(open(name))
    assert t["format"] == "structural-truth/1" and t["agreement_rel"] <= 1e-10, name
    assert [s["name"] for s in t["states"]] == states, name
    assert len(t["states"][0]["u"]) == 6 * nodes, name
PY

# the structural kind against a StructureClaw reference: the same beam
# delivered as structural/1 (kN, m, x-y plane, ry restraints as rz) and as
# the StructureClaw file itself passes; a wrong inertia fails
mkdir -p task/frame art1 art2 art3
cp beam-simple-6m.json task/frame/reference.json
cp beam.truth.json task/frame/truth.json
cp beam-simple-6m.json art2/model.json
"$PY" - <<'PY'
import json
m = {"format": "structural/1", "dim": 2, "units": {"length": "m", "force": "kN"},
     "materials": [{"id": "steel", "E": 205e6, "G": 79e6}],
     "sections": [{"id": "B1", "A": 0.01, "Iz": 1e-4, "Iy": 1e-4, "J": 1e-4}],
     "nodes": [{"id": 1, "xyz": [0, 0]}, {"id": 2, "xyz": [3, 0]}, {"id": 3, "xyz": [6, 0]}],
     "elements": [{"id": e, "type": "beam", "nodes": [e, e + 1], "material": "steel", "section": "B1"}
                  for e in (1, 2)],
     "supports": [{"node": 1, "restrain": ["ux", "uy", "rz"]}, {"node": 3, "restrain": ["uy", "rz"]}],
     "load_cases": [{"id": "LC1", "member": [{"element": e, "w": [0, -20, 0]} for e in (1, 2)]}],
     "combinations": [{"id": "ULS", "factors": {"LC1": 1}}]}
json.dump(m, open("art1/model.json", "w"))
sc = json.load(open("beam-simple-6m.json"))
sc["sections"][0]["properties"]["Iy"] = 2e-4
json.dump(sc, open("art3/model.json", "w"))
json.dump({"kind": "structural", "file": "model.json", "reference": "frame/reference.json",
           "truth": "frame/truth.json"}, open("verifier.json", "w"))
PY
for art in art1 art2; do
	"$FE_VERIFY_TOOL" verifier.json task $art | tee $art.log
	[ "$(awk '$2 == "pass"' $art.log | wc -l)" -eq 11 ] && [ "$(wc -l <$art.log)" -eq 11 ] ||
		fail "$art: not every assertion passes"
done
"$FE_VERIFY_TOOL" verifier.json task art3 | tee art3.log
grep -q "^properties fail" art3.log || fail "a wrong inertia passes"

out=$(says "$ENGISWEEP" kernel frame truss-warren-12m-2m-8k.json)
expect_rc 2 "$ENGISWEEP" kernel frame truss-warren-12m-2m-8k.json
echo "$out" | grep -q "the model is a mechanism: 7 free degrees of freedom with no stiffness: uy of node" ||
	fail "mechanism message: $out"
expect_rc 2 "$ENGISWEEP" truth truss-warren-12m-2m-8k.json
[ ! -e truss-warren-12m-2m-8k.truth.json ] || fail "truth written for a mechanism"

out=$(says "$ENGISWEEP" kernel frame bad.json)
expect_rc 2 "$ENGISWEEP" kernel frame bad.json
echo "$out" | grep -qF "bad.json: /load_cases/0/loads/1/wy: out of the x-z plane of a 2d model: must be 0, found 3" ||
	fail "message: $out"
echo "structural_sc_cli: ok"
