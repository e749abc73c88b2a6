# sbatch jobscripts/sweep.sbatch runs the demo sweep on 4 ranks through
# srun --mpi=pmix, as an ablation grid of two conditions (RUN_ARGS --grid):
# the results are complete and correct; analyze.sbatch, afterok, finds the
# declared grid and compares its family.
. "$ENGI_SRC/tests/slurm/lib.sh"
cd "$ENGI_SRC"
id=$(OUT="$T/runs/out" AGENTS=reference,noop TRIALS=1 ENGISWEEP="$ENGISWEEP" \
	RUN_ARGS="--grid history_turns=5,15" \
	sbatch --parsable --ntasks=4 --output="$T/job.log" jobscripts/sweep.sbatch)
ana=$(OUT="$T/runs" ENGISWEEP="$ENGISWEEP" \
	sbatch --parsable --dependency=afterok:"$id" --output="$T/analyze.log" jobscripts/analyze.sbatch)
st=$(wait_job "$id" 300)
[ "$st" = COMPLETED ] || { cat "$T/job.log"; fail "the sweep job ended $st"; }
grep -q "on 4 ranks" "$T/job.log" || { cat "$T/job.log"; fail "the sweep did not run on 4 ranks"; }
PYTHONPATH="$HERE" "$PY" - "$T/runs/out/results.h5" "$ENGI_SRC/tasks/demo" <<'PY'
import glob, os, sys
import results as R
ep = R.episodes(sys.argv[1])
n = len(glob.glob(os.path.join(sys.argv[2], "*.json")))
assert len(ep) == 2 * 2 * n, len(ep)
assert len({e["cell"] for e in ep}) == len(ep)
assert {e["condition"] for e in ep} == {"history_turns-5", "history_turns-15"}
for e in ep:
    assert bool(e["success"]) == (e["model"] == "reference"), e
assert len({e["rank"] for e in ep}) >= 3, "episodes did not spread over the ranks"
print("ok:", len(ep), "episodes")
PY
st=$(wait_job "$ana" 300)
[ "$st" = COMPLETED ] || { cat "$T/analyze.log"; fail "the analysis job ended $st"; }
grep -q "declared grid" "$T/runs/analysis/compare.md" || { cat "$T/analyze.log"; fail "the analysis did not compare the grid"; }
grep -q "grid:history_turns,reference,history_turns-15,history_turns-5," "$T/runs/analysis/compare.csv" \
	|| { cat "$T/runs/analysis/compare.csv"; fail "the grid's comparison row is missing"; }
# nothing was continued: the sweep finished in its allocation
sleep 1
[ "$(timeout 10 squeue -h | wc -l)" -eq 0 ] || fail "a continuation was submitted for a finished sweep"
