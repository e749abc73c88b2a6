# One sweep with hostile agents beside an honest one: a model agent that
# delivers poisoned meshes (coordinates of 1e308, NaN) to a mesh task and a
# param_spec task, and a model agent that tries the escapes of the local
# backend (forging the journal, reading the API key from /proc, leaving
# processes behind). The sweep completes; the poisoned deliveries are judged
# (failed, with the reader's reason), not crashes; no escape leaves a trace;
# and the reference agent's verdicts are exactly those of a sweep run alone.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
export ENGI_TEST_API_KEY="sk-canary-hostile-$$-$RANDOM$RANDOM"
bash "$HERE/make_suite.sh" suite 2 0
cp -r "$ENGI_SRC/tasks/demo/flange-spec" "$ENGI_SRC/tasks/demo/flange-spec.json" suite/

"$PY" - <<'PY'
import json
poison = ("solid p\n facet normal 0 0 0\n  outer loop\n   vertex 1e308 0 0\n   vertex 0 -1e308 0\n"
          "   vertex 0 0 nan\n  endloop\n endfacet\nendsolid p\n")
write = "printf '%s' > tetra.stl && cp tetra.stl mount.stl" % poison.replace("\n", "\\n")
escape = ("cat ../../journal.jsonl; echo '{\"forged\": 1}' >> ../../journal.jsonl; "
          "cat /proc/$PPID/environ /proc/*/environ > env.txt 2>/dev/null; "
          "(setsid sleep 317 &); (nohup sleep 318 >/dev/null 2>&1 &); echo tried")
m = {"poisoner": [{"calls": [{"name": "bash", "args": {"command": write}}]},
                  {"calls": [{"name": "done", "args": {"summary": "delivered"}}]}],
     "escaper": [{"calls": [{"name": "bash", "args": {"command": escape}}]},
                 {"calls": [{"name": "done", "args": {"summary": "escaped"}}]}]}
json.dump({"models": m}, open("script.json", "w"))
PY
start_model_server script.json --key "$ENGI_TEST_API_KEY"
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
 {"name": "reference", "agent": "reference"},
 {"name": "poisoner", "provider": "openai", "base_url": "$U", "model": "poisoner", "api_key_env": "ENGI_TEST_API_KEY"},
 {"name": "escaper", "provider": "anthropic", "base_url": "$U", "model": "escaper", "api_key_env": "ENGI_TEST_API_KEY"}
]}
JSON
"$ENGISWEEP" run --agents reference --trials 2 --quiet --out alone suite > alone.log 2>&1 || { cat alone.log; fail "reference alone"; }
"$ENGISWEEP" run --jobs 2 --models models.json --trials 2 --quiet --out mixed suite > mixed.log 2>&1 \
	|| { cat mixed.log; fail "the sweep with hostile agents did not complete"; }
sleep 0.5
# sleeps of 317 and 318 s are this test's own: other tests run beside it
pgrep -f "sleep 31[78]" >/dev/null && { pgrep -af "sleep 31[78]"; fail "an agent's process outlived its episode"; }
if grep -rqa "$ENGI_TEST_API_KEY" mixed mixed.log; then fail "the API key was written"; fi
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import h5py
import results as R
for line in open("mixed/journal.jsonl"):
    rec = json.loads(line)
    assert "forged" not in rec, "the journal was forged"
alone = {(e["task_id"], e["trial"]): (e["outcome"], e["success"], e["score"]) for e in R.episodes("alone/results.h5")}
eps = R.episodes("mixed/results.h5")
assert len(eps) == 3 * 3 * 2, len(eps)
ref = {(e["task_id"], e["trial"]): (e["outcome"], e["success"], e["score"]) for e in eps if e["model"] == "reference"}
assert ref == alone and all(v[1] == 1 for v in ref.values()), (ref, alone)
with h5py.File("mixed/results.h5", "r") as f:
    rows = f["assertions"][:]
for e in eps:
    if e["model"] != "poisoner":
        continue
    # judged, not crashed: the agent's outcome, a failed verdict, the reader's reason
    assert e["outcome"] == "done" and e["infra"] == "" and e["success"] == 0, e
    details = " ".join(R.s(r["detail"]) for r in rows if R.s(r["cell"]) == e["cell"])
    assert "1e+30" in details or "not finite" in details, details[:400]
for e in eps:
    if e["model"] == "escaper":   # it ran its commands and ended as it chose
        assert e["outcome"] == "done" and e["turns"] == 2, e
        obs = [t for t in R.trace("mixed/results.h5", e["cell"]) if t["ev"] == "observation"]
        assert obs and "tried" in obs[0]["output"], obs
print("hostile sweep ok:", len(eps), "episodes")
PY
