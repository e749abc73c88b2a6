# SIGTERM (alone) or SIGUSR1 (to mpirun): dispatching stops, running
# episodes finish, the run exits 0 and --resume completes the sweep; an
# episode that outlives the grace time is interrupted and stays unrun.
. "$(dirname "$0")/lib.sh"
bash "$HERE/make_suite.sh" suite 16 1.0

# 1. alone, SIGTERM: the two running episodes finish within the grace
"$ENGISWEEP" run --jobs 2 --grace 30 --progress-every 1 --out a suite > a.log 2>&1 &
pid=$!
wait_for_status a/status.json 's["done"] >= 1 and s["running"] >= 1'
kill -TERM "$pid"
set +e; wait "$pid"; rc=$?; set -e
[ "$rc" -eq 0 ] || { cat a.log; fail "drained run exited $rc"; }
"$PY" - <<'PY'
import json
st = json.load(open("a/status.json"))
assert st["finished"] and st["draining"], st
assert 0 < st["done"] < 16, st
assert st["interrupted"] == 0, st
PY
grep -q "continue with --resume" a.log || fail "no hint to resume"
"$ENGISWEEP" run --resume --jobs 2 --quiet --out a suite
[ "$(PYTHONPATH="$HERE" "$PY" "$HERE/results.py" count a/results.h5)" -eq 16 ] || fail "resume did not complete"

# 2. under mpirun, SIGUSR1 reaches the ranks
setsid env ASAN_OPTIONS="$MPI_ASAN_OPTIONS" mpirun -np 3 "$ENGISWEEP" run --grace 30 --out b suite > b.log 2>&1 &
pid=$!
wait_for_status b/status.json 's["done"] >= 1 and s["running"] >= 1'
kill -USR1 "$pid"
set +e; wait "$pid"; rc=$?; set -e
[ "$rc" -eq 0 ] || { cat b.log; fail "mpirun drain exited $rc"; }
"$PY" -c 'import json,sys; st=json.load(open("b/status.json")); assert st["draining"] and st["done"] < 16, st'
mpirun_ -np 3 "$ENGISWEEP" run --resume --quiet --out b suite
[ "$(PYTHONPATH="$HERE" "$PY" "$HERE/results.py" count b/results.h5)" -eq 16 ] || fail "mpirun resume did not complete"

# 3. grace over: a long episode is interrupted, not recorded, resumable
# a sleep length unique to this run, so pgrep sees only our process
long="60.$$"
bash "$HERE/make_suite.sh" slow 1 "$long"
"$ENGISWEEP" run --grace 0.5 --out c slow > c.log 2>&1 &
pid=$!
wait_for_status c/status.json 's["running"] == 1'
sleep 0.5
t0=$(date +%s)
kill -TERM "$pid"
set +e; wait "$pid"; rc=$?; set -e
[ "$rc" -eq 0 ] || fail "interrupted run exited $rc"
[ $(( $(date +%s) - t0 )) -le 5 ] || fail "the episode was not interrupted after the grace time"
"$PY" -c 'import json; st=json.load(open("c/status.json")); assert st["interrupted"] == 1 and st["done"] == 0, st'
[ "$(PYTHONPATH="$HERE" "$PY" "$HERE/results.py" count c/results.h5)" -eq 0 ] || fail "an interrupted cell was recorded"
pgrep -f "sleep $long" >/dev/null && fail "the interrupted command is still running"
echo "ok"
