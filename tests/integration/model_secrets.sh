# No secret is ever written. The test model server answers with canaries: a
# key (api_key_env) and a header value (models.json headers) quoted in a 200
# reply's text and in its tool-call arguments, a command that writes the
# key into the deliverable and prints it, and a done summary that holds it
# (the record's message). The sweep completes; afterwards no canary is
# found anywhere in the results folder (journal, status.json, artifacts,
# HDF5 rows and attributes, decompressed traces), in the report outputs or
# in the run's stderr log. The scrubbed deliverable says so in its note.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 1 0
export ENGI_TEST_API_KEY="sk-canary-$$-$RANDOM$RANDOM"
export ENGI_TEST_HEADER="hdr-canary-$$-$RANDOM$RANDOM"

"$PY" - <<'PY'
import json, os
key, hdr, cmd = os.environ["ENGI_TEST_API_KEY"], os.environ["ENGI_TEST_HEADER"], os.environ["TETRA_CMD"]
leak = ("%s && sed -i 's/^solid t/solid %s/' tetra.stl && echo %s > out.txt && echo %s %s"
        % (cmd, key, key, key, hdr))
native = [{"text": "Your key is %s and your header is Bearer %s." % (key, hdr),
           "calls": [{"name": "bash", "args": {"command": leak}}], "usage": [1000, 100]},
          {"calls": [{"name": "done", "args": {"summary": "done with %s / %s" % (key, hdr)}}],
           "usage": [1200, 50]}]
text = [{"text": "Key %s.\n```bash\n%s\n```\n" % (key, leak), "usage": [1000, 100]},
        {"text": "```done\nwritten with %s\n```" % hdr, "usage": [1200, 50]}]
json.dump({"models": {"leaky": native, "leaky-text": text}}, open("script.json", "w"))
PY
start_model_server script.json --key "$ENGI_TEST_API_KEY"
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
  {"name": "oa-leaky", "provider": "openai", "base_url": "$U", "model": "leaky",
   "api_key_env": "ENGI_TEST_API_KEY", "timeout_s": 30, "retry_base_s": 0.05,
   "headers": {"X-Canary": "Bearer $ENGI_TEST_HEADER"}},
  {"name": "an-leaky", "provider": "anthropic", "base_url": "$U", "model": "leaky",
   "api_key_env": "ENGI_TEST_API_KEY", "timeout_s": 30, "retry_base_s": 0.05,
   "headers": {"X-Canary": "Bearer $ENGI_TEST_HEADER"}},
  {"name": "text-leaky", "provider": "openai", "base_url": "$U", "model": "leaky-text",
   "api_key_env": "ENGI_TEST_API_KEY", "tools": "text", "timeout_s": 30,
   "headers": {"X-Canary": "Bearer $ENGI_TEST_HEADER"}}
]}
JSON
"$ENGISWEEP" run --models models.json --out out suite > run.log 2>&1 \
	|| { cat run.log; fail "the sweep failed"; }
"$ENGISWEEP" report --out-prefix rep out/results.h5 > report.md 2>>run.log \
	|| { cat report.md run.log; fail "report failed"; }

PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R
ep = R.episodes("out/results.h5")
assert sorted(e["model"] for e in ep) == ["an-leaky", "oa-leaky", "text-leaky"], ep
for e in ep:
    assert e["outcome"] == "done" and e["turns"] == 2, e
    assert "[secret]" in e["message"], e
    tr = R.trace("out/results.h5", e["cell"])
    runs = [t for t in tr if t["ev"] == "action" and t["kind"] == "run"]
    assert runs and "[secret]" in runs[0]["command"], runs
    arts = [t for t in tr if t["ev"] == "artifact"]
    assert arts and "secrets scrubbed" in arts[0]["note"], arts
    stl = open("out/artifacts/%s/tetra.stl" % e["cell"]).read()
    assert stl.startswith("solid [secret]\n"), stl[:40]
print("episodes ok")
PY
grep -q "secrets scrubbed" out/journal.jsonl || fail "the journal does not note the scrubbed deliverable"
# the server got the key: the requests were real
grep -q '"status": 401' server.log && fail "a request went without the key"

for canary in "$ENGI_TEST_API_KEY" "$ENGI_TEST_HEADER"; do
	if grep -rlaF "$canary" out run.log report.md rep.*; then
		fail "a canary leaked into the files above"
	fi
	PYTHONPATH="$HERE" "$PY" - "$canary" <<'PY'
import json, sys
import h5py
import results as R
key = sys.argv[1].encode()
hits = []
def has(v):
    return key in (v if isinstance(v, bytes) else str(v).encode())
with h5py.File("out/results.h5", "r") as f:
    def walk(name, obj):
        hits.extend(name + "@" + k for k, v in obj.attrs.items() if has(v))
        if isinstance(obj, h5py.Dataset) and not name.startswith("traces/"):
            if key in obj[()].tobytes():
                hits.append(name)
    hits.extend("/@" + k for k, v in f.attrs.items() if has(v))
    f.visititems(walk)
    cells = list(f["traces"].keys())
for c in cells:
    if key in json.dumps(R.trace("out/results.h5", c)).encode():
        hits.append("traces/" + c)
assert not hits, hits
print("no canary in", len(cells), "traces and the HDF5 file")
PY
done
echo "model_secrets: ok"
