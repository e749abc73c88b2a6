# Every tool call gets its own result, and read_image shows the model the
# image: a reply with two bash calls (`exit 3`, then `echo ok`) is answered
# with two results, each with its own output and exit code, through OpenAI
# tool messages, Anthropic tool_result blocks and the text fallback's next
# user message; read_image of a small PNG, a JPEG and a PNG too wide for the
# model sends the bytes (the small ones unchanged, the wide one scaled down
# to 1568 pixels across) as an OpenAI image_url part after the tool
# messages, an Anthropic image block inside the tool_result and an image of
# the text fallback's user message; a missing file is answered with an
# error. The test model server records every request body. All alone.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 1 0

"$PY" - <<'PY'
import base64, json, struct, zlib
def png(w, h, ctype, px):
    raw = b"".join(b"\0" + px * w for _ in range(h))
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
files = {"small.png": png(4, 3, 6, b"\x10\x20\x30\xff"),
         "wide.png": png(3000, 100, 2, b"\xc8\x64\x32"),
         "photo.jpg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(256)) + b"\xff\xd9"}
for n, d in files.items():
    open(n, "wb").write(d)
write = " && ".join("printf '%%s' %s | base64 -d > %s" % (base64.b64encode(d).decode(), n)
                    for n, d in files.items())
images = ["small.png", "photo.jpg", "wide.png", "missing.png"]
native = [{"calls": [{"name": "bash", "args": {"command": "echo first; exit 3"}},
                     {"name": "bash", "args": {"command": "echo ok"}}]},
          {"calls": [{"name": "bash", "args": {"command": write}}]
                    + [{"name": "read_image", "args": {"path": p}} for p in images]},
          {"calls": [{"name": "done", "args": {"summary": "seen"}}]}]
fence = lambda kind, body: "```%s\n%s\n```\n" % (kind, body)
text = [{"text": fence("bash", "echo first; exit 3") + fence("bash", "echo ok")},
        {"text": fence("bash", write) + "".join(fence("read_image", p) for p in images)},
        {"text": fence("done", "seen")}]
json.dump({"models": {"native": native, "text": text}}, open("script.json", "w"))
PY
start_model_server script.json --record
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
  {"name": "oa", "provider": "openai", "base_url": "$U", "model": "native", "image_tool": true, "timeout_s": 30},
  {"name": "an", "provider": "anthropic", "base_url": "$U", "model": "native", "image_tool": true, "timeout_s": 30},
  {"name": "tx", "provider": "openai", "base_url": "$U", "model": "text", "tools": "text", "image_tool": true, "timeout_s": 30}
]}
JSON
"$ENGISWEEP" run --models models.json --quiet --out out suite > run.log 2>&1 \
	|| { cat run.log; fail "sweep failed"; }

PYTHONPATH="$HERE" "$PY" - <<'PY'
import base64, json, struct, zlib
import results as R
for e in R.episodes("out/results.h5"):
    assert e["outcome"] == "done" and e["turns"] == 3, e
log = [json.loads(l) for l in open("server.log")]
assert not [l for l in log if "bad" in l], [l["bad"] for l in log if "bad" in l]
req = {(l["model"], l["api"], "tools" in l["body"], l["index"]): l["body"] for l in log}
want = {"small.png": open("small.png", "rb").read(), "photo.jpg": open("photo.jpg", "rb").read()}
first, second = "exit code: 3\nfirst\n", "exit code: 0\nok\n"

def check_images(got):
    """got: (media type, base64) in the order read: small, photo, wide"""
    assert len(got) == 3, [g[0] for g in got]
    assert got[0] == ("image/png", base64.b64encode(want["small.png"]).decode()), got[0][0]
    assert got[1] == ("image/jpeg", base64.b64encode(want["photo.jpg"]).decode()), got[1][0]
    wide = base64.b64decode(got[2][1])
    assert got[2][0] == "image/png" and wide[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", wide[16:24])
    assert (w, h) == (1568, 52), (w, h)

def data_url(u):
    head, b64 = u.split(",", 1)
    return head[len("data:"):-len(";base64")], b64

# OpenAI: one tool message per call, each with its own output and exit code
m = req[("native", "openai", True, 1)]["messages"]
tool = [x for x in m if x["role"] == "tool"]
assert [(t["tool_call_id"], t["content"]) for t in tool] == [("call_0", first), ("call_1", second)], tool
m = req[("native", "openai", True, 2)]["messages"]
i = max(k for k, x in enumerate(m) if x["role"] == "tool")
res = [x for x in m if x["role"] == "tool"][2:]
assert [r["tool_call_id"] for r in res] == ["call_%d" % k for k in range(5)], res
assert res[0]["content"].startswith("exit code: 0"), res[0]
assert "image/png" in res[1]["content"] and "4x3" in res[1]["content"], res[1]
assert "scaled down from 3000x100" in res[3]["content"], res[3]
assert "missing.png" in res[4]["content"] and "exit code: 1" in res[4]["content"], res[4]
shown = m[i + 1]
assert shown["role"] == "user" and i + 2 == len(m), m[i:]
check_images([data_url(p["image_url"]["url"]) for p in shown["content"] if p["type"] == "image_url"])

# Anthropic: tool_result blocks, each its own; images inside them
m = req[("native", "anthropic", True, 1)]["messages"]
res = [b for b in m[-1]["content"] if b["type"] == "tool_result"]
txt = lambda b: "".join(c["text"] for c in b["content"] if c["type"] == "text")
assert [(b["tool_use_id"], txt(b)) for b in res] == [("toolu_0", first), ("toolu_1", second)], res
m = req[("native", "anthropic", True, 2)]["messages"]
res = [b for b in m[-1]["content"] if b["type"] == "tool_result"]
assert len(res) == 5 and "missing.png" in txt(res[4]), res
imgs = [(c["source"]["media_type"], c["source"]["data"]) for b in res for c in b["content"]
        if c["type"] == "image"]
assert all(c["type"] == "text" for c in res[4]["content"]), res[4]
check_images(imgs)

# text: one user message listing each block's result
m = req[("text", "openai", False, 1)]["messages"]
last = m[-1]
assert last["role"] == "user" and isinstance(last["content"], str), last
assert "[1] bash:\n" + first in last["content"] and "[2] bash:\n" + second in last["content"], last
m = req[("text", "openai", False, 2)]["messages"]
last = m[-1]
text = [p["text"] for p in last["content"] if p["type"] == "text"][0]
assert "[5] read_image:\n" in text and "missing.png" in text.split("[5] read_image:")[1], text
check_images([data_url(p["image_url"]["url"]) for p in last["content"] if p["type"] == "image_url"])
print("results ok")
PY
echo "ok"
