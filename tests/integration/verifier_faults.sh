# A verifier that crashes, runs past its limits or runs out of memory on a
# delivery takes only its own child process down: the sweep finishes (exit
# 0), the episode is infra_error with the reason and the kernel and signal
# named, its verification was tried twice, it is not scored, and --resume
# judges its saved deliverables again without running the agent again, from
# the run's own end that the record keeps (or, in a journal written before
# records kept it, from the trace). The report lists it as not run. Alone
# and under mpirun.
. "$(dirname "$0")/lib.sh"
bash "$HERE/make_suite.sh" suite 1 0
# under AddressSanitizer the judge child's SIGSEGV is left to kill it, as
# in a plain build (ASan would report and exit 1)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"

check() { # OUT REASON MESSAGE-FRAGMENT
	PYTHONPATH="$HERE" "$PY" - "$@" <<'PY'
import sys
import results as R
out, reason, frag = sys.argv[1:4]
# each judging of the deliverables (the run's, then each resume's) adds
# its tries to the trace
want = [int(x) for x in (sys.argv[4] if len(sys.argv) > 4 else "1,2").split(",")]
ep = R.episodes(out + "/results.h5")
assert len(ep) == 1, ep
e = ep[0]
assert e["outcome"] == "infra_error" and e["infra"] == reason, e
assert frag in e["message"] and "'mesh'" in e["message"], e["message"]
assert e["success"] == 0 and e["score"] == 0, e
assert e["verifier"] == "mesh@1", e
tr = R.trace(out + "/results.h5", e["cell"])
tries = [t for t in tr if t["ev"] == "verifier_error"]
assert [t["try"] for t in tries] == want, tries
print(out, "->", e["message"])
PY
}

run_fault() { # FAULT OUT [extra run options]
	local fault=$1 out=$2
	shift 2
	ENGI_JUDGE_FAULT=$fault "$ENGISWEEP" run --agents reference --quiet --out "$out" "$@" suite \
		> "$out.log" 2>&1 || { cat "$out.log"; fail "$fault: the sweep failed"; }
}

run_fault segv r-segv
check r-segv "verifier crashed" "died of signal 11"
run_fault abort r-abort
check r-abort "verifier crashed" "died of signal 6"
run_fault nomem r-nomem --verify-mem-mb 4096
check r-nomem "verifier crashed" "ran out of memory (limit 4096 MiB)"
t0=$(date +%s)
run_fault sleep r-sleep --verify-timeout 2
check r-sleep "verifier timed out" "ran past its limit of 2 s"
run_fault spin r-spin --verify-timeout 2
check r-spin "verifier timed out" ""
took=$(( $(date +%s) - t0 ))
[ "$took" -lt 30 ] || fail "two timed-out verifiers (2 tries each, 2 s limit) took $took s"

# not scored, listed as not run
"$ENGISWEEP" report --out-prefix rep r-segv/results.h5 > rep.txt 2>&1 || { cat rep.txt; fail "report"; }
grep -q "not run: verifier crashed" rep.txt || { cat rep.txt; fail "report does not list the crash"; }
grep -q "Needs attention:\*\* the verifier failed on the deliverables of 1 episode" rep.txt \
	|| { cat rep.txt; fail "report does not flag the verifier failure"; }

# --resume does not run the agent again: it judges the saved deliverables
# again. While the verifier still fails the cell stays a verifier failure
# (said on stderr, listed in the report); once it works, the run's own
# outcome and the new verdict replace it, journalled.
started() { PYTHONPATH="$HERE" "$PY" -c "import results as R; print([e['started_at'] for e in R.episodes('$1/results.h5')])"; }
before=$(started r-segv)
ENGI_JUDGE_FAULT=segv "$ENGISWEEP" run --resume --agents reference --quiet --out r-segv suite > resume1.log 2>&1 \
	|| { cat resume1.log; fail "resume with a failing verifier"; }
grep -q "the verifier failed again: verifier 'mesh' died of signal 11" resume1.log || { cat resume1.log; fail "no notice"; }
check r-segv "verifier crashed" "died of signal 11" 1,2,1,2
[ "$(started r-segv)" = "$before" ] || fail "the agent ran again"
# the record keeps the run's own end (run_outcome, run_message), which the
# rejudging reads: a message put there comes back as the record's
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R
e = R.episodes("r-segv/results.h5")[0]
end = [t for t in R.trace("r-segv/results.h5", e["cell"]) if t["ev"] == "end"][-1]
assert e["run_outcome"] == "done" and e["run_message"] == end["message"] != "", (e, end)
lines = [json.loads(l) for l in open("r-segv/journal.jsonl")]
assert lines[-1]["run_outcome"] == "done", lines[-1]
lines[-1]["run_message"] = "the run's own end, as its record keeps it"
with open("r-segv/journal.jsonl", "w") as f:
    f.writelines(json.dumps(l, separators=(",", ":")) + "\n" for l in lines)
