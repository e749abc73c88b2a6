# Provider settings reach the wire as the APIs define them, checked by the
# test model server, which refuses what the real APIs refuse: Anthropic
# extended thinking from reasoning_effort or thinking_budget_tokens
# ({type: enabled, budget_tokens}, max_tokens above the budget, no
# temperature), with the reply's signed thinking blocks sent back in the
# assistant history; OpenAI max_completion_tokens for reasoning model names
# and reasoning_effort, max_tokens otherwise, token_field over both. A reply
# slower than the task's wall limit is cut at the limit: the episode ends
# as time_limit within a second of it. All alone.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 1 0
bash "$HERE/make_suite.sh" slow 1 0
"$PY" - <<'PY'
import json
t = json.load(open("slow/tetra-1.json"))
t["limits"] = {"wall_s": 3}
json.dump(t, open("slow/tetra-1.json", "w"))
PY

"$PY" - <<'PY'
import json, os
cmd = os.environ["TETRA_CMD"]
solve = [{"calls": [{"name": "bash", "args": {"command": cmd}}]},
         {"calls": [{"name": "done", "args": {"summary": "ok"}}]}]
slow = [{"fault": "slow", "sleep_s": 8, "calls": [{"name": "done", "args": {"summary": "late"}}]}]
json.dump({"models": {"claude-x": solve, "o3-mini": solve, "gpt-4o": solve, "sleepy": slow}},
          open("script.json", "w"))
PY
start_model_server script.json --record
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
  {"name": "an-effort", "provider": "anthropic", "base_url": "$U", "model": "claude-x",
   "reasoning_effort": "medium", "temperature": 0.5},
  {"name": "an-budget", "provider": "anthropic", "base_url": "$U", "model": "claude-x",
   "thinking_budget_tokens": 2000, "max_tokens": 3000},
  {"name": "an-plain", "provider": "anthropic", "base_url": "$U", "model": "claude-x", "temperature": 0.5},
  {"name": "oa-reasoning", "provider": "openai", "base_url": "$U", "model": "o3-mini", "max_tokens": 500},
  {"name": "oa-effort", "provider": "openai", "base_url": "$U", "model": "gpt-4o", "max_tokens": 600,
   "reasoning_effort": "low"},
  {"name": "oa-plain", "provider": "openai", "base_url": "$U", "model": "gpt-4o", "max_tokens": 700},
  {"name": "oa-field", "provider": "openai", "base_url": "$U", "model": "gpt-4o", "max_tokens": 800,
   "token_field": "max_completion_tokens"}
]}
JSON
"$ENGISWEEP" run --models models.json --quiet --out out suite > run.log 2>&1 \
	|| { cat run.log; fail "sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R
ep = {e["model"]: e for e in R.episodes("out/results.h5")}
assert len(ep) == 7, sorted(ep)
for e in ep.values():
    assert e["outcome"] == "done" and e["success"] == 1 and e["turns"] == 2, e
log = [json.loads(l) for l in open("server.log")]
assert not [l for l in log if "bad" in l], [l["bad"] for l in log if "bad" in l]
def bodies(name):
    tr = R.trace("out/results.h5", ep[name]["cell"])
    return [t["body"] for t in tr if t["ev"] == "model_request"]
def thinking(name, budget, max_tokens):
    b = bodies(name)
    for x in b:
        assert x["thinking"] == {"type": "enabled", "budget_tokens": budget}, x.get("thinking")
        assert x["max_tokens"] == max_tokens and "temperature" not in x, x
    # the reply's thinking block, signature and all, starts the assistant turn sent back
    a = [m for m in b[1]["messages"] if m["role"] == "assistant"][0]["content"]
    assert a[0]["type"] == "thinking" and a[0]["signature"].startswith("sig-"), a
    assert a[1]["type"] == "tool_use", a
thinking("an-effort", 4096, 4096 + 4096)
thinking("an-budget", 2000, 3000)
for x in bodies("an-plain"):
    assert "thinking" not in x and x["temperature"] == 0.5, x
def tokens(name, field, n):
    for x in bodies(name):
        other = {"max_tokens", "max_completion_tokens"} - {field}
        assert x.get(field) == n and not other & set(x), x
tokens("oa-reasoning", "max_completion_tokens", 500)
tokens("oa-effort", "max_completion_tokens", 600)
tokens("oa-plain", "max_tokens", 700)
tokens("oa-field", "max_completion_tokens", 800)
assert bodies("oa-effort")[0]["reasoning_effort"] == "low"
print("settings ok")
PY

# a reply slower than the wall limit: cut at the limit, time_limit
cat > slow.json <<JSON
{"models": [{"name": "sleepy", "provider": "openai", "base_url": "$U", "model": "sleepy", "timeout_s": 30}]}
JSON
"$ENGISWEEP" run --models slow.json --quiet --out slowout slow > slow.log 2>&1 \
	|| { cat slow.log; fail "slow sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
e = R.episodes("slowout/results.h5")[0]
assert e["outcome"] == "time_limit" and e["success"] == 0, e
assert 2.9 <= e["wall_s"] <= 4.0, e["wall_s"]
assert "wall time ran out" in e["message"], e
print("deadline ok: wall_s %.2f" % e["wall_s"])
PY
echo "ok"
