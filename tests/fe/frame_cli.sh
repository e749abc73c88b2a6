#!/usr/bin/env bash
# `engisweep kernel frame` and `engisweep truth` on structural JSON written
# here: a simply supported beam under a uniform load (mid-span deflection
# 5 w L^4 / (384 E I)), its frozen truth from two solves, a mechanism named
# by node and direction, and a malformed model named by JSON pointer.
source "$ENGI_SRC/tests/integration/lib.sh"

"$PY" - <<'PY'
import json
n, L = 8, 6.0
nodes = [{"id": i + 1, "xyz": [L * i / n, 0.0]} for i in range(n + 1)]
elems = [{"id": 10 + i, "type": "beam", "nodes": [i + 1, i + 2], "material": "steel",
          "section": "ipe"} for i in range(n)]
model = {"format": "structural/1", "dim": 2, "units": {"length": "m", "force": "N"},
         "materials": [{"id": "steel", "E": 210e9, "G": 81e9}],
         "sections": [{"id": "ipe", "A": 5.38e-3, "Iz": 8.356e-5}],
         "nodes": nodes, "elements": elems,
         "supports": [{"node": 1, "restrain": ["ux", "uy"]}, {"node": n + 1, "restrain": ["uy"]}],
         "load_cases": [{"id": "udl", "member": [{"element": e["id"], "w": [0, -10e3, 0]} for e in elems]},
                        {"id": "point", "nodal": [{"node": n // 2 + 1, "F": [0, -5e3, 0]}]}],
         "combinations": [{"id": "both", "factors": {"udl": 1.0, "point": 2.0}}]}
json.dump(model, open("beam.json", "w"), indent=1)
model["supports"] = [{"node": 1, "restrain": ["uy"]}, {"node": n + 1, "restrain": ["uy"]}]
json.dump(model, open("mech.json", "w"))
model["elements"][3]["nodes"] = [4, 40]
json.dump(model, open("bad.json", "w"))
PY

"$ENGISWEEP" kernel frame beam.json
"$ENGISWEEP" kernel frame --json beam.json >beam.out.json
"$PY" - <<'PY' || fail "frame results differ from the closed forms"
import json
r = json.load(open("beam.out.json"))
E, I, L, w, P = 210e9, 8.356e-5, 6.0, 10e3, 5e3
udl = 5 * w * L**4 / (384 * E * I)
point = P * L**3 / (48 * E * I)
s = {x.get("case", x.get("combination")): x for x in r["states"]}
ok = abs(s["udl"]["max_u"] - udl) <= 1e-9 * udl
ok &= abs(s["point"]["max_u"] - point) <= 1e-9 * point
ok &= abs(s["both"]["max_u"] - (udl + 2 * point)) <= 1e-9 * udl
ok &= abs(s["udl"]["reaction_sum"][1] - w * L) <= 1e-6
ok &= all(x["equilibrium_rel"] < 1e-12 for x in r["states"])
ok &= r["free_dof"] == 9 * 3 - 3
print("udl %.9e (closed form %.9e), point %.9e (%.9e)" % (s["udl"]["max_u"], udl, s["point"]["max_u"], point))
raise SystemExit(0 if ok else 1)
PY

"$ENGISWEEP" truth -o beam.truth.json beam.json | tee truth.log
grep -q "^agreement " truth.log || fail "no agreement line"
"$PY" - <<'PY' || fail "truth file"
import json
t = json.load(open("beam.truth.json"))
assert t["format"] == "structural-truth/1" and t["agreement_rel"] <= 1e-10
assert [s["name"] for s in t["states"]] == ["udl", "point", "both"]
assert len(t["states"][0]["u"]) == 6 * 9 and len(t["states"][0]["end_force"]) == 12 * 8
PY

out=$(says "$ENGISWEEP" kernel frame mech.json)
expect_rc 2 "$ENGISWEEP" kernel frame mech.json
echo "$out" | grep -q "mechanism" || fail "mechanism message: $out"
echo "$out" | grep -q "ux of node" || fail "mechanism names no dof: $out"
expect_rc 2 "$ENGISWEEP" truth mech.json
[ ! -e mech.truth.json ] || fail "truth written for a mechanism"

out=$(says "$ENGISWEEP" kernel frame bad.json)
echo "$out" | grep -q "bad.json: /elements/3/nodes/1: unknown node 40" || fail "message: $out"
echo "frame_cli: ok"
