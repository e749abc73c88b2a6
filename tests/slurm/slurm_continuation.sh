# A sweep that needs longer than its 2-minute time limit: SLURM signals the
# batch shell (USR1, 60 s ahead), engisweep drains and exits 0, the script
# submits its continuation, which resumes and finishes. Every cell exactly
# once; cells cut short by the drain are not charged as retries.
. "$ENGI_SRC/tests/slurm/lib.sh"
bash "$HERE/make_suite.sh" "$T/suite" 24 8
cd "$ENGI_SRC"
# SBATCH_* settings carry over to the continuation through the environment
export SBATCH_TIMELIMIT=2 SBATCH_SIGNAL=B:USR1@60 SBATCH_OUTPUT="$T/job-%j.log"
id=$(SUITE="$T/suite" OUT="$T/out" AGENTS=reference TRIALS=2 GRACE=20 ENGISWEEP="$ENGISWEEP" \
	sbatch --parsable --ntasks=4 jobscripts/sweep.sbatch)
st=$(wait_job "$id" 200)
[ "$st" = COMPLETED ] || { cat "$T"/job-*.log; fail "the first job ended $st (not drained in time?)"; }
grep -q "submitting the continuation" "$T/job-$id.log" || { cat "$T/job-$id.log"; fail "no continuation submitted"; }
"$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["draining"] and s["done"] < 48, s' "$T/out/status.json" \
	|| fail "the first allocation did not drain"
# the continuation: the one other job
next=""
for _ in $(seq 1 60); do
	next=$(timeout 10 scontrol show job -o 2>/dev/null | grep -o 'JobId=[0-9]*' | cut -d= -f2 | grep -vx "$id" | head -1 || true)
	[ -n "$next" ] && break
	sleep 0.5
done
[ -n "$next" ] || fail "the continuation job never appeared"
st=$(wait_job "$next" 300)
[ "$st" = COMPLETED ] || { cat "$T"/job-*.log; fail "the continuation ended $st"; }
grep -Eq "\([1-9][0-9]* done before" "$T/job-$next.log" || { cat "$T/job-$next.log"; fail "the continuation did not resume"; }
PYTHONPATH="$HERE" "$PY" - "$T/out" <<'PY'
import collections, json, sys
import results as R
out = sys.argv[1]
ep = R.episodes(out + "/results.h5")
assert len(ep) == 48, len(ep)
assert max(collections.Counter(e["cell"] for e in ep).values()) == 1, "a cell appears twice"
assert all(e["attempts"] == 1 for e in ep), "a drained episode was charged as a retry"
assert all(e["success"] for e in ep)
runs = collections.Counter(e["run_id"] for e in ep)
assert len(runs) == 2, f"expected two allocations, saw {dict(runs)}"
print("ok:", dict(runs))
PY
