# The providers against a misbehaving endpoint (the test model server's
# fault injection), both APIs: 429 with Retry-After and 500s are retried
# with backoff and Retry-After is honoured; a reply slower than the timeout
# is abandoned and retried; a truncated body is retried; a malformed body, a
# body cut short and a 50 MB body each become one recorded error turn and
# the episode goes on; an endpoint that never answers usably ends the
# episode as agent_error with a message. A wrong key is refused by the
# server and the key never shows in the error. Calls that cannot run here
# are answered, not fatal: a GUI action on the local backend (which does
# not support input events), an unknown tool, arguments that are not an object. All alone
# (no mpirun).
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 1 0
export ENGI_TEST_API_KEY="sk-engitest-faults-$$-$RANDOM$RANDOM"

"$PY" - <<'PY'
import json, os
cmd = os.environ["TETRA_CMD"]
def solve(first=None, second=None):
    a = {"calls": [{"name": "bash", "args": {"command": cmd}}], "usage": [1000, 100]}
    b = {"calls": [{"name": "done", "args": {"summary": "ok"}}], "usage": [1000, 10]}
    a.update(first or {})
    b.update(second or {})
    return [a, b]
m = {
    "rate": solve({"fault": "429", "retry_after": 1}, {"fault": "500", "times": 2}),
    "slow": solve({"fault": "slow", "sleep_s": 3}),
    "truncated": solve({"fault": "truncated"}),
    "malformed": solve({"fault": "malformed"}),
    "cut": solve({"fault": "cut"}),
    "huge": solve({"fault": "huge"}),
    "broken": solve({"fault": "malformed", "times": 100}),
    "odd": [{"calls": [{"name": "computer", "args": {"action": "click", "x": 5, "y": 7}},
                       {"name": "paint", "args": {}},
                       {"name": "bash", "args": {"cmd": "oops"}}]}] + solve(),
}
json.dump({"models": m}, open("script.json", "w"))
PY
start_model_server script.json --key "$ENGI_TEST_API_KEY"
U="http://127.0.0.1:$MODEL_PORT/v1"
entries=""
for api in openai anthropic; do
	for m in rate slow truncated malformed cut huge broken odd; do
		entries="$entries{\"name\": \"$api-$m\", \"provider\": \"$api\", \"base_url\": \"$U\", \"model\": \"$m\",
 \"api_key_env\": \"ENGI_TEST_API_KEY\", \"timeout_s\": 1, \"retry_base_s\": 0.05, \"max_retries\": 3,
 \"price_in_per_mtok\": 1, \"price_out_per_mtok\": 1},"
	done
done
echo "{\"models\": [${entries%,}]}" > models.json
"$ENGISWEEP" run --jobs 2 --models models.json --quiet --out out suite > run.log 2>&1 \
	|| { cat run.log; fail "sweep failed"; }

PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R
ep = {e["model"]: e for e in R.episodes("out/results.h5")}
assert len(ep) == 16, sorted(ep)
for api in ("openai", "anthropic"):
    g = lambda m: ep[api + "-" + m]
    for m in ("rate", "slow", "truncated"):
        e = g(m)
        assert e["outcome"] == "done" and e["success"] == 1 and e["turns"] == 2, e
    for m in ("malformed", "cut", "huge"):
        e = g(m)
        # one error turn, then the same request again
        assert e["outcome"] == "done" and e["success"] == 1 and e["turns"] == 3, e
        tr = R.trace("out/results.h5", e["cell"])
        errs = [t for t in tr if t["ev"] == "model_reply" and t.get("error")]
        assert len(errs) == 1, errs
        if m == "huge":
            assert "cap" in errs[0]["error"], errs
    e = g("broken")
    assert e["outcome"] == "agent_error" and e["success"] == 0, e
    assert "unusable replies" in e["message"], e
    tr = R.trace("out/results.h5", g("rate")["cell"])
    rep = [t for t in tr if t["ev"] == "model_reply"]
    assert rep[0]["attempts"] == 2 and rep[0]["wait_s"] >= 0.95, rep[0]  # Retry-After: 1
    assert rep[1]["attempts"] == 3, rep[1]
    assert g("rate")["tokens_in"] == 2000 and abs(g("rate")["cost_usd"] - 2110e-6) < 1e-12
    e = g("odd")
    assert e["outcome"] == "done" and e["success"] == 1 and e["turns"] == 3, e
    tr = R.trace("out/results.h5", e["cell"])
    inp = [t for t in tr if t["ev"] == "action" and t["kind"] == "input"]
    assert len(inp) == 1 and "does not support input events" in inp[0]["error"], inp
    body = json.dumps([t["body"] for t in tr if t["ev"] == "model_request"][1])
    assert "does not support input events" in body and "there is no tool 'paint'" in body, body
    assert "bash needs a string 'command'" in body, body
    slow = [t for t in R.trace("out/results.h5", g("slow")["cell"]) if t["ev"] == "model_reply"]
    assert slow[0]["attempts"] == 2, slow[0]
log = [json.loads(l) for l in open("server.log")]
assert not [l for l in log if "bad" in l or l.get("status") == 401], log
print("faults ok;", len(log), "requests")
PY

# a wrong key: refused, reported, and the key is not in the message
cat > wrongkey.json <<JSON
{"models": [{"name": "wrong", "provider": "openai", "base_url": "$U", "model": "rate",
 "api_key_env": "ENGI_WRONG_KEY", "timeout_s": 1, "max_retries": 0}]}
JSON
ENGI_WRONG_KEY="sk-wrong-$RANDOM$RANDOM-zz" "$ENGISWEEP" run --models wrongkey.json --quiet --out wrong suite > wrong.log 2>&1 \
	|| { cat wrong.log; fail "sweep with a wrong key failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
e = R.episodes("wrong/results.h5")[0]
assert e["outcome"] == "agent_error" and "HTTP 401" in e["message"], e
PY
if grep -rqa "sk-wrong-" wrong wrong.log; then fail "the wrong key shows in the output"; fi
# the key variable unset: a clear error naming the variable
cat > nokey.json <<JSON
{"models": [{"name": "nokey", "provider": "anthropic", "base_url": "$U", "model": "rate",
 "api_key_env": "ENGI_UNSET_KEY_VARIABLE"}]}
JSON
"$ENGISWEEP" run --models nokey.json --quiet --out nokey suite > nokey.log 2>&1 || true
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
e = R.episodes("nokey/results.h5")[0]
assert e["outcome"] == "agent_error" and "ENGI_UNSET_KEY_VARIABLE" in e["message"], e
PY
echo "ok"
