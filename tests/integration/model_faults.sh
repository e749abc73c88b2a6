# The providers against a misbehaving endpoint (the test model server's
# fault injection), both APIs: 429 with Retry-After and 500s are retried
# with backoff and Retry-After is honoured; a reply slower than the timeout
# is abandoned and retried; a truncated body is retried; a malformed body, a
# body cut short and a 50 MB body each become one recorded error turn and
# the episode goes on; an endpoint that only ever answers garbage ends the
# episode as agent_error with a message. Infrastructure is not the model's:
# a port nobody listens on, 500 or 429 forever, 401, 403 and an unset key
# variable end as infra_error with their reason, are retried by the episode
# and rerun by --resume. A wrong key is refused by the server and the key
# never shows in the error. Calls that cannot run here
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

# Infrastructure is never the model's failure: a port nobody listens on,
# 500 and 429 past the retries, 401, 403 and an unset key variable are
# infra_error with their reason, retried by the episode (--retry-wait),
# never a success, and rerun by --resume; a model that only ever answers
# garbage stays agent_error and is done.
DEAD_PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
infra_entry() { # NAME PROVIDER BASE_URL MODEL KEY_ENV
	echo "{\"name\": \"$1\", \"provider\": \"$2\", \"base_url\": \"$3\", \"model\": \"$4\",
 \"api_key_env\": \"$5\", \"timeout_s\": 1, \"retry_base_s\": 0.01, \"max_retries\": 2}"
}
stop_model_server
"$PY" - <<'PY'
import json
s = json.load(open("script.json"))
m = s["models"]
m["down"] = [{"fault": "500", "times": 10**6}]
m["limited"] = [{"fault": "429", "times": 10**6, "retry_after": 0}]
m["denied401"] = [{"fault": "401", "times": 10**6}]
m["denied403"] = [{"fault": "403", "times": 10**6}]
# writes a passing deliverable, then only ever answers garbage
m["halfway"] = [m["rate"][0] | {"fault": None}, {"fault": "malformed", "times": 100}]
m["halfway"][0].pop("fault")
json.dump(s, open("script.json", "w"))
PY
start_model_server script.json --key "$ENGI_TEST_API_KEY"
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > infra.json <<JSON
{"models": [
 $(infra_entry refused openai "http://127.0.0.1:$DEAD_PORT/v1" rate ENGI_TEST_API_KEY),
 $(infra_entry down anthropic "$U" down ENGI_TEST_API_KEY),
 $(infra_entry limited openai "$U" limited ENGI_TEST_API_KEY),
 $(infra_entry denied401 openai "$U" denied401 ENGI_TEST_API_KEY),
 $(infra_entry denied403 anthropic "$U" denied403 ENGI_TEST_API_KEY),
 $(infra_entry nokey anthropic "$U" rate ENGI_UNSET_KEY_VARIABLE),
 $(infra_entry broken openai "$U" broken ENGI_TEST_API_KEY)
]}
JSON
unset ENGI_UNSET_KEY_VARIABLE
run_infra() {
	"$ENGISWEEP" run "$@" --retries 1 --retry-wait 0.05 --models infra.json --quiet --out infra suite \
		> infra.log 2>&1 || true
}
run_infra
cp server.log server-first.log
cp infra/results.h5 infra-first.h5
run_infra --resume
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R
rows = R.episodes("infra/results.h5")
assert "infra" in rows[0], sorted(rows[0])
before = {e["model"]: e for e in R.episodes("infra-first.h5")}
want = {"refused": "endpoint unavailable", "down": "endpoint unavailable",
        "limited": "endpoint unavailable", "denied401": "authentication refused",
        "denied403": "authentication refused", "nokey": "api key not set"}
by = {e["model"]: e for e in rows}
assert len(rows) == len(before) == 7, (sorted(by), sorted(before))
for m, why in want.items():
    for e in (before[m], by[m]):
        assert e["outcome"] == "infra_error" and e["infra"] == why, e
        assert e["success"] == 0 and e["attempts"] == 2, e
    # --resume did not count it done: it ran again
    assert by[m]["started_at"] > before[m]["started_at"], (before[m], by[m])
