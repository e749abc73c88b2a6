# An ablation grid in one sweep, run as a job array would run it (static
# shards) and under mpirun with cells sent ahead: the shards merge into the
# full matrix (each cell once, the same ids as one run), the merged file keeps
# the declared grid, and `compare --axis grid` tests exactly the declared
# family (each condition against the one with that axis at its first value)
# as one Holm family. Bad shards and grid comparisons without a grid are
# refused with reasons.
. "$(dirname "$0")/lib.sh"
bash "$HERE/make_suite.sh" suite 6 0
G=(--agents reference,flawed:open --grid history_turns=5,15,25 --grid screen_scale=0.6,1.0)
for k in 0 1 2; do
	"$ENGISWEEP" run --quiet "${G[@]}" --shard "$k/3" --out "s$k" suite
done
"$ENGISWEEP" merge -o merged.h5 s0/results.h5 s1/results.h5 s2/results.h5 2> merge.log
mpirun_ -np 5 "$ENGISWEEP" run --quiet "${G[@]}" --out whole suite
PYTHONPATH="$HERE" "$PY" - <<'PY'
import collections, json
import h5py
import results as R
shards = [R.episodes(f"s{k}/results.h5") for k in range(3)]
sizes = [len(s) for s in shards]
assert sum(sizes) == 6 * 2 * 6 and max(sizes) - min(sizes) <= 1, sizes
whole = R.episodes("whole/results.h5")
merged = R.episodes("merged.h5")
assert sorted(e["cell"] for e in merged) == sorted(e["cell"] for e in whole), "shards differ from one run"
assert max(collections.Counter(e["cell"] for e in merged).values()) == 1
assert R.verdicts("merged.h5") == R.verdicts("whole/results.h5")
assert len({e["rank"] for e in whole}) >= 3, "mpirun used too few ranks"
for path in ("merged.h5", "whole/results.h5", "s1/results.h5"):
    with h5py.File(path, "r") as f:
        cfg = json.loads(R.s(f.attrs["config"]))
    g = cfg["grid"]
    assert [a["axis"] for a in g["axes"]] == ["history_turns", "screen_scale"], g
    assert len(g["family"]) == 2 * 2 + 3 * 1, g["family"]
with h5py.File("s1/results.h5", "r") as f:
    assert json.loads(R.s(f.attrs["config"]))["shard"] == "1/3"
print("ok")
PY
"$ENGISWEEP" compare --axis grid --draws 400 --out-prefix cmp merged.h5 > cmp.md
"$PY" - <<'PY'
import csv, json
rows = list(csv.DictReader(open("cmp.csv", newline="")))
want = set()
for m in ("reference", "flawed:open"):
    for s in ("0.6", "1.0"):
        for h in ("15", "25"):
            want.add((m, "grid:history_turns", f"history_turns-{h}_screen_scale-{s}", f"history_turns-5_screen_scale-{s}"))
    for h in ("5", "15", "25"):
        want.add((m, "grid:screen_scale", f"history_turns-{h}_screen_scale-1.0", f"history_turns-{h}_screen_scale-0.6"))
got = {(r["within"], r["axis"], r["a"], r["b"]) for r in rows}
assert got == want, (got ^ want)
assert len(rows) == len(want) == 14
j = json.load(open("cmp.json"))
assert j["family"]["axis"] == "grid" and j["family"]["size"] == 14, j["family"]
assert all(r["tasks"] == "6" for r in rows)
print("ok: the declared family, 14 comparisons")
PY
grep -q "declared grid" cmp.md || fail "the family is not named"
# refused with a reason
"$ENGISWEEP" run --quiet --agents reference --out plain suite
expect_rc 2 "$ENGISWEEP" compare --axis grid plain/results.h5
says "$ENGISWEEP" compare --axis grid plain/results.h5 | grep -q "declares no condition grid" \
	|| fail "no reason for a results file without a grid"
expect_rc 2 "$ENGISWEEP" compare --axis grid --baseline x merged.h5
for bad in 3/3 1 -1/2 1/0 a/b 1/2x; do
	expect_rc 2 "$ENGISWEEP" run --quiet --shard "$bad" --out bad suite
done
says "$ENGISWEEP" run --shard 3/3 --out bad suite | grep -q "expected K/N" || fail "no reason for a bad shard"
echo "ok"
