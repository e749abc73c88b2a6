# Verifier kind "command": a benchmark's own evaluator, held back in the
# task's folder, put into the environment only after the agent stopped and
# run there; judged by its output and exit status. In the episode's own
# environment and in a clean one; an evaluator that hangs is a verifier
# failure, never a score; the agent never sees the evaluator.
. "$(dirname "$0")/lib.sh"
mkdir -p suite/answer/eval suite/slow/eval suite/fresh/eval
cat > suite/answer/eval/check.sh <<'SH'
# run in the work folder after the agent: out.txt must say 42
if [ "$(cat seen.txt 2>/dev/null)" = absent ]; then echo evaluator-unseen; fi
if [ "$(cat out.txt 2>/dev/null)" = 42 ]; then echo True; echo 0.75; exit 0; fi
echo False
echo 0.25
exit 3
SH
cp suite/answer/eval/check.sh suite/fresh/eval/check.sh
printf 'sleep 30\necho True\n' > suite/slow/eval/check.sh
task() { # ID ENV RUN TIMEOUT
	cat > "suite/$1.json" <<JSON
{
  "id": "$1", "domain": "CAD", "software": ["sh"], "type": "single", "interface": "cli",
  "instruction": "Write the answer to out.txt.",
  "deliverables": [{"path": "out.txt"}, {"path": "seen.txt"}],
  "verifier": {
    "kind": "command", "file": "out.txt", "env": "$2",
    "upload": [{"from": "$1/eval/check.sh", "to": "eval/check.sh"}],
    "run": "$3", "timeout_s": $4,
    "criteria": [
      {"name": "passes", "check": "output_contains", "text": "True"},
      {"name": "unseen", "check": "output_contains", "text": "evaluator-unseen", "stage": "integrity"},
      {"name": "score", "check": "last_number", "min": 0.5},
      {"name": "exit", "check": "exit_status", "equals": 0}
    ]
  },
  "reference": [
    {"run": "if [ -e eval/check.sh ] || [ -e $PWD/suite/$1/eval/check.sh ]; then echo present; else echo absent; fi > seen.txt"},
    {"write": "out.txt", "text": "42\n"}
  ],
  "flawed": [
    {"name": "wrong", "steps": [{"run": "echo absent > seen.txt"}, {"write": "out.txt", "text": "41\n"}],
     "expect": "fail", "failing": ["passes", "score", "exit"]}
  ]
}
JSON
}
task answer episode "sh eval/check.sh" 60
task fresh clean "sh eval/check.sh" 60
task slow episode "sh eval/check.sh" 1

"$ENGISWEEP" inspect suite > inspect.txt 2>&1 || { cat inspect.txt; fail "inspect"; }
"$ENGISWEEP" run --agents reference,noop,flawed:wrong --retries 0 --quiet --out r suite > run.log 2>&1 \
	|| { cat run.log; fail "the sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import h5py
import results as R
ep = {(e["task_id"], e["model"]): e for e in R.episodes("r/results.h5")}
with h5py.File("r/results.h5", "r") as f:
    rows = f["assertions"][:]
assert len(ep) == 9, sorted(ep)
def asserts(e):
    return {R.s(a["name"]): R.s(a["state"]) for a in rows if R.s(a["cell"]) == e["cell"]}
for t in ("answer", "fresh"):
    ref = ep[(t, "reference")]
    assert ref["outcome"] == "done" and ref["success"] == 1, (t, ref, asserts(ref))
    a = asserts(ref)
    assert a["unseen"] == "pass", (t, a)  # the agent never saw the evaluator
    assert a["passes"] == a["score"] == a["exit"] == "pass", (t, a)
    assert ref["verifier"] == "command@1", ref
    bad = ep[(t, "flawed:wrong")]
    assert bad["success"] == 0 and bad["outcome"] == "done", bad
    a = asserts(bad)
    assert a["passes"] == a["score"] == a["exit"] == "fail", (t, a)
    noop = ep[(t, "noop")]
    assert noop["success"] == 0 and noop["infra"] == "", noop
# an evaluator past its limit: a verifier failure, not scored, for every agent
for m in ("reference", "noop", "flawed:wrong"):
    e = ep[("slow", m)]
    assert e["outcome"] == "infra_error" and e["infra"] == "verifier timed out", e
    assert "ran past its limit of 1 s" in e["message"], e
    assert e["success"] == 0 and e["score"] == 0, e
print("ok: evaluators judged in the episode's and in a clean environment")
PY
"$ENGISWEEP" report r/results.h5 > rep.txt 2>&1 || { cat rep.txt; fail "report"; }
grep -q "verifier timed out" rep.txt || { cat rep.txt; fail "the report does not list the timed-out evaluator"; }
# --resume: an evaluator of the episode's environment cannot judge saved
# deliverables again, so the timed-out cells run again (the agent too)
started() { PYTHONPATH="$HERE" "$PY" -c "import results as R; print(sorted((e['task_id'], e['model'], e['started_at']) for e in R.episodes('r/results.h5')))"; }
before=$(started)
"$ENGISWEEP" run --resume --agents reference,noop,flawed:wrong --retries 0 --quiet --out r suite > resume.log 2>&1 \
	|| { cat resume.log; fail "resume"; }
BEFORE="$before" AFTER="$(started)" "$PY" - <<'PY'
import ast, os
b = {(t, m): s for t, m, s in ast.literal_eval(os.environ["BEFORE"])}
a = {(t, m): s for t, m, s in ast.literal_eval(os.environ["AFTER"])}
assert set(a) == set(b), (a, b)
for k in a:
    assert (a[k] != b[k]) == (k[0] == "slow"), (k, b[k], a[k])
print("ok: only the cells whose evaluator failed ran again")
PY
# a path out of the task's folder is refused when the suite loads
mkdir -p bad
sed 's#"from": "fresh/eval/check.sh"#"from": "../suite/fresh/eval/check.sh"#' suite/fresh.json > bad/fresh.json
expect_rc 2 "$ENGISWEEP" validate --out v bad
says "$ENGISWEEP" run --agents reference --out v2 bad | grep -q "must be a path inside the task's folder" \
	|| fail "an upload from outside the task's folder was not refused"
echo ok
