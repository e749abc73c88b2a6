# Model agents end to end under mpirun -np 3, served by the test model server
# over real HTTP: through OpenAI tool calls, Anthropic tool use and the
# fenced-block text fallback a model writes the STL with real shell commands
# and declares done; another declares done with nothing delivered. Turns,
# tokens and cost land in HDF5 as the server reported them; every request
# carried the key in its header, and the key appears nowhere in the results
# folder, the logs or the HDF5 file (attributes and decompressed traces).
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 2 0
export ENGI_TEST_API_KEY="sk-engitest-$$-$RANDOM$RANDOM-secret"

"$PY" - <<'PY'
import json, os
cmd = os.environ["TETRA_CMD"]
solve = [{"text": "I will write the file.", "calls": [{"name": "bash", "args": {"command": cmd}}],
          "usage": [1000, 100]},
         {"calls": [{"name": "bash", "args": {"command": "test -s tetra.stl && echo present"}},
                    {"name": "done", "args": {"summary": "tetra.stl written"}}],
          "usage": [1200, 50]}]
text = [{"text": "Writing it.\n```bash\n" + cmd + "\n```\n", "usage": [1000, 100]},
        {"text": "```done\nwritten\n```", "usage": [1200, 50]}]
lazy = [{"calls": [{"name": "done", "args": {"summary": "nothing to do"}}], "usage": [500, 20]}]
json.dump({"models": {"solver": solve, "text-solver": text, "lazy": lazy}}, open("script.json", "w"))
PY
start_model_server script.json --key "$ENGI_TEST_API_KEY"
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
  {"name": "oa-solver", "provider": "openai", "base_url": "$U", "model": "solver",
   "api_key_env": "ENGI_TEST_API_KEY", "price_in_per_mtok": 3, "price_out_per_mtok": 15,
   "temperature": 0, "max_tokens": 1024, "timeout_s": 30, "retry_base_s": 0.05},
  {"name": "an-solver", "provider": "anthropic", "base_url": "$U", "model": "solver",
   "api_key_env": "ENGI_TEST_API_KEY", "price_in_per_mtok": 3, "price_out_per_mtok": 15,
   "timeout_s": 30, "retry_base_s": 0.05, "headers": {"X-Test": "1"}},
  {"name": "text-solver", "provider": "openai", "base_url": "$U", "model": "text-solver",
   "api_key_env": "ENGI_TEST_API_KEY", "price_in_per_mtok": 1, "price_out_per_mtok": 2,
   "tools": "text", "timeout_s": 30},
  {"name": "oa-lazy", "provider": "openai", "base_url": "$U", "model": "lazy",
   "api_key_env": "ENGI_TEST_API_KEY", "price_in_per_mtok": 3, "price_out_per_mtok": 15,
   "timeout_s": 30}
]}
JSON
mpirun_ -np 3 "$ENGISWEEP" run --models models.json --trials 2 --out mpi suite > run.log 2>&1 \
	|| { cat run.log; fail "mpirun sweep failed"; }
"$ENGISWEEP" report mpi/results.h5 > report.md 2>&1 || { cat report.md; fail "report failed"; }
grep -q "oa-solver" report.md || fail "report has no oa-solver row"

PYTHONPATH="$HERE" "$PY" - <<'PY'
import json, os
import results as R
ep = R.episodes("mpi/results.h5")
assert len(ep) == 2 * 4 * 2, len(ep)
want = {"oa-solver": (2, 2200, 150, 3, 15, 1), "an-solver": (2, 2200, 150, 3, 15, 1),
        "text-solver": (2, 2200, 150, 1, 2, 1), "oa-lazy": (1, 500, 20, 3, 15, 0)}
for e in ep:
    turns, tin, tout, pin, pout, ok = want[e["model"]]
    assert e["outcome"] == "done", e
    assert e["success"] == ok, e
    assert e["turns"] == turns and e["tokens_in"] == tin and e["tokens_out"] == tout, e
    cost = (tin * pin + tout * pout) / 1e6
    assert abs(e["cost_usd"] - cost) < 1e-12, (e["cost_usd"], cost)
    assert e["model_s"] > 0 and e["env_s"] > 0, e
    tr = R.trace("mpi/results.h5", e["cell"])
    kinds = [t["ev"] for t in tr]
    assert kinds.count("model_request") == turns and kinds.count("model_reply") == turns, kinds
    req = next(t for t in tr if t["ev"] == "model_request")["body"]
    if e["model"] != "text-solver":
        names = {(x.get("function") or x)["name"] for x in req["tools"]}
        assert {"bash", "computer", "done", "fail"} <= names, names
        assert "read_image" not in names, names
    else:
        assert "tools" not in req, req
    if ok:
        runs = [t for t in tr if t["ev"] == "action" and t["kind"] == "run"]
        assert runs and "tetra.stl" in runs[0]["command"], runs
log = [json.loads(l) for l in open("server.log")]
assert all(l.get("status") != 401 and "bad" not in l for l in log), [l for l in log if "bad" in l or l.get("status")]
assert {l["api"] for l in log} == {"openai", "anthropic"}
assert len(log) == 2 * 2 * (2 + 2 + 2 + 1), len(log)
print("episodes ok;", len(log), "requests")
PY

# the key appears nowhere we write
key="$ENGI_TEST_API_KEY"
if grep -rqaF "$key" mpi run.log report.md; then fail "the API key leaked into the results folder or logs"; fi
PYTHONPATH="$HERE" "$PY" - "$key" <<'PY'
import sys
import h5py
import results as R
key = sys.argv[1].encode()
hits = []
with h5py.File("mpi/results.h5", "r") as f:
    def walk(name, obj):
        for k, v in obj.attrs.items():
            if key in (v if isinstance(v, bytes) else str(v).encode()):
                hits.append(name + "@" + k)
        if isinstance(obj, h5py.Dataset) and not name.startswith("traces/"):
            if key in obj[()].tobytes():
                hits.append(name)
    for k, v in f.attrs.items():
        if key in (v if isinstance(v, bytes) else str(v).encode()):
            hits.append("/@" + k)
    f.visititems(walk)
    cells = list(f["traces"].keys())
for c in cells:
    import json
    if key in json.dumps(R.trace("mpi/results.h5", c)).encode():
        hits.append("traces/" + c)
assert not hits, hits
print("no key in", len(cells), "traces and the HDF5 file")
PY

# a condition grid over one model: the condition's history_turns is the
# one the model agent runs with (the model's entry says nothing of it)
"$PY" -c 'import json; m = json.load(open("models.json")); m["models"] = m["models"][:1]; json.dump(m, open("one.json", "w"))'
"$ENGISWEEP" run --quiet --models one.json --grid history_turns=1,7 --out grid suite
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
ep = R.episodes("grid/results.h5")
assert len(ep) == 2 * 2, len(ep)
for e in ep:
    start = [x for x in R.trace("grid/results.h5", e["cell"]) if x["ev"] == "model_start"]
    want = int(e["condition"].split("-")[1])
    assert start and start[0]["history_turns"] == want, (e["condition"], start)
    assert e["success"], e
print("ok: the grid's history_turns reached the model agent")
PY
echo "ok"
