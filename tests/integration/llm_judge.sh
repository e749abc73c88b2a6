# A task's judges (tasks/SCHEMA.md `judges`) against the test model server:
# the judge model `run --judge` names asks at temperature 0 without tools,
# reads the instruction, the rubric, the agent's final message and the named
# deliverables; pass makes the episode a success, fail fails the assertion
# with the judge's reason (control characters escaped); replies that are no
# verdict are asked again --judge-attempts times and then make the episode
# infra_error "judge gave no verdict"; an endpoint nobody listens on or an
# unset key make it "judge unavailable", counted by the report under not
# run, and --resume judges those again from the saved deliverables. The
# judge's tokens and cost land in their own columns, never the agent's; its
# key appears nowhere in the results. A judged suite without --judge is
# refused before anything runs; validate records the judges unavailable;
# reverify keeps their verdicts without asking the model again. A
# follow-up's judge judges the turn it closes.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 3 0
"$PY" - <<'PY'
import json
words = {"1": "PASS", "2": "FAIL", "3": "GARBAGE"}
for i, w in words.items():
    p = "suite/tetra-%s.json" % i
    t = json.load(open(p))
    t["reference"].insert(0, {"run": "env > env.txt"})
    t["deliverables"].append({"path": "env.txt", "required": False})
    t["reference"].append({"done": "tetra.stl holds the four faces, closed"})
    t["judges"] = [{"name": "explains", "inputs": ["tetra.stl"],
                    "rubric": "JUDGE-%s: the summary says what was written." % w}]
    json.dump(t, open(p, "w"), indent=1)
verdict = lambda v, why: json.dumps({"verdict": v, "reason": why})
json.dump({"judge": {"judge-m": [
    {"when": "JUDGE-PASS", "text": "Checked {the summary}.\n```json\n%s\n```" % verdict("pass", "The summary names the file."),
     "usage": [1200, 30]},
    {"when": "JUDGE-FAIL", "text": verdict("fail", "A cube was asked for\x1b[31m, not this."),
     "usage": [1000, 20]},
    {"when": "JUDGE-GARBAGE", "text": "It looks fine to me.", "usage": [900, 10]},
    {"when": "JUDGE-TURN", "text": verdict("pass", "The first answer names the file."),
     "usage": [500, 5]}]}},
    open("script.json", "w"))
# a conversation whose first turn has a judge of its own (followups[].judges)
import os
os.makedirs("conv", exist_ok=True)
t = json.load(open("suite/tetra-1.json"))
t.pop("judges")
t["id"] = "conv"
t["followups"] = [{"message": "Thanks. Anything else?",
                   "judges": [{"name": "first", "inputs": ["tetra.stl"],
                               "rubric": "JUDGE-TURN: the first answer names the file."}]}]
t["reference"][-1] = {"done": "turn one: tetra.stl written"}
t["reference"].append({"run": "true"})
t.pop("flawed", None)
json.dump(t, open("conv/conv.json", "w"), indent=1)
PY
CANARY=sk-judge-canary-5f3a9c1e7b
export JUDGE_KEY=$CANARY
start_model_server script.json --key "$CANARY" --record
models() { # BASE_URL: models.json with the judge at BASE_URL
	cat > models.json <<JSON
{"models": [{"name": "judge", "provider": "openai", "base_url": "$1", "model": "judge-m",
  "api_key_env": "JUDGE_KEY", "price_in_per_mtok": 2, "price_out_per_mtok": 10,
  "max_retries": 0, "timeout_s": 10}]}
JSON
}
models "http://127.0.0.1:$MODEL_PORT/v1"

# refused before anything runs: no --judge, an unknown one, bad attempts
expect_rc 2 "$ENGISWEEP" run --agents reference --models models.json --quiet --out no suite
says "$ENGISWEEP" run --agents reference --models models.json --quiet --out no suite \
	| grep -q "'suite': 3 of its 3 tasks have judges .*--judge MODEL" || fail "no --judge: not said"
says "$ENGISWEEP" run --agents reference --models models.json --judge nosuch --quiet --out no suite \
	| grep -q "\-\-judge 'nosuch': no model of that name in 'models.json'" || fail "unknown judge: not said"
expect_rc 2 "$ENGISWEEP" run --agents reference --models models.json --judge judge --judge-attempts 11 --out no suite
[ ! -e no ] || fail "a refused sweep made its output folder"
[ ! -s server.log ] || fail "a refused sweep asked the judge"

