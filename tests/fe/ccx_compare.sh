#!/usr/bin/env bash
# CalculiX itself on generated decks (C3D4, C3D10, C3D8; concentrated loads,
# pressures, shuffled numbering, sets): `engisweep kernel fe` must find the
# largest displacement within 1e-6 relative of ccx's .dat (7 significant
# digits) and, for concentrated loads, the same total support reaction.
# Stresses: every nodal stress of ccx's .frd and integration-point stress of
# its .dat, read by our readers, against the re-solve; the fe_solid
# verifier's own_mises_at on ccx's files, true and doctored. Truth: `engisweep
# truth DECK.inp` against ccx's displacements of every node.
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
# stresses: our readers on ccx's files, every value against the re-solve
# (.frd: 6 significant digits, extrapolated to the nodes as ccx does; .dat:
# 7 digits, integration points averaged per element)
: "${FE_STRESS_TOOL:?}"
stress() { # NAME GEN-ARGS...
	local name=$1
	shift
	"$PY" "$GEN" "$name.inp" --stress "$@"
	ccx -i "$name" >"$name.ccx.log" 2>&1 || fail "ccx failed on $name: $(tail -5 "$name.ccx.log")"
	"$FE_STRESS_TOOL" "$name.inp" "$name.frd" | tee "$name.frd.cmp" || fail "$name.frd"
	"$FE_STRESS_TOOL" "$name.inp" "$name.dat" | tee "$name.dat.cmp" || fail "$name.dat"
	"$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 1e-4 else 1)" \
		"$(awk '{print $NF}' "$name.frd.cmp")" || fail "$name: .frd stresses differ"
	"$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 1e-5 else 1)" \
		"$(awk '{print $NF}' "$name.dat.cmp")" || fail "$name: .dat stresses differ"
}
stress s_c3d4 --type C3D4 --cells 6 2 2 --load both --shuffle 3
stress s_c3d10 --type C3D10 --cells 6 2 2 --load cload --shuffle 5 --frd
stress s_c3d8 --type C3D8 --cells 6 2 2 --load pressure

# own_mises_at: the agent's own stresses at a point against the re-solve
mkdir -p art2
cp s_c3d10.inp s_c3d10.frd s_c3d10.dat art2/
cat >ver2.json <<JSON
{"kind": "fe_solid", "file": "s_c3d10.inp", "criteria": [
  {"name": "root_mises", "check": "mises_at", "point": [0.2, 0.5, 0.9], "min": 1},
  {"name": "own_dat", "check": "own_mises_at", "point": [0.2, 0.5, 0.9],
   "results": "s_c3d10.dat", "max": 1e-4},
  {"name": "own_frd", "check": "own_mises_at", "point": [0, 0, 1],
   "results": "s_c3d10.frd", "max": 1e-3},
  {"name": "own_frd_mid", "check": "own_mises_at", "point": [2, 0.5, 1],
   "results": "s_c3d10.frd", "max": 1e-3}]}
JSON
"$FE_VERIFY_TOOL" ver2.json task art2 | tee v2.txt
[ "$(grep -c ' pass ' v2.txt)" -eq 5 ] || fail "own_mises_at: not every criterion passed"
# doctored files: the stress at the judged node / element scaled by 1.05
node=$(sed -n 's/^own_frd pass .* at node \([0-9]*\),.*/\1/p' v2.txt)
elem=$(sed -n 's/^own_dat pass .* at element \([0-9]*\) .*/\1/p' v2.txt)
[ -n "$node" ] && [ -n "$elem" ] || fail "no node or element in the verdict"
"$PY" - "$node" "$elem" <<'PY'
import sys
node, elem = int(sys.argv[1]), int(sys.argv[2])
out, inb = [], False
for l in open("art2/s_c3d10.frd").read().split("\n"):
    if l.startswith(" -4  STRESS"):
        inb = True
    elif l.startswith(" -3"):
        inb = False
    elif inb and l.startswith(" -1") and int(l[3:13]) == node:
        l = l[:13] + "%12.5E" % (1.05 * float(l[13:25])) + l[25:]
    out.append(l)
