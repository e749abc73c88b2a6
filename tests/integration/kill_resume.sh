# kill -9 of mpirun at a random moment, then --resume: every cell exactly
# once, the file opens, nothing completed before the kill was run again;
# the local backend's folders the killed ranks left under $TMPDIR are gone.
. "$(dirname "$0")/lib.sh"
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
# 24 reference episodes of 1 s on 3 ranks: the sweep runs for at least 8 s,
# so a kill within the first 5 s always lands mid-sweep
bash "$HERE/make_suite.sh" suite 12 1.0
ARGS=(--agents reference,flawed:open --trials 2 --quiet --out k suite)
setsid env ASAN_OPTIONS="$MPI_ASAN_OPTIONS" mpirun -np 3 "$ENGISWEEP" run "${ARGS[@]}" > run1.log 2>&1 &
pid=$!
delay=$("$PY" -c 'import random; print(round(random.uniform(1.5, 5.0), 2))')
echo "killing mpirun after ${delay}s"
sleep "$delay"
kill -9 -"$pid" 2>/dev/null || kill -9 "$pid" 2>/dev/null || { cat run1.log; fail "the sweep ended before the kill"; }
wait "$pid" 2>/dev/null || true
# a batch system would take the whole allocation down: leave no rank behind
pkill -9 -f "engisweep run .*--out k " 2>/dev/null || true
sleep 0.5
[ -f k/journal.jsonl ] || fail "no journal after the kill"

PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import h5py
done = {}
with open("k/journal.jsonl") as f:
    lines = f.read().split("\n")
for line in lines[1:-1]:                 # the last piece may be partial
    r = json.loads(line)
    done[r["cell"]] = (r["run_id"], r["started_at"])
json.dump(done, open("before.json", "w"))
# the results file must open, whatever moment the kill hit
with h5py.File("k/results.h5", "r") as f:
    n = f["episodes"].shape[0]
assert n <= len(done) + 1, (n, len(done))
print("before resume:", len(done), "journaled,", n, "rows in the HDF5 file")
PY

ls "$TMPDIR" | grep -q '^engisweep-local-' || fail "the killed ranks left no folder under TMPDIR"
mpirun_ -np 3 "$ENGISWEEP" run --resume "${ARGS[@]}" > run2.log 2>&1 || { cat run2.log; fail "resume failed"; }
if ls "$TMPDIR" | grep '^engisweep-local-'; then fail "folders of the killed ranks were left under TMPDIR"; fi

PYTHONPATH="$HERE" "$PY" - <<'PY'
import collections, json
import results as R
before = json.load(open("before.json"))
ep = R.episodes("k/results.h5")
assert len(ep) == 12 * 2 * 2, len(ep)
count = collections.Counter(e["cell"] for e in ep)
assert max(count.values()) == 1, "a cell appears twice"
rows = {e["cell"]: e for e in ep}
for cell, (run_id, started) in before.items():
    assert rows[cell]["run_id"] == run_id, f"cell {cell} was run again"
    assert abs(rows[cell]["started_at"] - started) < 1e-6, cell
journal = collections.Counter()
with open("k/journal.jsonl") as f:
    for line in f.read().split("\n")[1:]:
        if line:
            journal[json.loads(line)["cell"]] += 1
for cell in before:
    assert journal[cell] == 1, f"cell {cell} journaled {journal[cell]} times"
for e in ep:
    want = e["model"] == "reference"
    assert bool(e["success"]) == want, e
print("ok:", len(before), "cells kept,", len(ep) - len(before), "run after the resume")
PY
