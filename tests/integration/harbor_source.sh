# The harbor task source on Harbor task folders of the tests' own
# (tests/harbor): inspect detects and loads them with an images map and a
# deliverables map, and refuses by name what it cannot run (no deliverables
# map, a variable taken from the host, GPUs, an unmapped environment, a
# deliverables map for a native suite); the Dockerfile's WORKDIR is the
# working folder and its copies into it the inputs, its copies elsewhere
# not; validate passes; the reference (solution/solve.sh) scores 1 on both tasks (reward.txt,
# and reward.json with text values beside the numbers), noop 0; a model
# agent through the test server that plants a reward file of its own and a
# test script where the tests go, and answers one task nearly right, gets
# only the reward test.sh gives (0 and 8/9), recorded as the metric
# evaluator_score beside reward.json's other numbers; export --format harbor
# writes the job layout (the same files twice), its rewards the results
# file's, its trajectories valid ATIF, its artifacts with their hashes at
# the guest paths; a test that writes no reward is an infrastructure failure,
# which export refuses unless --allow-errors (an errored trial, no reward).
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
H="$ENGI_SRC/tests/harbor"
"$ENGISWEEP" inspect | grep -q "local sandbox: available" || fail "no local sandbox here"
"$ENGISWEEP" inspect "$H/tasks" --images "$H/images.json" --deliverables "$H/deliverables.json" \
	> inspect.log 2>&1 || { cat inspect.log; fail "inspect refused tasks"; }
grep -q "source: harbor (detected)" inspect.log || { cat inspect.log; fail "not detected as harbor"; }
grep -q "tasks: 2 loaded, 0 refused" inspect.log || { cat inspect.log; fail "not 2 tasks"; }

# validate: each reference succeeds, noop fails
"$ENGISWEEP" validate "$H/tasks" --images "$H/images.json" --deliverables "$H/deliverables.json" \
	> validate.log 2>&1 || { cat validate.log; fail "validate"; }
grep -q "2 tasks, 4 runs: all verdicts as expected" validate.log || { cat validate.log; fail "validate"; }

# refusals, each by its reason
cp -r "$H/tasks" bad
rc=0
"$ENGISWEEP" inspect bad --images "$H/images.json" > nodeliv.log 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat nodeliv.log; fail "no deliverables map: exit $rc, expected 1"; }
grep -q "no deliverables" nodeliv.log && grep -q -- "--deliverables FILE" nodeliv.log \
	|| { cat nodeliv.log; fail "no deliverables map: the refusal does not say what to do"; }
rc=0
"$ENGISWEEP" inspect bad --deliverables "$H/deliverables.json" > nomap.log 2>&1 || rc=$?
grep -q "environment not mapped" nomap.log && grep -q "debian:12-slim" nomap.log \
	|| { cat nomap.log; fail "an unmapped environment is not refused by name"; }
printf '[verifier.env]\nTOKEN = "${HOME}"\n' >> bad/sum-numbers/task.toml
sed -i 's/^cpus = 1$/cpus = 1\ngpus = 1/' bad/word-count/task.toml
rc=0
"$ENGISWEEP" inspect bad --images "$H/images.json" --deliverables "$H/deliverables.json" \
	> bad.log 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat bad.log; fail "bad tasks: exit $rc, expected 1"; }
grep -q "host variable" bad.log && grep -q "'TOKEN' takes its value from the host" bad.log \
	|| { cat bad.log; fail "a host variable is not refused"; }
grep -q "gpus = 1: engisweep's environments have no GPUs" bad.log \
	|| { cat bad.log; fail "GPUs are not refused"; }
rc=0
"$ENGISWEEP" inspect "$ENGI_SRC/tasks/demo" --deliverables "$H/deliverables.json" > native.log 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q "deliverables map is for harbor tasks" native.log \
	|| { cat native.log; fail "a deliverables map for a native suite: exit $rc"; }

# a model agent that cheats, and gets one answer nearly right
"$PY" - <<'PY'
import json
cheat = ("mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt && "
         "printf '#!/bin/sh\\necho 1 > /logs/verifier/reward.txt\\n' > /tests/test.sh && "
         "chmod +x /tests/test.sh && echo 5 > answer.txt")
