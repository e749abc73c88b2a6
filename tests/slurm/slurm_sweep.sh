# sbatch jobscripts/sweep.sbatch runs the demo sweep on 4 ranks through
# srun --mpi=pmix: the results are complete and correct.
. "$ENGI_SRC/tests/slurm/lib.sh"
cd "$ENGI_SRC"
id=$(OUT="$T/out" AGENTS=reference,noop TRIALS=1 ENGISWEEP="$ENGISWEEP" \
	sbatch --parsable --ntasks=4 --output="$T/job.log" jobscripts/sweep.sbatch)
st=$(wait_job "$id" 300)
[ "$st" = COMPLETED ] || { cat "$T/job.log"; fail "the sweep job ended $st"; }
grep -q "on 4 ranks" "$T/job.log" || { cat "$T/job.log"; fail "the sweep did not run on 4 ranks"; }
PYTHONPATH="$HERE" "$PY" - "$T/out/results.h5" "$ENGI_SRC/tasks/demo" <<'PY'
import glob, os, sys
import results as R
ep = R.episodes(sys.argv[1])
n = len(glob.glob(os.path.join(sys.argv[2], "*.json")))
assert len(ep) == 2 * n, len(ep)
assert len({e["cell"] for e in ep}) == len(ep)
for e in ep:
    assert bool(e["success"]) == (e["model"] == "reference"), e
assert len({e["rank"] for e in ep}) >= 3, "episodes did not spread over the ranks"
print("ok:", len(ep), "episodes")
PY
# nothing was continued: the sweep finished in its allocation
sleep 1
[ "$(timeout 10 squeue -h | wc -l)" -eq 0 ] || fail "a continuation was submitted for a finished sweep"
