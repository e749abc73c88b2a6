# Condition setting drawings=files: the runner copies every drawing of the
# task (any format) into the environment at drawings/<file name> before the
# agent starts, for built-in agents and models alike; the model's
# instruction lists them and its requests carry no image.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 1 0
"$PY" - <<'PY'
import json, os, struct, zlib
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(b"\x00\x00\xff\x00\xff\x00")) + chunk(b"IEND", b""))
os.makedirs("suite/figs", exist_ok=True)
open("suite/d.png", "wb").write(png)
open("suite/figs/plan.svg", "w").write("<svg/>")
t = json.load(open("suite/tetra-1.json"))
t["drawings"] = ["d.png", "figs/plan.svg"]
# the reference looks too: the runner copies the drawings for every agent
t["reference"].insert(0, {"run": "ls drawings || true"})
json.dump(t, open("suite/tetra-1.json", "w"))
tetra = os.environ["TETRA_CMD"]
bash = lambda c: {"calls": [{"name": "bash", "args": {"command": c}}]}
json.dump({"models": {"lister": [
    bash("ls drawings && cmp drawings/plan.svg /dev/stdin < drawings/plan.svg && head -c 4 drawings/d.png | od -c"),
    bash(tetra), {"calls": [{"name": "done", "args": {"summary": "ok"}}]}]}},
    open("script.json", "w"))
PY
start_model_server script.json
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
  {"name": "oa", "provider": "openai", "base_url": "$U", "model": "lister", "timeout_s": 30},
  {"name": "an", "provider": "anthropic", "base_url": "$U", "model": "lister", "timeout_s": 30}]}
JSON
"$ENGISWEEP" run --models models.json -c files:drawings=files --quiet --out out suite > run.log 2>&1 ||
	{ cat run.log; fail "sweep failed"; }
"$ENGISWEEP" run -a reference -c files:drawings=files -c plain --quiet --out ref suite > ref.log 2>&1 ||
	{ cat ref.log; fail "reference sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R

def texts(v):
    if isinstance(v, str):
        return [v]
    if isinstance(v, list):
        return [s for x in v for s in texts(x)]
    if isinstance(v, dict):
        return [s for x in v.values() for s in texts(x)]
    return []

png = open("suite/d.png", "rb").read()
for e in R.episodes("out/results.h5"):
    assert e["outcome"] == "done" and e["success"] == 1, e
    tr = R.trace("out/results.h5", e["cell"])
    drawn = sorted((x["path"], x["bytes"]) for x in tr if x["ev"] == "drawing")
    assert drawn == [("drawings/d.png", len(png)), ("drawings/plan.svg", 6)], drawn
    obs = [x for x in tr if x["ev"] == "observation"][0]
    assert obs["exit"] == 0 and obs["output"].split()[:2] == ["d.png", "plan.svg"], obs
    assert "P   N   G" in obs["output"], obs
    reqs = [x["body"] for x in tr if x["ev"] == "model_request"]
    for body in reqs:
        dump = json.dumps(body)
        assert "image_url" not in dump and '"type": "image"' not in dump, "an image was sent"
    first = "\n".join(texts(reqs[0]["messages"]))
    assert "- drawings/d.png\n- drawings/plan.svg\n" in first, first
    # the observation of `ls drawings` reaches the model in the next request
    assert "plan.svg" in "\n".join(texts(reqs[1]["messages"][-1])), reqs[1]["messages"][-1]
for e in R.episodes("ref/results.h5"):
    assert e["success"] == 1, e
    tr = R.trace("ref/results.h5", e["cell"])
    out = [x for x in tr if x["ev"] == "observation"][0]["output"]
    if e["condition"] == "files":
        assert out.split() == ["d.png", "plan.svg"], out
    else:
        assert "d.png" not in out and not [x for x in tr if x["ev"] == "drawing"], out
print("drawings as files ok")
PY
echo "ok"