assert by["broken"]["started_at"] == before["broken"]["started_at"], by["broken"]
by = {m: [e] for m, e in by.items()}
e = by["broken"][0]
assert e["outcome"] == "agent_error" and e["infra"] == "" and "unusable replies" in e["message"], e
assert "ENGI_UNSET_KEY_VARIABLE" in by["nokey"][0]["message"], by["nokey"]
assert "HTTP 403" in by["denied403"][0]["message"], by["denied403"]
first = [json.loads(l) for l in open("server-first.log")]
log = [json.loads(l) for l in open("server.log")]
n = lambda lg, m: sum(1 for l in lg if l.get("model") == m)
# 401/403 are not retried by the provider: one request per episode attempt
assert n(first, "denied401") == 2 and n(first, "denied403") == 2, (n(first, "denied401"), n(first, "denied403"))
# 500 and 429: the provider's retries (1 + 2) per attempt
assert n(first, "down") == 6 and n(first, "limited") == 6, (n(first, "down"), n(first, "limited"))
assert n(log, "down") == 12 and n(log, "broken") == n(first, "broken"), (n(log, "down"), n(log, "broken"))
print("infra ok")
PY
# a wrong key: refused as infrastructure, and the key is not in the message
cat > wrongkey.json <<JSON
{"models": [{"name": "wrong", "provider": "openai", "base_url": "$U", "model": "rate",
 "api_key_env": "ENGI_WRONG_KEY", "timeout_s": 1, "max_retries": 0}]}
JSON
ENGI_WRONG_KEY="sk-wrong-$RANDOM$RANDOM-zz" "$ENGISWEEP" run --retries 0 --models wrongkey.json --quiet --out wrong suite > wrong.log 2>&1 || true
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
e = R.episodes("wrong/results.h5")[0]
assert e["outcome"] == "infra_error" and e["infra"] == "authentication refused", e
assert "HTTP 401" in e["message"], e
PY
if grep -rqa "sk-wrong-" wrong wrong.log; then fail "the wrong key shows in the output"; fi

# A sweep with a dead endpoint beside a working model: the report scores the
# working one normally and lists the dead one's episodes as not run, with no
# score (not 0 %). An episode that ended in the agent's error is never a
# success, even when its deliverable passes.
cat > mix.json <<JSON
{"models": [
 $(infra_entry good openai "$U" rate ENGI_TEST_API_KEY),
 $(infra_entry dead openai "http://127.0.0.1:$DEAD_PORT/v1" rate ENGI_TEST_API_KEY),
 $(infra_entry halfway openai "$U" halfway ENGI_TEST_API_KEY)
]}
JSON
bash "$HERE/make_suite.sh" suite3 3 0
"$ENGISWEEP" run --retries 1 --retry-wait 0.01 --models mix.json --quiet --out mix suite3 > mix.log 2>&1 \
	|| { cat mix.log; fail "mixed sweep failed"; }
"$ENGISWEEP" report mix/results.h5 > mix-report.txt 2>&1 || { cat mix-report.txt; fail "report"; }
grep -q -- "- dead: 3 episodes not run: endpoint unavailable; no scored episode, no score" mix-report.txt \
	|| { cat mix-report.txt; fail "the dead model's episodes are not listed as not run"; }
grep -Eq '^\| good \| base \| 3 \| 3 \| 100(\.0)? ' mix-report.txt \
	|| { grep '^| ' mix-report.txt | head -20; fail "the working model is not scored normally"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
for e in R.episodes("mix/results.h5"):
    if e["model"] != "halfway":
        continue
    assert e["outcome"] == "agent_error" and e["success"] == 0 and e["score"] == 0, e
    import h5py
    with h5py.File("mix/results.h5", "r") as f:
        a = [r for r in f["assertions"][:] if R.s(r["cell"]) == e["cell"] and R.s(r["name"]) == "closed"]
    assert a and R.s(a[0]["state"]) == "pass", a   # the delivery passed, the episode is no success
print("mix ok")
PY
echo "ok"