# validate calls no model: the judges are unavailable, not required
"$ENGISWEEP" validate --keep --out val suite > validate.log 2>&1 || { cat validate.log; fail "validate"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import h5py
import results as R
with h5py.File("val/results.h5", "r") as f:
    a = [x for x in f["assertions"][:] if R.s(x["name"]) == "judge:explains"]
assert a and all(R.s(x["state"]) == "unavailable" and x["required"] == 0 for x in a), a
assert "no judge model here" in R.s(a[0]["detail"]), a[0]
PY

# pass, fail, no verdict
"$ENGISWEEP" run --agents reference --models models.json --judge judge --judge-attempts 2 \
	--retries 0 --quiet --out out suite > run.log 2>&1 || { cat run.log; fail "the sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import collections, h5py, json
import results as R
ep = {e["task_id"]: e for e in R.episodes("out/results.h5")}
with h5py.File("out/results.h5", "r") as f:
    A = collections.defaultdict(dict)
    for x in f["assertions"][:]:
        A[R.s(x["cell"])][R.s(x["name"])] = (R.s(x["stage"]), R.s(x["state"]), R.s(x["detail"]), int(x["required"]))
p, f_, g = ep["tetra-1"], ep["tetra-2"], ep["tetra-3"]
assert p["outcome"] == "done" and p["success"] == 1, p
assert A[p["cell"]]["judge:explains"] == ("judge", "pass", "The summary names the file.", 1), A[p["cell"]]
assert A[p["cell"]]["closed"][1] == "pass", A[p["cell"]]
assert f_["outcome"] == "done" and f_["success"] == 0 and f_["infra"] == "", f_
st, state, detail, req = A[f_["cell"]]["judge:explains"]
assert state == "fail" and detail == "A cube was asked for\\x1b[31m, not this.", detail
assert g["outcome"] == "infra_error" and g["infra"] == "judge gave no verdict", g
assert "no verdict in 2 attempts" in g["message"], g
assert "judge:explains" not in A[g["cell"]] and "closed" not in A[g["cell"]], A[g["cell"]]
# the judge's usage in its own columns; the agent (the reference) used none
assert (p["judge_tokens_in"], p["judge_tokens_out"]) == (1200, 30), p
assert abs(p["judge_cost_usd"] - (1200 * 2 + 30 * 10) / 1e6) < 1e-12, p
assert (g["judge_tokens_in"], g["judge_tokens_out"]) == (1800, 20), g
for e in ep.values():
    assert e["tokens_in"] == 0 and e["tokens_out"] == 0 and e["cost_usd"] == 0, e
# the requests: each judge once, the garbage one twice; what the judge read
log = [json.loads(l) for l in open("server.log")]
assert all(x.get("judge") and not x.get("bad") and x.get("status") is None for x in log), log
n = collections.Counter(x["when"] for x in log)
assert n == {0: 1, 1: 1, 2: 2}, n
said = "\n".join(m["content"] for m in log[0]["body"]["messages"] if isinstance(m["content"], str))
assert log[0]["body"]["temperature"] == 0 and "tools" not in log[0]["body"], log[0]["body"]
assert "Write a closed unit tetrahedron" in said and "tetra.stl holds the four faces, closed" in said, said
assert "=== FILE tetra.stl ===" in said and "endsolid t" in said, said
# the trace has each attempt
tr = [x for x in R.trace("out/results.h5", g["cell"]) if x["ev"] == "judge"]
assert [x["attempt"] for x in tr] == [1, 2] and all("error" in x for x in tr), tr
print("ok: pass, fail and no verdict judged")
PY
if grep -rqaF "$CANARY" out; then fail "the judge's key shows in the results"; fi
# nor its variable in the episodes' environment
[ "$(ls out/artifacts/*/env.txt | wc -l)" -eq 3 ] || fail "the environments were not saved"
if grep -qa "JUDGE_KEY" out/artifacts/*/env.txt; then fail "the judge's key variable reached an episode"; fi
# reverify keeps the judges' verdicts (no model is asked again)
: > server.log
"$ENGISWEEP" reverify out/results.h5 --out rv.h5 > rv.txt 2>&1 || { cat rv.txt; fail "reverify"; }
grep -q "0 verdicts changed" rv.txt || { cat rv.txt; fail "reverify changed a judged verdict"; }
[ ! -s server.log ] || fail "reverify asked the judge"
PYTHONPATH="$HERE" "$PY" - <<'PY'
import h5py
import results as R
def judged(path):
    with h5py.File(path, "r") as f:
        return sorted((R.s(x["cell"]), R.s(x["state"]), R.s(x["detail"])) for x in f["assertions"][:]
                      if R.s(x["name"]) == "judge:explains")
assert judged("rv.h5") == judged("out/results.h5") and len(judged("rv.h5")) == 2, judged("rv.h5")
PY
"$ENGISWEEP" report out/results.h5 > rep.txt 2>&1 || { cat rep.txt; fail "report"; }
grep -q -- "- reference: 1 episode not run: judge gave no verdict" rep.txt \
	|| { cat rep.txt; fail "the report does not count the no-verdict episode as not run"; }
# 1200 + 1000 + 2 x 900 in, 30 + 20 + 2 x 10 out, at $2 and $10 a million
grep -qF "**Judges:** the judge model of the tasks' judges used 4000 tokens in and 70 out, \$0.0087" rep.txt \
	|| { cat rep.txt; fail "the report does not state the judge's cost"; }

# an endpoint nobody listens on: infrastructure, never a verdict; --resume
# judges the episodes again once the judge is back
DEAD_PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
models "http://127.0.0.1:$DEAD_PORT/v1"
"$ENGISWEEP" run --agents reference --models models.json --judge judge --retries 0 --quiet \
	--out down suite > down.log 2>&1 || { cat down.log; fail "the sweep with the judge down failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
ep = R.episodes("down/results.h5")
assert len(ep) == 3 and all(e["outcome"] == "infra_error" and e["infra"] == "judge unavailable"
                            and e["success"] == 0 for e in ep), ep
assert all("judge 'explains'" in e["message"] for e in ep), ep
PY
"$ENGISWEEP" report down/results.h5 > down-rep.txt 2>&1 || { cat down-rep.txt; fail "report"; }
grep -q -- "- reference: 3 episodes not run: judge unavailable" down-rep.txt \
	|| { cat down-rep.txt; fail "the report does not count the unreachable judge as not run"; }
: > server.log
models "http://127.0.0.1:$MODEL_PORT/v1"
"$ENGISWEEP" run --resume --agents reference --models models.json --judge judge --judge-attempts 2 \
	--retries 0 --quiet --out down suite > resume.log 2>&1 || { cat resume.log; fail "resume"; }
grep -q "(task 'tetra-3'): judge gave no verdict again: judge 'explains': no verdict in 2 attempts" resume.log \
	|| { cat resume.log; fail "resume does not say the judge failed again"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import h5py
import results as R
ep = {e["task_id"]: e for e in R.episodes("down/results.h5")}
assert len(ep) == 3, ep
assert ep["tetra-1"]["success"] == 1 and ep["tetra-1"]["infra"] == "", ep["tetra-1"]
assert ep["tetra-2"]["success"] == 0 and ep["tetra-2"]["outcome"] == "done", ep["tetra-2"]
assert ep["tetra-3"]["infra"] == "judge gave no verdict", ep["tetra-3"]
with h5py.File("down/results.h5", "r") as f:
    names = [R.s(x["name"]) for x in f["assertions"][:] if R.s(x["cell"]) == ep["tetra-1"]["cell"]]
assert sorted(names) == sorted(set(names)) and "judge:explains" in names and "closed" in names, names
# the judge's usage of both runs: nothing from the one that could not reach it
assert (ep["tetra-1"]["judge_tokens_in"], ep["tetra-3"]["judge_tokens_in"]) == (1200, 1800), ep
PY
# the journal carries the judge columns: a resume rebuilds the file from it
# (and asks again where there was no verdict)
cp down/results.h5 before.h5
"$ENGISWEEP" run --resume --agents reference --models models.json --judge judge --judge-attempts 2 \
	--retries 0 --quiet --out down suite > resume2.log 2>&1 || { cat resume2.log; fail "second resume"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
cols = ("task_id", "success", "judge_tokens_in", "judge_tokens_out", "judge_cost_usd")
a = sorted(tuple(e[c] for c in cols) for e in R.episodes("before.h5"))
b = sorted(tuple(e[c] for c in cols) for e in R.episodes("down/results.h5"))
# tetra-3 had no verdict: judged again, its usage added to what the journal had
assert a[:2] == b[:2] and a[0][2] == 1200, (a, b)
assert (a[2][2], b[2][2], b[2][3]) == (1800, 3600, 40), (a, b)
PY
if grep -rqaF "$CANARY" down; then fail "the judge's key shows in the resumed results"; fi

# a follow-up's judge judges the turn it closes, with what the agent said then
: > server.log
"$ENGISWEEP" run --agents reference --models models.json --judge judge --retries 0 --quiet \
	--out conv-out conv > conv.log 2>&1 || { cat conv.log; fail "the conversation sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import h5py, json
import results as R
(e,) = R.episodes("conv-out/results.h5")
with h5py.File("conv-out/results.h5", "r") as f:
    A = {R.s(x["name"]): (R.s(x["stage"]), R.s(x["state"])) for x in f["assertions"][:]}
assert e["success"] == 1 and A["turn1:judge:first"] == ("judge", "pass"), (e, A)
assert A["turn1:reached"][1] == "pass" and "judge:first" not in A, A
assert (e["judge_tokens_in"], e["judge_tokens_out"]) == (500, 5), e
log = [json.loads(l) for l in open("server.log")]
assert len(log) == 1, log
said = "\n".join(m["content"] for m in log[0]["body"]["messages"] if isinstance(m["content"], str))
assert "turn one: tetra.stl written" in said and "script finished" not in said, said
PY

# the key unset: unavailable, naming the variable, and no request sent
: > server.log
env -u JUDGE_KEY "$ENGISWEEP" run --agents reference --models models.json --judge judge --retries 0 \
	--quiet --out nokey suite > nokey.log 2>&1 || { cat nokey.log; fail "the sweep without the key failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
ep = R.episodes("nokey/results.h5")
assert all(e["infra"] == "judge unavailable" and "'JUDGE_KEY'" in e["message"] for e in ep), ep
PY
[ ! -s server.log ] || fail "the judge was asked without its key"
echo "llm_judge: ok"