replies = [
    {"when": "numbers.txt", "calls": [{"name": "bash", "args": {"command": cheat}}],
     "usage": [100, 10]},
    {"when": "poem.txt", "calls": [{"name": "bash", "args": {"command": "echo 8 > answer.txt"}}],
     "usage": [100, 10]},
    {"calls": [{"name": "done", "args": {"summary": "done"}}], "usage": [100, 10]},
]
json.dump({"models": {"m": replies}}, open("script.json", "w"))
PY
start_model_server script.json
cat > models.json <<JSON
{"models": [{"name": "cheat", "provider": "openai", "base_url": "http://127.0.0.1:$MODEL_PORT/v1",
  "model": "m", "timeout_s": 30}]}
JSON
"$ENGISWEEP" run "$H/tasks" --images "$H/images.json" --deliverables "$H/deliverables.json" \
	--agents reference,noop --models models.json --quiet --out out > run.log 2>&1 \
	|| { cat run.log; fail "sweep failed"; }
stop_model_server
"$PY" - <<'PY' || fail "results"
import h5py, sys
f = h5py.File("out/results.h5", "r")
ep = f["episodes"][:]
got = {}
for r in ep:
    k = (r["task_id"].decode(), r["model"].decode())
    got[k] = (r["outcome"].decode(), float(r["score"]), r["message"].decode())
want = {("sum-numbers", "reference"): 1.0, ("word-count", "reference"): 1.0,
        ("sum-numbers", "noop"): 0.0, ("word-count", "noop"): 0.0,
        ("sum-numbers", "cheat"): 0.0, ("word-count", "cheat"): 1 - 1 / 9}
bad = []
for k, s in want.items():
    o = got.get(k)
    if not o or o[0] in ("infra_error", "env_crash") or abs(o[1] - s) > 1e-6:
        bad.append((k, o, s))
if bad:
    sys.exit("scores: %r" % bad)
m = f["metrics"][:]
def metric(task, model, name):
    cells = {r["cell"] for r in ep if r["task_id"].decode() == task and r["model"].decode() == model}
    return [float(r["value"]) for r in m if r["cell"] in cells and r["name"].decode() == name]
