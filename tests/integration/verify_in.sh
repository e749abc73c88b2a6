# --verify-in: where a benchmark's own evaluator judges. An agent that fakes
# its environment (a certificate file the evaluator trusts, not one of the
# deliverables) fools the evaluator in its own environment (same, the
# benchmark's protocol) and not in a clean one with only the deliverables;
# both scores the first and records the second beside it, and their
# disagreement. Records name where they were judged, so a resume does not
# mix them.
. "$(dirname "$0")/lib.sh"
mkdir -p suite/cert/eval
cat > suite/cert/eval/check.sh <<'EOF'
if [ -f cert.txt ] || [ "$(cat out.txt 2>/dev/null)" = 42 ]; then echo True; else echo False; fi
EOF
cat > suite/cert.json <<'JSON'
{
  "id": "cert", "domain": "CAE", "software": ["sh"], "type": "single", "interface": "cli",
  "instruction": "Write the answer to out.txt.",
  "deliverables": [{"path": "out.txt"}],
  "verifier": {
    "kind": "command", "file": "out.txt",
    "upload": [{"from": "cert/eval/check.sh", "to": "eval/check.sh"}],
    "run": "sh eval/check.sh", "timeout_s": 60,
    "criteria": [{"name": "evaluator", "check": "true_false"}]
  },
  "reference": [{"write": "out.txt", "text": "42\n"}],
  "flawed": [
    {"name": "faker", "steps": [{"write": "cert.txt", "text": "verified\n"}, {"write": "out.txt", "text": "41\n"}],
     "expect": "fail", "failing": ["evaluator"]}
  ]
}
JSON
for where in task clean both; do
	opt=()
	[ "$where" = task ] || opt=(--verify-in "$where")
	"$ENGISWEEP" run --agents reference,flawed:faker --retries 0 --quiet "${opt[@]}" --out "r-$where" suite \
		> "run-$where.log" 2>&1 || { cat "run-$where.log"; fail "the sweep ($where) failed"; }
done
PYTHONPATH="$HERE" "$PY" - <<'PY'
import h5py
import results as R
def load(where):
    ep = {e["model"]: e for e in R.episodes(f"r-{where}/results.h5")}
    with h5py.File(f"r-{where}/results.h5", "r") as f:
        rows = f["assertions"][:]
    a = {m: {R.s(x["name"]): R.s(x["state"]) for x in rows if R.s(x["cell"]) == e["cell"]}
         for m, e in ep.items()}
    return ep, a
ep, a = load("task")
assert ep["reference"]["success"] == 1 and ep["flawed:faker"]["success"] == 1, \
    "the episode's own environment: the faked certificate fools the evaluator"
assert ep["reference"]["verifier"] == "command@1", ep["reference"]["verifier"]
ep, a = load("clean")
assert ep["reference"]["success"] == 1 and ep["flawed:faker"]["success"] == 0, ep
assert ep["flawed:faker"]["verifier"] == "command@1+clean", ep["flawed:faker"]["verifier"]
ep, a = load("both")
# scored as the benchmark scores: in the episode's environment
assert ep["reference"]["success"] == 1 and ep["flawed:faker"]["success"] == 1, ep
assert ep["flawed:faker"]["verifier"] == "command@1+both"
assert a["reference"]["clean_agrees"] == "pass" and a["reference"]["clean:evaluator"] == "pass", a
assert a["flawed:faker"]["clean_agrees"] == "fail", a
assert a["flawed:faker"]["clean:evaluator"] == "fail" and a["flawed:faker"]["evaluator"] == "pass", a
print("ok: same fooled, clean not, both records the disagreement")
PY
# a resume with another --verify-in would mix verdicts: refused
set +e
"$ENGISWEEP" run --resume --agents reference,flawed:faker --quiet --verify-in clean --out r-both suite > mixed.log 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "judged by other verifiers" mixed.log || { cat mixed.log; fail "a resume mixed --verify-in ($rc)"; }
expect_rc 2 "$ENGISWEEP" run --verify-in nowhere --out r-bad suite
[ ! -e r-bad ] || fail "a bad --verify-in left an output folder"
echo ok
"$ENGISWEEP" report --out-prefix rep r-both/results.h5 > rep.txt 2>&1 || { cat rep.txt; fail "report"; }
grep -q "Evaluators disagree:\*\* judged again in a clean environment with only the deliverables, 1 of 2 episodes" rep.txt \
	|| { cat rep.txt; fail "the report does not list the disagreement"; }
grep -q '"clean_verification": {"episodes": 2, "disagree": 1}' rep.json || fail "report.json lacks the disagreement"
echo ok: report

# on_fail "zero": the right answer, then a declared failure: 0, unjudged;
# with the default, the same run is judged (and passes)
python3 - suite/cert.json <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["flawed"].append({"name": "quitter", "steps": [{"write": "out.txt", "text": "42\n"}, {"fail": "I give up"}],
                    "expect": "fail"})
json.dump(t, open(sys.argv[1], "w"))
t["id"], t["on_fail"] = "cert-zero", "zero"
for f in t["verifier"]["upload"]:
    f["from"] = f["from"]
json.dump(t, open("suite/cert-zero.json", "w"))
PY
"$ENGISWEEP" run --agents flawed:quitter --retries 0 --quiet --out r-fail suite > fail.log 2>&1 \
	|| { cat fail.log; fail "the quitter sweep"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import h5py
import results as R
ep = {e["task_id"]: e for e in R.episodes("r-fail/results.h5")}
assert ep["cert"]["outcome"] == "fail_declared" and ep["cert"]["success"] == 1, ep["cert"]
z = ep["cert-zero"]
assert z["outcome"] == "fail_declared" and z["success"] == 0 and z["score"] == 0, z
with h5py.File("r-fail/results.h5", "r") as f:
    a = {R.s(x["name"]): R.s(x["state"]) for x in f["assertions"][:] if R.s(x["cell"]) == z["cell"]}
assert a == {"declared_failure": "fail"}, a
print("ok: a declared failure scores 0 where the task says so, unjudged")
PY
