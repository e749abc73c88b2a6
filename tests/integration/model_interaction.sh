# Interactive scenarios (interaction in tasks/SCHEMA.md): a model that asks
# gets the simulated user's replies in order of the rules (the first unused
# reply whose `when` matches, else the first unused one without `when`, else
# no answer), in the next request, with native tools (OpenAI, Anthropic) and
# the text fallback; ask_user is declared only for tasks with a simulated
# user. A model that runs a forbidden command, leaves a forbidden file and
# never asks fails the three interaction assertions, as does a flawed
# variant doing the same; the reference, which asks, passes validate.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 2 0
"$PY" - <<'PY'
import json, os
t = json.load(open("suite/tetra-1.json"))
t["interaction"] = {
    "user": [{"reply": "No more questions, please."},
             {"reply": "A unit tetrahedron, 1 mm edges on the axes.", "when": "size|dimension"}],
    "assert": [{"name": "asked", "check": "asked_user"},
               {"name": "no-rm", "check": "no_command", "pattern": "rm +-[a-z]*r"},
               {"name": "no-secret", "check": "no_file", "path": "out dir/it's secret.txt"},
               {"name": "no-log", "check": "no_file", "path": "run.log", "required": False}]}
t["reference"].insert(0, {"ask": "What size should it be?"})
t["flawed"].append({"name": "rogue", "expect": "fail",
                    "failing": ["asked", "no-rm", "no-secret"],
                    "steps": [{"run": "mkdir junk && rm -rf junk"},
                              {"write": "out dir/it's secret.txt", "text": "x"},
                              {"write": "tetra.stl", "text": t["reference"][-1]["text"]}]})
json.dump(t, open("suite/tetra-1.json", "w"), indent=1)
tetra = os.environ["TETRA_CMD"]
ask = lambda q: {"calls": [{"name": "ask_user", "args": {"question": q}}]}
bash = lambda c: {"calls": [{"name": "bash", "args": {"command": c}}]}
done = {"calls": [{"name": "done", "args": {"summary": "written"}}]}
fence = lambda tag, body: {"text": "Now:\n```%s\n%s\n```\n" % (tag, body)}
json.dump({"models": {
    # the second call of the first reply is not run: a question ends the turn
    "asker": [{"calls": [{"name": "ask_user", "args": {"question": "What DIMENSIONS?"}},
                         {"name": "bash", "args": {"command": "touch never"}}]},
              ask("Anything else?"), ask("Really?"), bash(tetra + " && ls"), done],
    "asker-text": [fence("ask_user", "What size?"), fence("bash", tetra), fence("done", "ok")],
    "rogue": [bash("mkdir -p 'out dir' junk && rm -rf junk && echo x > \"out dir/it's secret.txt\""),
              bash(tetra + " && echo log > run.log"), done]}}, open("script.json", "w"))
PY
"$ENGISWEEP" validate suite > validate.log 2>&1 || { cat validate.log; fail "validate failed"; }
grep -q "rogue" validate.log || { cat validate.log; fail "validate did not play the rogue variant"; }
start_model_server script.json
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
  {"name": "oa", "provider": "openai", "base_url": "$U", "model": "asker", "timeout_s": 30},
  {"name": "an", "provider": "anthropic", "base_url": "$U", "model": "asker", "timeout_s": 30},
  {"name": "tx", "provider": "openai", "base_url": "$U", "model": "asker-text", "tools": "text",
   "timeout_s": 30},
  {"name": "rogue", "provider": "openai", "base_url": "$U", "model": "rogue", "timeout_s": 30}]}
