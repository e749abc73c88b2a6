# An ablation of 3 conditions as a job array, one shard each, then the
# analysis job after it (afterok): merge, report, compare, plots. The
# comparison table names every condition against the baseline.
. "$ENGI_SRC/tests/slurm/lib.sh"
bash "$HERE/make_suite.sh" "$T/suite" 6 0
printf 'h5:history_turns=5\nh10:history_turns=10\nh15:history_turns=15\n' > "$T/conditions.txt"
cd "$ENGI_SRC"
export SUITE="$T/suite" OUT="$T/abl" CONDITIONS="$T/conditions.txt" AGENTS=reference,flawed:open \
	TRIALS=1 ENGISWEEP="$ENGISWEEP" BASELINE=h5
arr=$(sbatch --parsable --array=0-2 --ntasks=2 --output="$T/abl-%A_%a.log" jobscripts/ablation.sbatch)
ana=$(sbatch --parsable --dependency=afterok:"$arr" --output="$T/analyze.log" jobscripts/analyze.sbatch)
st=$(wait_job "$ana" 400)
[ "$st" = COMPLETED ] || { cat "$T"/abl-*.log "$T/analyze.log" 2>/dev/null; fail "the analysis job ended $st"; }
for c in h5 h10 h15; do
	[ -f "$T/abl/$c/results.h5" ] || fail "no shard for condition $c"
done
grep -q "h10" "$T/abl/analysis/compare.md" && grep -q "h15" "$T/abl/analysis/compare.md" \
	|| { cat "$T/abl/analysis/compare.md"; fail "the comparison table lacks a condition"; }
[ -s "$T/abl/analysis/compare.csv" ] || fail "no comparison CSV"
ls "$T"/abl/analysis/*.png >/dev/null 2>&1 || fail "no plots"
PYTHONPATH="$HERE" "$PY" - "$T/abl/merged.h5" <<'PY'
import collections, sys
import results as R
ep = R.episodes(sys.argv[1])
assert len(ep) == 6 * 2 * 3, len(ep)
assert max(collections.Counter(e["cell"] for e in ep).values()) == 1
assert {e["condition"] for e in ep} == {"h5", "h10", "h15"}
print("ok")
PY
