# The demo sweep under mpirun -np 3 (agents reference and noop, 2 trials):
# the HDF5 file read back with h5py has exactly the expected rows and
# verdicts, traces decompress, artifact digests match the files; the serial
# twin (no mpirun) gives identical cell ids and verdicts.
. "$(dirname "$0")/lib.sh"
SUITE="$ENGI_SRC/tasks/demo"
mpirun_ -np 3 "$ENGISWEEP" run --agents reference,noop --trials 2 --out mpi "$SUITE" 2> mpi.log \
	|| { cat mpi.log; fail "mpirun sweep failed"; }
grep -q "on 3 ranks" mpi.log || fail "the sweep did not run on 3 ranks"
"$ENGISWEEP" run --agents reference,noop --trials 2 --jobs 2 --quiet --out serial "$SUITE"
"$ENGISWEEP" report --out-prefix mpi/report mpi/results.h5 > report.md
grep -q "| reference | " report.md || fail "report has no reference row"
[ -s mpi/report.csv ] && [ -s mpi/report.json ] || fail "report files missing"

PYTHONPATH="$HERE" "$PY" - "$SUITE" <<'PY'
import glob, hashlib, json, os, sys
import h5py
import results as R

suite = sys.argv[1]
ntasks = len(glob.glob(os.path.join(suite, "*.json")))
ep = R.episodes("mpi/results.h5")
assert len(ep) == ntasks * 2 * 2, (len(ep), ntasks)
cells = [e["cell"] for e in ep]
assert len(set(cells)) == len(cells), "a cell appears twice"
for e in ep:
    assert e["outcome"] == "done", e
    if e["model"] == "reference":
        assert e["success"] == 1 and e["score"] == 1.0, e
    else:
        assert e["model"] == "noop" and e["success"] == 0 and e["score"] == 0.0, e
ranks = {e["rank"] for e in ep}
assert len(ranks) >= 2, f"episodes ran on ranks {ranks} only"

with h5py.File("mpi/results.h5", "r") as f:
    for name in ("tasks", "models", "conditions", "episodes", "assertions", "metrics", "artifacts"):
        assert name in f, name
    assert f["tasks"].shape[0] == ntasks
    assert int(f.attrs["planned_cells"]) == len(ep)
    cfg = json.loads(R.s(f.attrs["config"]))
    assert cfg["trials"] == 2 and cfg["backend"] == "local", cfg
    asrt = f["assertions"][:]
    by_cell = {}
    for a in asrt:
        by_cell.setdefault(R.s(a["cell"]), []).append(a)
    for e in ep:
        rows = by_cell[e["cell"]]
        delivered = [a for a in rows if R.s(a["name"]).startswith("delivered:")]
        assert len(delivered) == 1, e["cell"]
        want = "pass" if e["model"] == "reference" else "fail"
        assert R.s(delivered[0]["state"]) == want, (e, delivered)
    arts = f["artifacts"][:]
    checked = 0
    for a in arts:
        if R.s(a["sha256"]):
            p = os.path.join("mpi", "artifacts", R.s(a["cell"]), R.s(a["path"]))
            assert hashlib.sha256(open(p, "rb").read()).hexdigest() == R.s(a["sha256"]), p
            checked += 1
    assert checked >= ntasks * 2, checked

t = R.trace("mpi/results.h5", ep[0]["cell"])
assert t[0]["ev"] == "episode" and t[0]["cell"] == ep[0]["cell"], t[0]
assert t[-1]["ev"] == "verdict", t[-1]

a, b = R.verdicts("mpi/results.h5"), R.verdicts("serial/results.h5")
diff = {c: (a.get(c), b.get(c)) for c in set(a) | set(b) if a.get(c) != b.get(c)}
assert not diff, f"the serial twin disagrees with the MPI sweep: {diff}"
print("ok:", len(ep), "episodes on ranks", sorted(ranks))
PY

# the lines of docs/outputs.md that load the episodes work as printed
"$PY" - "$ENGI_SRC/docs/outputs.md" <<'PY' > readme.out
import re, sys
code = re.search(r"```python\n(.*?)```", open(sys.argv[1]).read(), re.S).group(1)
exec(code.replace("results/x/results.h5", "mpi/results.h5"))
PY
grep -q "reference mean score: 1.0" readme.out || { cat readme.out; fail "the Python lines of docs/outputs.md"; }