PY
"$ENGISWEEP" run --resume --agents reference --quiet --out r-segv suite > resume.log 2>&1 \
	|| { cat resume.log; fail "resume"; }
[ "$(started r-segv)" = "$before" ] || fail "the agent ran again"
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R
ep = R.episodes("r-segv/results.h5")
assert len(ep) == 1, ep
e = ep[0]
assert e["outcome"] == "done" and e["success"] == 1 and e["infra"] == "" and e["verifier"] == "mesh@1", e
assert e["message"] == "the run's own end, as its record keeps it", e
last = [json.loads(l) for l in open("r-segv/journal.jsonl")][-1]
assert last["outcome"] == "done" and last["success"] is True, last
names = sorted(a["name"] for a in last["assertions"])
assert names == ["closed", "delivered:tetra.stl", "volume"], names
PY

# a journal written before records kept the run's end: its trace's last
# "end" says it, and the rejudged record keeps it from then on
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
lines = [json.loads(l) for l in open("r-abort/journal.jsonl")]
for l in lines:
    if "cell" in l:
        l.pop("run_outcome", None)
        l.pop("run_message", None)
with open("r-abort/journal.jsonl", "w") as f:
    f.writelines(json.dumps(l, separators=(",", ":")) + "\n" for l in lines)
PY
"$ENGISWEEP" run --resume --agents reference --quiet --out r-abort suite > resume-old.log 2>&1 \
	|| { cat resume-old.log; fail "resume of an older journal"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R
ep = R.episodes("r-abort/results.h5")
assert len(ep) == 1, ep
e = ep[0]
end = [t for t in R.trace("r-abort/results.h5", e["cell"]) if t["ev"] == "end"][-1]
assert e["outcome"] == "done" and e["success"] == 1 and e["infra"] == "", e
assert e["message"] == end["message"] != "" and "signal" not in e["message"], (e, end)
last = [json.loads(l) for l in open("r-abort/journal.jsonl")][-1]
assert last["run_outcome"] == "done" and last["run_message"] == end["message"], last
PY

# killed while an episode's verification runs: the episode is over and in
# verifying.jsonl, so --resume judges its saved deliverables and does not
# run the agent again (its started_at is the killed run's)
ENGI_JUDGE_FAULT=sleep setsid "$ENGISWEEP" run --agents reference --quiet --out r-kill \
	--verify-timeout 600 suite > kill.log 2>&1 &
pid=$!
for _ in $(seq 300); do
	[ -s r-kill/verifying.jsonl ] && [ "$(wc -l < r-kill/verifying.jsonl)" -ge 2 ] && break
	sleep 0.1
done
[ "$(wc -l < r-kill/verifying.jsonl)" -ge 2 ] || { cat kill.log; fail "no episode waits for its verification"; }
kill -9 -- -"$pid" 2>/dev/null || kill -9 "$pid"
wait "$pid" 2>/dev/null || true
cp r-kill/verifying.jsonl r-kill/verifying.jsonl.seen
"$ENGISWEEP" run --resume --agents reference --quiet --out r-kill suite > kill-resume.log 2>&1 \
	|| { cat kill-resume.log; fail "resume after a kill during verification"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json, os
import results as R
pend = [json.loads(l) for l in open("r-kill/verifying.jsonl.seen")][1:]
ep = R.episodes("r-kill/results.h5")
assert len(ep) == 1 and len(pend) == 1, (ep, pend)
e = ep[0]
assert e["cell"] == pend[0]["cell"] and abs(e["started_at"] - pend[0]["started_at"]) < 1e-6, \
    ("the agent ran again", e["started_at"], pend[0]["started_at"])
assert e["outcome"] == "done" and e["success"] == 1 and e["infra"] == "", e
assert not os.path.exists("r-kill/verifying.jsonl"), "verifying.jsonl is left after a complete sweep"
PY

# under mpirun the crashing verifier does not take a rank down
ENGI_JUDGE_FAULT=segv mpirun_ -np 3 -x ENGI_JUDGE_FAULT "$ENGISWEEP" run --agents reference \
	--trials 3 --quiet --out r-mpi suite > mpi.log 2>&1 || { cat mpi.log; fail "mpirun sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
ep = R.episodes("r-mpi/results.h5")
assert len(ep) == 3 and all(e["infra"] == "verifier crashed" for e in ep), ep
PY

# judged by hand, the saved deliverables get the task's scoring on the first
# line (a closed tetrahedron of the right volume: a success); --out keeps the
# verifier's assertions unscored for the parent to score
art=$(ls -d r-segv/artifacts/*/ | head -1)
"$ENGISWEEP" judge suite/tetra-1.json "$art" > byhand.txt 2>&1 || { cat byhand.txt; fail "judge by hand"; }
head -1 byhand.txt | grep -q "^success 1  feasible 1  score 1" || { cat byhand.txt; fail "judge by hand is unscored"; }
grep -q "pass *closed" byhand.txt || { cat byhand.txt; fail "judge by hand lists no assertion"; }
echo ok
