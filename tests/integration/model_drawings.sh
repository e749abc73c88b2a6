# A task's PNG drawings reach the model as images of the instruction message
# (OpenAI image_url data URIs, Anthropic base64 image blocks), byte for byte;
# the condition setting drawings=none leaves them out, and an unknown
# value is refused before anything runs.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 1 0
"$PY" - <<'PY'
import json, struct, zlib
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(b"\x00\x00\xff\x00\xff\x00")) + chunk(b"IEND", b""))
open("suite/d.png", "wb").write(png)
open("suite/notes.svg", "w").write("<svg/>")
t = json.load(open("suite/tetra-1.json"))
t["drawings"] = ["d.png", "notes.svg"]
json.dump(t, open("suite/tetra-1.json", "w"))
lazy = [{"calls": [{"name": "done", "args": {"summary": "looked"}}]}]
json.dump({"models": {"lazy": lazy}}, open("script.json", "w"))
PY
start_model_server script.json
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
  {"name": "oa", "provider": "openai", "base_url": "$U", "model": "lazy", "timeout_s": 30},
  {"name": "an", "provider": "anthropic", "base_url": "$U", "model": "lazy", "timeout_s": 30}]}
JSON
says "$ENGISWEEP" run --models models.json -c shown -c odd:drawings=sideways --quiet --out odd suite \
	| grep -qF "drawings=sideways: expected message, files or none" || fail "drawings=sideways not refused"
[ ! -e odd ] || fail "a refused sweep left its output folder"
"$ENGISWEEP" run --models models.json -c shown -c hidden:drawings=none \
	--quiet --out out suite > run.log 2>&1 || { cat run.log; fail "sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import base64, json
import results as R
b64 = base64.b64encode(open("suite/d.png", "rb").read()).decode()
for e in R.episodes("out/results.h5"):
    assert e["outcome"] == "done", e
    body = [t for t in R.trace("out/results.h5", e["cell"]) if t["ev"] == "model_request"][0]["body"]
    first = body["messages"][1 if e["model"] == "oa" else 0]["content"]
    imgs = [c for c in first if isinstance(c, dict) and c["type"] in ("image_url", "image")]
    if e["condition"] == "hidden":
        assert imgs == [], imgs
        continue
    assert len(imgs) == 1, first  # the SVG is not shown
    if e["model"] == "oa":
        assert imgs[0]["image_url"]["url"] == "data:image/png;base64," + b64
    else:
        assert imgs[0]["source"] == {"type": "base64", "media_type": "image/png", "data": b64}
print("drawings ok")
PY
echo "ok"
