#!/usr/bin/env bash
# CalculiX itself on generated decks (C3D4, C3D10, C3D8; concentrated loads,
# pressures, shuffled numbering, sets): `engisweep kernel fe` must find the
# largest displacement within 1e-6 relative of ccx's .dat (7 significant
# digits) and, for concentrated loads, the same total support reaction.
source "$ENGI_SRC/tests/integration/lib.sh"
command -v ccx >/dev/null || fail "ccx (Debian calculix-ccx) is not installed"
GEN="$ENGI_SRC/tests/fe/gen_deck.py"

compare() { # NAME GEN-ARGS...
	local name=$1
	shift
	"$PY" "$GEN" "$name.inp" "$@"
	ccx -i "$name" >"$name.ccx.log" 2>&1 || fail "ccx failed on $name: $(tail -5 "$name.ccx.log")"
	"$ENGISWEEP" kernel fe --json "$name.inp" >"$name.json" || fail "kernel fe failed on $name"
	"$PY" - "$name" <<'PY' || fail "$name: kernel fe and ccx disagree"
import json, math, re, sys
name = sys.argv[1]
ours = json.load(open(name + ".json"))
text = open(name + ".dat").read()
block = text.split("displacements")[1].split("total force")[0]
umax = 0.0
for line in block.splitlines():
    p = line.split()
    if len(p) == 4:
        umax = max(umax, math.sqrt(sum(float(x) ** 2 for x in p[1:])))
rel = abs(ours["max_u"] - umax) / umax
print("%-14s dof %6d  ccx max|u| %.7e  ours %.9e  rel %.1e" % (name, ours["dof"], umax, ours["max_u"], rel))
ok = rel <= 1e-6
m = re.search(r"total force.*\n\s*\n\s*(\S+)\s+(\S+)\s+(\S+)", text)
if m and "cload" in name:
    rf = [float(x) for x in m.groups()]
    scale = max(abs(x) for x in ours["load_sum"])
    for a, b in zip(rf, ours["reaction_sum"]):
        ok &= abs(a - b) <= 1e-6 * scale
        if abs(a - b) > 1e-6 * scale:
            print("reaction", rf, ours["reaction_sum"])
# equilibrium of our own solve
for a, b in zip(ours["reaction_sum"], ours["load_sum"]):
    ok &= abs(a + b) <= 1e-9 * max(1.0, max(abs(x) for x in ours["load_sum"]))
sys.exit(0 if ok else 1)
PY
}

compare c3d4_cload --type C3D4 --cells 8 2 2 --load cload
compare c3d10_cload --type C3D10 --cells 8 2 2 --load cload --sets --frd
compare c3d8_cload --type C3D8 --cells 8 3 2 --load cload
compare c3d4_press --type C3D4 --cells 6 2 3 --load pressure
compare c3d10_press --type C3D10 --cells 6 3 2 --load both --size 3 1.5 1
compare c3d8_press --type C3D8 --cells 5 2 2 --load pressure
compare c3d10_shuf_cload --type C3D10 --cells 10 3 3 --load cload --shuffle 7

# a deck outside the subset is refused with its line
printf '*NODE\n1,0,0,0\n*ORIENTATION, NAME=O\n' >bad.inp
out=$(says "$ENGISWEEP" kernel fe bad.inp)
expect_rc 2 "$ENGISWEEP" kernel fe bad.inp
echo "$out" | grep -q "bad.inp:3: unsupported keyword '\*ORIENTATION'" || fail "message: $out"

# the fe_solid verifier on a deck and ccx's own .dat for it
: "${FE_VERIFY_TOOL:?}"
mkdir -p task art
cp c3d10_cload.inp c3d10_cload.dat c3d10_cload.frd art/
umax=$("$PY" -c "import json; print(json.load(open('c3d10_cload.json'))['max_u'])")
cat >ver.json <<JSON
{"kind": "fe_solid", "file": "c3d10_cload.inp", "criteria": [
  {"name": "steel", "check": "young", "value": 210000, "tol_rel": 0.001},
  {"name": "nu", "check": "poisson", "value": 0.3, "tol_abs": 1e-9},
  {"name": "force_not_pressure", "check": "load_as_force"},
  {"name": "clamped_root", "check": "supports_on_plane", "plane": {"axis": "x", "value": 0}},
  {"name": "load", "check": "load_sum", "component": "z", "value": -1000, "tol_rel": 1e-9},
  {"name": "reaction", "check": "reaction_sum", "component": "z", "value": 1000, "tol_rel": 1e-6},
  {"name": "deflection", "check": "max_u", "value": $umax, "tol_rel": 1e-6},
  {"name": "root_stress", "check": "mises_at", "point": [0.1, 0.5, 0.9], "min": 1},
  {"name": "own", "check": "own_results", "results": "c3d10_cload.dat", "max": 1e-6},
  {"name": "own_frd", "check": "own_results", "results": "c3d10_cload.frd", "max": 1e-5}]}
JSON
"$FE_VERIFY_TOOL" ver.json task art | tee verdict.txt
[ "$(grep -c ' pass ' verdict.txt)" -eq 11 ] && ! grep -qv ' pass ' verdict.txt || fail "fe_solid: not every criterion passed"
# the same task on the pressure deck: the load is not a force, and ccx's
# results of another deck disagree with the re-solve
cp c3d10_press.inp art/c3d10_cload.inp
"$FE_VERIFY_TOOL" ver.json task art | tee verdict2.txt
grep -q '^force_not_pressure fail' verdict2.txt || fail "pressure deck passed load_as_force"
grep -q '^own fail' verdict2.txt || fail "foreign .dat passed own_results"
grep -q '^steel pass' verdict2.txt || fail "material check"
printf '*NODE\n1,0,0,0\n*FOO\n' >art/c3d10_cload.inp
"$FE_VERIFY_TOOL" ver.json task art | tee verdict3.txt
grep -q "^steel unavailable .*c3d10_cload.inp:3: unsupported keyword" verdict3.txt || fail "unreadable deck"
echo "ccx_compare: ok"