ev = metric("word-count", "cheat", "evaluator_score")
assert len(ev) == 1 and abs(ev[0] - 8 / 9) < 1e-6, ev
assert metric("word-count", "reference", "reward:exact") == [1.0]
assert metric("sum-numbers", "cheat", "evaluator_score") == [0.0]
a = f["assertions"][:]
names = {r["name"].decode() for r in a}
assert "reward" in names and "delivered:answer.txt" in names, names
PY
# the working folder and the inputs: Dockerfile WORKDIR /srv then task
cell=$("$PY" -c "
import h5py
for r in h5py.File('out/results.h5')['episodes'][:]:
    if r['task_id'] == b'word-count' and r['model'] == b'reference': print(r['cell'].decode())")
[ -s "out/artifacts/$cell/answer.txt" ] || fail "word-count's answer was not delivered"
# export --format harbor: the job layout, its numbers the results file's
"$ENGISWEEP" export out/results.h5 --format harbor --out jobs --job-name j1 > export.log 2>&1 \
	|| { cat export.log; fail "export"; }
cp -r jobs jobs-first
"$ENGISWEEP" export out/results.h5 --format harbor --out jobs --job-name j1 > /dev/null 2>&1 \
	|| fail "export again"
diff -r jobs jobs-first > /dev/null || fail "a second export wrote other files"
"$PY" - <<'PY' || fail "the Harbor export"
import glob, hashlib, h5py, json, os, sys
f = h5py.File("out/results.h5", "r")
score = {r["cell"].decode(): float(r["score"]) for r in f["episodes"][:]}
job = json.load(open("jobs/j1/result.json"))
assert job["n_total_trials"] == 6 and job["stats"]["n_errored_trials"] == 0, job
ev = job["stats"]["evals"]
means = {k.split("__")[0]: v["metrics"][0]["mean"] for k, v in ev.items()}
assert means["reference"] == 1.0 and means["noop"] == 0.0, means
assert abs(means["cheat"] - (0 + 8 / 9) / 2) < 1e-6, means
trials = sorted(glob.glob("jobs/j1/*/result.json"))
assert len(trials) == 6, trials
for path in trials:
    d = os.path.dirname(path)
    r = json.load(open(path))
    for k in ("id", "task_name", "trial_name", "trial_uri", "task_id", "source", "config",
              "agent_info", "agent_result", "verifier_result", "exception_info",
              "started_at", "finished_at"):
        assert k in r, (path, k)
    cell = r["engisweep"]["cell"]
    assert r["trial_name"] == os.path.basename(d) and r["trial_name"].endswith("__" + cell[:7])
    rew = json.load(open(d + "/verifier/reward.json"))
    assert rew["reward"] == r["verifier_result"]["rewards"]["reward"]
    assert abs(rew["reward"] - score[cell]) < 1e-12, (rew, score[cell])
    t = json.load(open(d + "/agent/trajectory.json"))
    assert t["schema_version"] == "ATIF-v1.4" and t["agent"]["name"] == r["agent_info"]["name"]
    steps = t["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    assert steps[0]["source"] == "user" and not set(steps[0]) - {"step_id", "timestamp", "source", "message"}
    for s in steps[1:]:
        assert s["source"] == "agent" and isinstance(s["message"], str)
        ids = {c["tool_call_id"] for c in s.get("tool_calls", [])}
        for o in s.get("observation", {}).get("results", []):
            assert o.get("source_call_id") in ids, (path, s)
    if r["agent_info"]["name"] == "cheat":
        assert "numbers.txt" in steps[0]["message"] or "poem.txt" in steps[0]["message"]
        cmds = [c["arguments"].get("command", "") for s in steps[1:] for c in s.get("tool_calls", [])]
        assert any("reward.txt" in c for c in cmds), cmds
    for m in json.load(open(d + "/artifacts/manifest.json")):
        if m["status"] != "ok":
            assert r["agent_info"]["name"] == "noop" and not os.path.exists(d + "/" + m["destination"]), m
            continue
        data = open(d + "/" + m["destination"], "rb").read()
        assert hashlib.sha256(data).hexdigest() == m["sha256"], m
        want = "/srv/task/answer.txt" if r["task_name"] == "word-count" else "/app/answer.txt"
        assert m["source"] == want and m["destination"] == "artifacts" + want, m
    assert os.path.getsize(d + "/agent/engisweep.txt") > 0
PY

# a test that writes no reward: the verifier's failure, never a score; the
# export refuses it unless asked, then an errored trial without a reward
mkdir noreward
cp -r "$H/tasks/sum-numbers" noreward/
printf '#!/bin/sh
echo forgot the reward
' > noreward/sum-numbers/tests/test.sh
"$ENGISWEEP" run noreward --images "$H/images.json" --deliverables "$H/deliverables.json" \
	--agents reference --quiet --out out-nr > run-nr.log 2>&1 || true
"$PY" - <<'PY' || fail "no reward file"
import h5py
e = h5py.File("out-nr/results.h5", "r")["episodes"][:]
assert len(e) == 1 and e[0]["outcome"] == b"infra_error", e
assert b"wrote no reward file" in e[0]["message"], e[0]["message"]
PY
expect_rc 1 "$ENGISWEEP" export out-nr/results.h5 --format harbor --out jobs-nr
"$ENGISWEEP" export out-nr/results.h5 --format harbor --out jobs-nr --allow-errors > /dev/null \
	|| fail "export --allow-errors"
"$PY" - <<'PY' || fail "an errored trial"
import glob, json, os
[p] = glob.glob("jobs-nr/*/*/result.json")
r = json.load(open(p))
assert r["verifier_result"] is None and r["exception_info"]["exception_type"] == "EngisweepInfrastructureError"
assert not os.path.exists(os.path.dirname(p) + "/verifier/reward.json")
job = json.load(open(glob.glob("jobs-nr/*/result.json")[0]))
assert job["stats"]["n_errored_trials"] == 1
PY
echo ok
