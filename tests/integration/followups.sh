# Scripted follow-ups (tasks/SCHEMA.md `followups`): when the agent ends a
# turn of the conversation with done, the next message arrives and the
# episode goes on; the deliverables as they were then are judged by that
# follow-up's verifier as turnK:NAME, beside turnK:reached. A reference that
# answers each message passes validate; a variant that does the update at
# once fails the first turn's check, one that gives up fails turnK:reached.
# A model (OpenAI and Anthropic wire formats, and the text fallback) gets
# the follow-up as a user message after its done call is answered. Bad
# follow-ups are refused with file and pointer; reverify judges the turns
# again.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
mkdir -p suite bad
cat > suite/update.json <<'JSON'
{
  "id": "update", "domain": "CAE", "software": ["sh"], "type": "single", "interface": "cli",
  "instruction": "Write v=1 into out.txt and a model of two nodes into model.json.",
  "deliverables": [{"path": "out.txt"}, {"path": "model.json", "required": false},
                   {"path": "analysis.json", "required": false},
                   {"path": "report.md", "required": false}],
  "followups": [
    {"message": "Thanks. Now analyse it and change out.txt to v=2.",
     "verifier": {"kind": "structureclaw", "file": "model.json", "criteria": [
       {"name": "first", "check": "has_model", "min_nodes": 2, "min_elements": 1},
       {"name": "quiet", "check": "no_analysis", "file": "analysis.json"}]}},
    {"message": "And write w=3 into report.md."}
  ],
  "verifier": {"kind": "structureclaw", "file": "model.json", "criteria": [
    {"name": "analysed", "check": "has_analysis", "file": "analysis.json"},
    {"name": "last", "check": "has_report", "file": "report.md", "min_chars": 3}]},
  "reference": [{"write": "model.json", "text": "{\"nodes\": [{}, {}], \"elements\": [{}]}"},
                {"write": "out.txt", "text": "v=1\n"}, {"done": "written"},
                {"write": "analysis.json", "text": "{\"displacements\": [1]}"},
                {"write": "out.txt", "text": "v=2\n"}, {"done": "changed"},
                {"run": "echo w=3 > report.md"}],
  "flawed": [
    {"name": "at-once", "expect": "fail", "failing": ["turn1:quiet"],
     "steps": [{"write": "model.json", "text": "{\"nodes\": [{}, {}], \"elements\": [{}]}"},
               {"write": "analysis.json", "text": "{\"displacements\": [1]}"},
               {"write": "report.md", "text": "w=3\n"}]},
    {"name": "gives-up", "expect": "fail", "failing": ["turn2:reached", "last"],
     "steps": [{"write": "out.txt", "text": "v=1\n"}, {"done": "written"},
               {"fail": "cannot change it"}]}
  ]
}
JSON
"$ENGISWEEP" validate suite > validate.log 2>&1 || { cat validate.log; fail "validate failed"; }
grep -q "gives-up" validate.log || { cat validate.log; fail "validate did not play gives-up"; }

"$PY" - <<'PY'
import json
bash = lambda c: {"calls": [{"name": "bash", "args": {"command": c}}]}
done = lambda s: {"calls": [{"name": "done", "args": {"summary": s}}]}
fence = lambda tag, body: {"text": "Now:\n```%s\n%s\n```\n" % (tag, body)}
T1 = """echo '{"nodes": [{}, {}], "elements": [{}]}' > model.json && echo v=1 > out.txt"""
T2 = """echo '{"displacements": [1]}' > analysis.json && echo v=2 > out.txt"""
T3 = "echo w=3 > report.md"
json.dump({"models": {
    "talker": [bash(T1), done("one"), bash(T2), done("two"), bash(T3), done("three")],
    "talker-text": [fence("bash", T1), fence("done", "one"), fence("bash", T2),
                    fence("done", "two"), fence("bash", T3), fence("done", "three")],
    # never ends its first turn with done: the follow-ups never come
    "stuck": [bash(T1)] * 8}}, open("script.json", "w"))
PY
start_model_server script.json --record
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
  {"name": "oa", "provider": "openai", "base_url": "$U", "model": "talker", "timeout_s": 30},
  {"name": "an", "provider": "anthropic", "base_url": "$U", "model": "talker", "timeout_s": 30},
  {"name": "tx", "provider": "openai", "base_url": "$U", "model": "talker-text", "tools": "text",
   "timeout_s": 30},
  {"name": "stuck", "provider": "openai", "base_url": "$U", "model": "stuck", "timeout_s": 30}]}
