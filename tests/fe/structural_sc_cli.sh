#!/usr/bin/env bash
# `engisweep kernel frame` and `engisweep truth` on StructureClaw model files:
# StructureClaw-Bench's beam-simple-6m (fixed at both ends by its file:
# midspan w L^4 / (384 E I)) and a 3D frame of its ground truths, each
# saying what was normalised, with a frozen truth; a roof truss refused as a
# mechanism of 7 free degrees of freedom; a malformed file named by pointer.
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
"$PY" - <<'PY' || fail "truth files"
import json
for name, states, nodes in (("beam.truth.json", ["LC1", "ULS"], 3),
                            ("frame3d-steel-3s-1x2y-10k.truth.json", ["D", "ULS"], 24)):
    t = json.load(open(name))
    assert t["format"] == "structural-truth/1" and t["agreement_rel"] <= 1e-10, name
    assert [s["name"] for s in t["states"]] == states, name
    assert len(t["states"][0]["u"]) == 6 * nodes, name
PY

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
