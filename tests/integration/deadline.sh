# Walltime awareness: with --deadline, a cell starts only when its predicted
# duration fits before the end of the allocation; predictions improve from
# measured durations (the estimate here is 4 s, the episodes take ~1 s); what
# does not fit stays unrun for the next allocation.
. "$(dirname "$0")/lib.sh"
bash "$HERE/make_suite.sh" suite 10 1.0
start=$("$PY" -c 'import time; print(time.time())')
deadline=$("$PY" -c "print($start + 8)")
"$ENGISWEEP" run --jobs 1 --grace 0 --deadline "$deadline" --out d suite > d.log 2>&1 \
	|| { cat d.log; fail "the run failed"; }
PYTHONPATH="$HERE" "$PY" - "$deadline" <<'PY'
import json, sys
import results as R
deadline = float(sys.argv[1])
ep = R.episodes("d/results.h5")
st = json.load(open("d/status.json"))
# estimates alone (4 s per cell) would admit at most 4 cells before 8 s
assert 5 <= len(ep) < 10, f"{len(ep)} episodes ran"
assert st["total"] - st["done"] == 10 - len(ep)
last_end = max(e["started_at"] + e["wall_s"] for e in ep)
assert last_end <= deadline + 0.5, f"an episode ran {last_end - deadline:.2f} s past the deadline"
print("ok:", len(ep), "cells fit")
PY
grep -q "cells unrun (continue with --resume)" d.log || fail "no word of the unrun cells"
"$ENGISWEEP" run --resume --jobs 2 --quiet --out d suite
[ "$(PYTHONPATH="$HERE" "$PY" "$HERE/results.py" count d/results.h5)" -eq 10 ] || fail "resume did not finish"
# SLURM_JOB_END_TIME is honoured like --deadline
SLURM_JOB_END_TIME=$("$PY" -c 'import time; print(int(time.time()) + 1)') \
	"$ENGISWEEP" run --jobs 1 --grace 0 --out e suite > e.log 2>&1
grep -q "10 cells unrun" e.log || { cat e.log; fail "SLURM_JOB_END_TIME was not honoured"; }
echo "ok"
