# replay:RESULTS.h5 plays the recorded model replies of an earlier sweep
# against fresh environments with the model server gone: for recordings made
# through OpenAI tool calls (with an error turn from a malformed reply),
# Anthropic tool use, the text fallback and a model that delivers nothing,
# the replayed episodes run the same actions in the same turns and reach the
# same outcome and verdict, at no cost; a replay of a file without model
# replies is a clear agent_error.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 2 0
export ENGI_TEST_API_KEY="sk-engitest-replay-$$"
"$PY" - <<'PY'
import json, os
cmd = os.environ["TETRA_CMD"]
solve = [{"calls": [{"name": "bash", "args": {"command": "echo start; ls"}}], "usage": [10, 1]},
         {"calls": [{"name": "bash", "args": {"command": cmd}},
                    {"name": "bash", "args": {"command": "wc -c tetra.stl"}}], "usage": [10, 1]},
         {"calls": [{"name": "done", "args": {"summary": "ok"}}], "usage": [10, 1]}]
faulty = [dict(solve[0], fault="malformed")] + solve[1:]
text = [{"text": "```bash\n" + cmd + "\n```", "usage": [10, 1]}, {"text": "```done\nok\n```"}]
lazy = [{"calls": [{"name": "done", "args": {"summary": "nothing"}}]}]
json.dump({"models": {"solver": solve, "faulty": faulty, "text": text, "lazy": lazy}},
          open("script.json", "w"))
PY
start_model_server script.json --key "$ENGI_TEST_API_KEY"
U="http://127.0.0.1:$MODEL_PORT/v1"
record() { # NAME PROVIDER MODEL [EXTRA]
	cat > "$1.json" <<JSON
{"models": [{"name": "$1", "provider": "$2", "base_url": "$U", "model": "$3",
 "api_key_env": "ENGI_TEST_API_KEY", "price_in_per_mtok": 1, "price_out_per_mtok": 1,
 "timeout_s": 30, "retry_base_s": 0.05 ${4:-}}]}
JSON
	"$ENGISWEEP" run --jobs 2 --models "$1.json" --quiet --out "rec-$1" suite > "rec-$1.log" 2>&1 \
		|| { cat "rec-$1.log"; fail "recording $1 failed"; }
}
record oa openai faulty
record an anthropic solver
record tx openai text ', "tools": "text"'
record lazy anthropic lazy
stop_model_server

for r in oa an tx lazy; do
	cat > "rep-$r.json" <<JSON
{"models": [{"name": "rep-$r", "agent": "replay:$PWD/rec-$r/results.h5"}]}
JSON
	"$ENGISWEEP" run --jobs 2 --models "rep-$r.json" --quiet --out "rep-$r" suite > "rep-$r.log" 2>&1 \
		|| { cat "rep-$r.log"; fail "replay of $r failed"; }
done
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R

def actions(path, cell):
    return [(t["turn"], t["kind"], t.get("command") or t.get("text") or t.get("path"))
            for t in R.trace(path, cell) if t["ev"] == "action"]

for r in ("oa", "an", "tx", "lazy"):
    rec = {e["task_id"]: e for e in R.episodes("rec-%s/results.h5" % r)}
    rep = {e["task_id"]: e for e in R.episodes("rep-%s/results.h5" % r)}
    assert sorted(rec) == sorted(rep) == ["tetra-1", "tetra-2"], (rec, rep)
    for task in rec:
        a, b = rec[task], rep[task]
        for k in ("outcome", "success", "score", "turns"):
            assert a[k] == b[k], (r, task, k, a[k], b[k])
        assert b["cost_usd"] == 0 and b["tokens_in"] == 0, b
        ra = actions("rec-%s/results.h5" % r, a["cell"])
        rb = actions("rep-%s/results.h5" % r, b["cell"])
        assert ra == rb and ra, (r, ra, rb)
    print(r, "replayed:", rec["tetra-1"]["outcome"], rec["tetra-1"]["turns"], "turns")
assert rec["tetra-1"]["success"] == 0  # lazy
# the malformed reply is served once: one of the two episodes had an error turn, replayed too
assert sorted(e["turns"] for e in R.episodes("rep-oa/results.h5")) == [3, 4]
PY

# a results file without model replies: agent_error naming the file
"$ENGISWEEP" run --agents reference --quiet --out plain suite > plain.log 2>&1
cat > bad.json <<JSON
{"models": [{"name": "rep-plain", "agent": "replay:$PWD/plain/results.h5"}]}
JSON
"$ENGISWEEP" run --models bad.json --quiet --out bad suite > bad.log 2>&1 || true
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
for e in R.episodes("bad/results.h5"):
    assert e["outcome"] == "agent_error" and "no episode of task" in e["message"], e
PY
echo "ok"
