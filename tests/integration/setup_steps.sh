# A task's setup steps (tasks/SCHEMA.md `setup`): run in the working folder
# after the inputs and before the agent, so the agent finds what they made;
# a checked step that fails makes the episode the infrastructure's (`setup
# failed`, never scored, the step and its output named), an unchecked one is
# ignored; a task with a `launch` step is refused before the sweep on a
# backend that cannot leave a command running (the qemu test runs them).
. "$(dirname "$0")/lib.sh"
mkdir -p suite/files suite-launch
printf 'seed\n' > suite/files/in.txt
cat > suite/made.json <<'JSON'
{
  "id": "made", "domain": "CAE", "software": ["sh"], "type": "single", "interface": "cli",
  "instruction": "Copy made.txt to out.txt.",
  "inputs": [{"host": "files/in.txt", "env": "in.txt"}],
  "setup": [{"run": "tr a-z A-Z < in.txt > made.txt"},
            {"run": "echo harmless; exit 3", "check": false},
            {"run": "test -s made.txt", "timeout_s": 10}],
  "deliverables": [{"path": "out.txt"}],
  "verifier": {"kind": "command", "file": "out.txt", "run": "cat out.txt",
               "criteria": [{"name": "copied", "check": "output_equals", "text": "SEED\n"}]},
  "reference": [{"run": "cp made.txt out.txt"}]
}
JSON
cat > suite/broken.json <<'JSON'
{
  "id": "broken", "domain": "CAE", "software": ["sh"], "type": "single", "interface": "cli",
  "instruction": "Write out.txt.",
  "setup": [{"run": "echo no such case; exit 4"}, {"run": "touch never.txt"}],
  "deliverables": [{"path": "out.txt"}],
  "verifier": {"kind": "command", "file": "out.txt", "run": "cat out.txt",
               "criteria": [{"name": "written", "check": "output_contains", "text": "x"}]},
  "reference": [{"write": "out.txt", "text": "x\n"}]
}
JSON
"$ENGISWEEP" run --agents reference,noop --retries 1 --retry-wait 0.01 --quiet --out r suite > run.log 2>&1 \
	|| { cat run.log; fail "the sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R
ep = {(e["task_id"], e["model"]): e for e in R.episodes("r/results.h5")}
made, noop = ep[("made", "reference")], ep[("made", "noop")]
assert made["outcome"] == "done" and made["success"] == 1, made
assert noop["success"] == 0, noop
for m in ("reference", "noop"):
    b = ep[("broken", m)]
    assert b["outcome"] == "infra_error" and b["infra"] == "setup failed", b
    assert b["message"] == "setup step 0 (run) exited 4: no such case", b["message"]
    assert b["attempts"] == 2, b
    # the agent never ran, and nothing was judged
    assert b["turns"] == 0 and b["success"] != 1, b
ev = [e for e in R.trace("r/results.h5", made["cell"]) if e.get("ev") == "setup"]
assert [(e["step"], e["kind"], e["exit"]) for e in ev] == [(0, "run", 0), (1, "run", 3), (2, "run", 0)], ev
assert ev[1]["output"] == "harmless\n", ev[1]
print("ok: setup ran before the agent; a failed checked step is setup failed, not scored")
PY
"$ENGISWEEP" report --out-prefix rep r/results.h5 > rep.txt 2>&1 || { cat rep.txt; fail "report"; }
grep -q "setup failed" rep.txt || { cat rep.txt; fail "the report does not say why broken was not run"; }

python3 - suite/made.json suite-launch/launch.json <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["id"] = "launch"
t["inputs"] = []
t["setup"] = [{"launch": "sleep 100"}]
json.dump(t, open(sys.argv[2], "w"))
PY
expect_rc 2 "$ENGISWEEP" run --agents reference --quiet --out r-launch suite-launch > launch.log 2>&1
grep -q "cannot leave a command running in the background (the task's setup step 'launch')" launch.log \
	|| { cat launch.log; fail "a launch step on the local backend was not refused"; }
[ ! -e r-launch ] || fail "a refused sweep left an output folder"
echo ok