JSON
"$PY" - <<'PY'
import json
t = json.load(open("suite/update.json"))
t["limits"] = {"turns": 6}
t["interaction"] = {"assert": [{"name": "no-rm", "check": "no_command", "pattern": "rm "}]}
json.dump(t, open("suite/update.json", "w"))
PY
"$ENGISWEEP" run --models models.json --quiet --out out suite > run.log 2>&1 || { cat run.log; fail "sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json, os
import results as R
FOLLOW1, FOLLOW2 = "Thanks. Now analyse it and change out.txt to v=2.", "And write w=3 into report.md."
def texts(body):
    out = []
    for m in body["messages"]:
        c = m.get("content")
        if isinstance(c, str):
            out.append((m["role"], c))
        elif isinstance(c, list):
            for x in c:
                if x.get("type") == "text":
                    out.append((m["role"], x["text"]))
    return out
seen = set()
for e in R.episodes("out/results.h5"):
    seen.add(e["model"])
    tr = R.trace("out/results.h5", e["cell"])
    verdict = [x for x in tr if x["ev"] == "verdict"][-1]
    st = {a["name"]: a["state"] for a in verdict["assertions"]}
    fu = [x for x in tr if x["ev"] == "followup"]
    reqs = [x["body"] for x in tr if x["ev"] == "model_request"]
    if e["model"] == "stuck":
        assert fu == [] and e["outcome"] == "turn_limit", (fu, e)
        assert st["turn1:reached"] == "fail" and st["turn2:reached"] == "fail", st
        assert "turn1:first" not in st and e["success"] == 0, st
        continue
    assert e["outcome"] == "done" and e["success"] == 1, (e, st)
    assert [(x["closes"], x["message"]) for x in fu] == [(1, FOLLOW1), (2, FOLLOW2)], fu
    assert st["turn1:reached"] == st["turn2:reached"] == "pass", st
    assert st["turn1:first"] == st["turn1:quiet"] == st["last"] == st["analysed"] == "pass", st
    assert not any(k.startswith("turn2:") and k != "turn2:reached" for k in st), st
    # the follow-up is a user message of the request after the done
    users = lambda b: [t for r, t in texts(b) if r == "user"]
    i = 2  # the third request answers the done of the second reply
    assert any(FOLLOW1 in u for u in users(reqs[i])), users(reqs[i])
    assert not any(FOLLOW1 in u for u in users(reqs[i - 1])), users(reqs[i - 1])
    assert any(FOLLOW2 in u for u in users(reqs[4])), users(reqs[4])
    # the turn's deliverables are kept apart from the final ones
    cell = e["cell"]
    assert open("out/artifacts/%s/@turn1/out.txt" % cell).read() == "v=1\n"
    assert not os.path.exists("out/artifacts/%s/@turn1/analysis.json" % cell)
    assert open("out/artifacts/%s/@turn2/out.txt" % cell).read() == "v=2\n"
    assert open("out/artifacts/%s/out.txt" % cell).read() == "v=2\n"
    assert open("out/artifacts/%s/report.md" % cell).read() == "w=3\n"
    assert not os.path.exists("out/artifacts/%s/@turn2/report.md" % cell)
assert seen == {"oa", "an", "tx", "stuck"}, seen
print("followups ok")
PY
# reverify judges the turns again from their folders and keeps the run's own
# interaction assertions: nothing changes
"$ENGISWEEP" reverify out/results.h5 --out re.h5 > re.log 2>&1 || { cat re.log; fail "reverify"; }
grep -q "0 verdicts changed" re.log || { cat re.log; fail "reverify changed verdicts"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import h5py
import results as R
with h5py.File("re.h5", "r") as f:
    rows = [(R.s(r["cell"]), R.s(r["name"]), R.s(r["state"])) for r in f["assertions"][:]]
for e in R.episodes("re.h5"):
    st = {n: v for c, n, v in rows if c == e["cell"]}
    if e["model"] != "stuck":
        assert e["success"] == 1 and st["turn1:quiet"] == "pass" and st["no-rm"] == "pass", (e, st)
    else:
        assert st["turn1:reached"] == "fail", st
PY

# refusals, each with its pointer
refuse() { # FILE EXPECTED-TEXT
	expect_rc 1 "$ENGISWEEP" inspect "$1" > refuse.log 2>&1
	grep -qF "$2" refuse.log || { cat refuse.log; fail "$1: expected '$2'"; }
}
mk() { # NAME PYTHON-EDIT
	"$PY" - "$1" "$2" <<'PY'
import json, sys
t = json.load(open("suite/update.json"))
t.pop("flawed")
exec(sys.argv[2])
json.dump(t, open("bad/%s.json" % sys.argv[1], "w"))
PY
}
mk empty 't["followups"] = []'
mk nomsg 't["followups"][1] = {}'
mk toolong 't["followups"][1]["message"] = "x" * 9000'
mk badfile 't["followups"][0]["verifier"]["file"] = "other.txt"'
mk envkind 't["followups"][1]["verifier"] = {"kind": "command", "file": "out.txt", "run": "true", "criteria": [{"name": "x", "check": "output_equals", "text": "v"}]}'
mk scored 't["followups"][0]["verifier"]["objective"] = {"metric": "m"}'
mk at 't["deliverables"].append({"path": "@turn1/x"})'
mk dones 't["reference"] = [{"done": "a"}, {"done": "b"}, {"done": "c"}, {"run": "true"}]'
refuse bad/empty.json "/followups: expected 1 to 8 follow-ups, found 0"
refuse bad/nomsg.json "/followups/1/message: missing required field"
refuse bad/toolong.json "/followups/1/message: longer than 8192 bytes"
refuse bad/badfile.json "/followups/0/verifier/file: 'other.txt' is not one of the deliverables"
refuse bad/envkind.json "/followups/1/verifier/kind: 'command' judges in an environment"
refuse bad/scored.json "/followups/0/verifier: a turn is judged pass or fail"
refuse bad/at.json "/deliverables/4: '@turn1/x': a task with follow-ups keeps"
refuse bad/dones.json "/reference/2: more done steps before the last than the task's 2 follow-ups"
echo ok