open("art2/s_c3d10.frd", "w").write("\n".join(out))
out, done = [], False
for l in open("art2/s_c3d10.dat").read().split("\n"):
    p = l.split()
    if not done and len(p) == 8 and p[0] == str(elem):
        l = "%10d%4d" % (elem, int(p[1])) + "".join(" %13.6E" % (1.05 * float(x)) for x in p[2:])
        done = True
    out.append(l)
open("art2/s_c3d10.dat", "w").write("\n".join(out))
PY
"$FE_VERIFY_TOOL" ver2.json task art2 | tee v3.txt
grep -q '^own_frd fail' v3.txt || fail "doctored .frd passed"
grep -q '^own_dat fail' v3.txt || fail "doctored .dat passed"
grep -q '^own_frd_mid pass' v3.txt || fail "a node not doctored failed"
# a NaN in the agent's file is named with its line
"$PY" - <<'PY'
out, inb, done = [], False, False
for l in open("art2/s_c3d10.frd").read().split("\n"):
    if l.startswith(" -4  STRESS"):
        inb = True
    elif inb and not done and l.startswith(" -1"):
        l, done = l[:25] + "         NaN" + l[37:], True
    out.append(l)
open("art2/s_c3d10.frd", "w").write("\n".join(out))
out, inb, done = [], False, False
for l in open("art2/s_c3d10.dat").read().split("\n"):
    p = l.split()
    if l.strip().startswith("stresses"):
        inb = True
    elif inb and not done and len(p) == 8:
        l, done = "  ".join(p[:3] + ["NaN"] + p[4:]), True
    out.append(l)
open("art2/s_c3d10.dat", "w").write("\n".join(out))
PY
"$FE_VERIFY_TOOL" ver2.json task art2 | tee v4.txt
grep -q '^own_frd fail .*s_c3d10.frd:[0-9]*: stress is not a finite number' v4.txt ||
	fail "NaN in .frd"
grep -q '^own_dat fail .*s_c3d10.dat:[0-9]*: stress is not a finite number' v4.txt ||
	fail "NaN in .dat"

# truth of a deck: two solves agree, and every node's displacement is ccx's
"$ENGISWEEP" truth s_c3d10.inp | tee truth.log
grep -q "^wrote *s_c3d10.truth.json" truth.log || fail "no truth written"
"$PY" - <<'PY' || fail "deck truth and ccx disagree"
import json, math
t = json.load(open("s_c3d10.truth.json"))
assert t["format"] == "fe-solid-truth/1" and t["agreement_rel"] <= 1e-10
assert t["equilibrium_rel"] <= 1e-9 and t["node_step"] == 1
assert len(t["u"]) == t["nodes"] and t["dof"] == 3 * t["nodes"]
text = open("s_c3d10.dat").read()
block = text.split("displacements")[1].split("total force")[0]
ccx = {}
for line in block.splitlines():
    p = line.split()
    if len(p) == 4:
        ccx[int(p[0])] = [float(x) for x in p[1:]]
umax = max(math.sqrt(sum(x * x for x in u)) for u in ccx.values())
rel = abs(t["max_u"] - umax) / umax
worst = max(max(abs(a - b) for a, b in zip(ccx[n[0]], n[1:])) for n in t["u"])
print("truth max|u| %.9e ccx %.7e rel %.1e; worst node %.1e of max|u|" % (t["max_u"], umax, rel, worst / umax))
assert rel <= 1e-6 and worst <= 1e-6 * umax
assert abs(t["reaction_sum"][2] - 1000) <= 1e-6 * 1000
PY
# a mechanism is refused and leaves no truth
sed '/^\*BOUNDARY/,/^FIX/d' s_c3d4.inp >mech.inp
expect_rc 2 "$ENGISWEEP" truth mech.inp
[ ! -e mech.truth.json ] || fail "truth written for a mechanism"
echo "ccx_compare: ok"
