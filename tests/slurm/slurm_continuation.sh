# A sweep that needs longer than its 2-minute time limit: SLURM signals the
# batch shell (USR1, 60 s ahead), engisweep drains and exits 0, the script
# submits its continuation, which resumes and finishes. Every cell exactly
# once; cells cut short by the drain are not charged as retries.
. "$ENGI_SRC/tests/slurm/lib.sh"
bash "$HERE/make_suite.sh" "$T/suite" 24 6
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
# continuations follow until every cell is done; wait for the queue to drain
for _ in $(seq 1 900); do
	[ "$(timeout 10 squeue -h | wc -l)" -eq 0 ] && break
	sleep 0.5
done
[ "$(timeout 10 squeue -h | wc -l)" -eq 0 ] || fail "jobs still queued after 450 s"
jobs=$(timeout 10 scontrol show job -o | grep -o 'JobId=[0-9]*' | cut -d= -f2)
[ "$(echo "$jobs" | wc -l)" -ge 2 ] || fail "no continuation ran"
for j in $jobs; do
	st=$(job_state "$j")
	[ "$st" = COMPLETED ] || { cat "$T"/job-*.log; fail "job $j ended $st"; }
done
last=$(echo "$jobs" | sort -n | tail -1)
grep -Eq "\([1-9][0-9]* done before" "$T/job-$last.log" || { cat "$T/job-$last.log"; fail "the continuation did not resume"; }
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
assert len(runs) >= 2, f"expected several allocations, saw {dict(runs)}"
print("ok:", dict(runs))
PY