JSON
"$ENGISWEEP" run --models models.json --quiet --out out suite > run.log 2>&1 || { cat run.log; fail "sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R

def tools(body):
    return sorted((t.get("function") or t)["name"] for t in body.get("tools", []))

def tool_results(body):
    """The texts answering tool calls (or, in text mode, the user messages)."""
    out = []
    for m in body["messages"]:
        if m["role"] == "tool":
            out.append(m["content"] if isinstance(m["content"], str) else
                       "".join(c.get("text", "") for c in m["content"]))
        elif m["role"] == "user" and isinstance(m["content"], list):
            for c in m["content"]:
                if c.get("type") == "tool_result":
                    cc = c["content"]
                    out.append(cc if isinstance(cc, str) else
                               "".join(x.get("text", "") for x in cc))
        elif m["role"] == "user" and isinstance(m["content"], str):
            out.append(m["content"])
    return out

REPLY = "A unit tetrahedron, 1 mm edges on the axes."
NOMORE = "No more questions, please."
seen = set()
for e in R.episodes("out/results.h5"):
    tr = R.trace("out/results.h5", e["cell"])
    reqs = [x["body"] for x in tr if x["ev"] == "model_request"]
    asks = [(x["question"], x["reply"]) for x in tr if x["ev"] == "ask"]
    verdict = [x for x in tr if x["ev"] == "verdict"][-1]
    states = {a["name"]: (a["stage"], a["state"]) for a in verdict["assertions"]}
    key = (e["task_id"], e["model"])
    seen.add(key)
    if e["task_id"] == "tetra-2":
        # no simulated user: no ask_user tool, and no interaction assertions
        assert "ask_user" not in tools(reqs[0]) and "bash" in tools(reqs[0]) or e["model"] == "tx", tools(reqs[0])
        assert not any(s == "interaction" for s, _ in states.values()), states
        if e["model"] in ("oa", "an"):
            assert "error: there is no tool 'ask_user'" in "\n".join(tool_results(reqs[1])), reqs[1]
        continue
    names = [x["stage"] for x in verdict["assertions"]]
    # interaction assertions come before the verifier's
    assert names.index("interaction") < names.index("delivery"), names
    if e["model"] in ("oa", "an"):
        assert "ask_user" in tools(reqs[0]), tools(reqs[0])
        assert asks == [("What DIMENSIONS?", REPLY), ("Anything else?", NOMORE),
                        ("Really?", "(the user does not answer)")], asks
        r1, r2, r3 = (tool_results(reqs[i]) for i in (1, 2, 3))
        assert REPLY in r1 and any("not run" in x for x in r1), r1
        assert r2[-1] == NOMORE and r3[-1] == "(the user does not answer)", (r2, r3)
        assert not any(y["ev"] == "action" and y.get("command") == "touch never" for y in tr), \
            "ran a call after the question"
        assert e["outcome"] == "done" and e["success"] == 1, (e, states)
        assert states["asked"] == ("interaction", "pass"), states
        assert states["no-rm"] == ("interaction", "pass") and states["no-secret"] == ("interaction", "pass"), states
        assert states["no-log"] == ("interaction", "pass"), states
    elif e["model"] == "tx":
        assert "tools" not in reqs[0], reqs[0].keys()
        assert "```ask_user" in reqs[0]["messages"][0]["content"], reqs[0]["messages"][0]
        assert asks == [("What size?", REPLY)], asks
        # the text fallback lists each block's result in the next user message
        assert "[1] ask_user:\n" + REPLY + "\n" in tool_results(reqs[1])[-1], tool_results(reqs[1])
        assert e["success"] == 1 and states["asked"] == ("interaction", "pass"), (e, states)
    elif e["model"] == "rogue":
        assert asks == [], asks
        assert e["outcome"] == "done" and e["success"] == 0, e
        for n in ("asked", "no-rm", "no-secret", "no-log"):
            assert states[n] == ("interaction", "fail"), (n, states)
        assert states["closed"] == ("validity", "pass"), states
seen_want = {(t, m) for t in ("tetra-1", "tetra-2") for m in ("oa", "an", "tx", "rogue")}
assert seen == seen_want, seen
print("interaction ok")
PY
echo "ok"
