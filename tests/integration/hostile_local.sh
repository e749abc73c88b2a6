# What an agent does in the local backend (or ENGI_BACKEND) stays contained: a deliverable that
# is a link to a host file, or sits under a linked folder, is not copied; a
# deliverable over its cap is refused; endless output is capped in the trace;
# a command past its time limit and anything it left running are killed,
# also what it started in a session of its own; the episode's private folder
# under $TMPDIR is removed.
. "$(dirname "$0")/lib.sh"
export TMPDIR="$T/tmp"
mkdir -p suite "$TMPDIR"
"$PY" - "$$" <<'PY'
import json, sys
tag = sys.argv[1]
tetra = ("solid t\n" + "".join(
    f" facet normal 0 0 0\n  outer loop\n   vertex {a}\n   vertex {b}\n   vertex {c}\n  endloop\n endfacet\n"
    for a, b, c in [("0 0 0", "0 1 0", "1 0 0"), ("0 0 0", "1 0 0", "0 0 1"),
                    ("0 0 0", "0 0 1", "0 1 0"), ("1 0 0", "0 1 0", "0 0 1")]) + "endsolid t\n")
task = {
    "id": "hostile", "domain": "CAD", "software": ["sh"], "type": "single", "interface": "cli",
    "instruction": "Deliver tetra.stl.",
    "deliverables": [
        {"path": "tetra.stl"},
        {"path": "passwd.txt", "required": False},
        {"path": "linked/shadow", "required": False},
        {"path": "big.bin", "max_bytes": 1048576, "required": False},
    ],
    "verifier": {"kind": "mesh", "file": "tetra.stl",
                 "criteria": [{"name": "closed", "check": "watertight"}]},
    "reference": [
        {"run": "ln -s /etc/passwd passwd.txt"},
        {"run": "ln -s /etc linked"},
        {"run": "head -c 3000000 /dev/zero > big.bin"},
        {"run": "head -c 5000000 /dev/zero | tr '\\000' a"},
        {"run": f"(sleep 300.{tag} &) ; echo started"},
        {"run": f"setsid sleep 303.{tag} >/dev/null 2>&1 </dev/null & echo started"},
        {"run": f"sleep 100.{tag}"},
        {"write": "tetra.stl", "text": tetra},
    ],
}
json.dump(task, open("suite/hostile.json", "w"), indent=1)
PY
start=$(date +%s)
"$ENGISWEEP" run --backend "${ENGI_BACKEND:-local}" --cmd-timeout 2 --quiet --out r suite
[ $(( $(date +%s) - start )) -lt 60 ] || fail "the command time limit did not hold"
pgrep -f "sleep 300.$$" >/dev/null && fail "a background process of the agent survived the episode"
pgrep -f "sleep 303.$$" >/dev/null && fail "a process in a session of its own survived the episode"
pgrep -f "sleep 100.$$" >/dev/null && fail "a timed-out command survived"
cell=$(ls r/artifacts)
[ -f "r/artifacts/$cell/tetra.stl" ] || fail "the real deliverable was not copied"
[ ! -e "r/artifacts/$cell/passwd.txt" ] || fail "a link to a host file was followed"
[ ! -e "r/artifacts/$cell/linked/shadow" ] || fail "a linked folder was followed"
[ ! -e "r/artifacts/$cell/big.bin" ] || fail "an over-cap deliverable was copied"
[ ! -d r/work ] || [ -z "$(ls -A r/work)" ] || fail "the work folder was left behind"
[ -z "$(ls -A "$TMPDIR")" ] || { ls -la "$TMPDIR"; fail "the episode's folder was left under TMPDIR"; }
PYTHONPATH="$HERE" "$PY" - "$cell" <<'PY'
import sys
import h5py
import results as R
cell = sys.argv[1]
ep = R.episodes("r/results.h5")
assert len(ep) == 1 and ep[0]["success"] == 1, ep
with h5py.File("r/results.h5", "r") as f:
    notes = {R.s(a["path"]): R.s(a["note"]) for a in f["artifacts"][:]}
assert "symbolic link" in notes["passwd.txt"], notes
assert "link" in notes["linked/shadow"], notes
assert "over the cap" in notes["big.bin"], notes
t = R.trace("r/results.h5", cell)
obs = [e for e in t if e["ev"] == "observation"]
# the flood's observation (a slow guest may cut it at the command's time
# limit, but never before it wrote far more than the cap)
big = [o for o in obs if o["bytes"] > 1048576]
assert big and all(len(o["output"]) <= 65536 for o in big), "endless output was not capped"
slow = [o for o in obs if o["timed_out"]]
assert slow, "the slow command did not time out"
print("ok")
PY
