# The engiworld action space ("tools": "engiworld"): a model answering in
# XML <response> documents through the test server (OpenAI and Anthropic)
# writes the deliverable with bash, runs Python (stderr merged, a line of its
# code equal to the here-document's first delimiter, a non-zero exit), shows
# itself a PNG with readimg (listed before the Python that makes it: readimg
# runs after the commands), sends a reply that does not parse, runs a command
# whose output is cut at 8192 characters, and declares done. The requests
# declare no tools and carry the format and the instruction in the system
# prompt; each observation is the benchmark's text (turn number, $ command,
# output, [returncode=N], the readimg line with the image attached, the
# parse_error notice); the episode succeeds in 5 turns; a replay of the
# recording plays the same actions and reaches the same verdict.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 1 0
"$PY" - <<'PY'
import json, os
cmd = os.environ["TETRA_CMD"]
png = ("import struct, zlib, sys\n"
       "def chunk(t, d):\n"
       "    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))\n"
       "ihdr = struct.pack('>IIBBBBB', 2, 2, 8, 0, 0, 0, 0)\n"
       "data = zlib.compress(b'\\x00\\x00\\xff\\x00\\xff\\x00')\n"
       "open('img.png', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', ihdr)"
       " + chunk(b'IDAT', data) + chunk(b'IEND', b''))\n"
       "print('png written', flush=True)\n"
       "print('to stderr', file=sys.stderr)\n")
def doc(reflection, *actions):
    return "<response>\n  <reflection>%s</reflection>\n%s</response>" % (reflection, "".join(actions))
def act(kind, body=None, **attrs):
    a = "".join(' %s="%s"' % kv for kv in attrs.items())
    if body is None:
        return '  <action type="%s"%s/>\n' % (kind, a)
    return '  <action type="%s"%s><![CDATA[\n    %s\n  ]]></action>\n' % (
        kind, a, body.replace("\n", "\n    "))
tricky = 's = """\nENGISWEEP_PYTHON_0\n"""\nimport sys\nprint(s.strip())\nsys.exit(3)'
replies = [
    {"text": doc("Write the mesh, draw a picture, look at it.",
                 act("readimg", path="img.png"), act("bash", cmd), act("Python", png))},
    {"text": "I have finished the task."},
    {"text": doc("Look at a long listing and a tricky script.",
                 act("bash", "seq 1 5000"), act("python", tricky))},
    {"text": doc("Let a moment pass.", act("wait", seconds="0.2"))},
    {"text": doc("The mesh is written.", act("done"))},
]
json.dump({"models": {"ew": replies}}, open("script.json", "w"))
PY
start_model_server script.json
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
  {"name": "oa", "provider": "openai", "base_url": "$U", "model": "ew", "tools": "engiworld",
   "timeout_s": 30},
  {"name": "an", "provider": "anthropic", "base_url": "$U", "model": "ew", "tools": "engiworld",
   "timeout_s": 30}]}
JSON
"$ENGISWEEP" run --models models.json --quiet --out out suite > run.log 2>&1 \
	|| { cat run.log; fail "sweep failed"; }
stop_model_server
cat > replay.json <<JSON
{"models": [{"name": "rep", "agent": "replay:$PWD/out/results.h5"}]}
JSON
"$ENGISWEEP" run --models replay.json --quiet --out rep suite > rep.log 2>&1 \
	|| { cat rep.log; fail "replay failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import base64, json, os
import results as R

def user_text(msg):
    c = msg["content"]
    if isinstance(c, str):
        return c
    return "".join(p["text"] for p in c if p.get("type") == "text")

def images(msg):
    c = msg["content"]
    if isinstance(c, str):
        return []
    out = []
    for p in c:
        if p.get("type") == "image_url":
            out.append(p["image_url"]["url"].split(",", 1)[1])
        elif p.get("type") == "image":
            out.append(p["source"]["data"])
    return out

eps = {e["model"]: e for e in R.episodes("out/results.h5")}
assert sorted(eps) == ["an", "oa"], eps
cmd = os.environ["TETRA_CMD"]
for name, e in eps.items():
    assert e["outcome"] == "done" and e["success"], e
    assert e["turns"] == 5, e
    tr = R.trace("out/results.h5", e["cell"])
    start = [t for t in tr if t["ev"] == "model_start"][0]
    assert start["tools"] == "engiworld", start
    bodies = [t["body"] for t in tr if t["ev"] == "model_request"]
    assert len(bodies) == 5, len(bodies)
    for b in bodies:
        assert "tools" not in b, "tools declared in the engiworld action space"
    if name == "oa":
        system = bodies[0]["messages"][0]["content"]
        msgs = [b["messages"][1:] for b in bodies]
    else:
        system = bodies[0]["system"]
        msgs = [b["messages"] for b in bodies]
    assert "<response>" in system and "<reflection>" in system, system
    assert "# Task\n<task_instruction>\n" in system and "closed unit tetrahedron" in system, system
    assert user_text(msgs[0][0]) == ("This is turn 1 of the task. "
                                     "There is currently no new terminal output."), msgs[0][0]
    # turn 2: the commands' results, in the order they ran, and the image
    obs = msgs[1][-1]
    assert obs["role"] == "user"
    text = user_text(obs)
    assert text.startswith("This is turn 2 of the task."), text
    i_bash = text.index("\n$ " + cmd + "\n")
    i_py = text.index("\n$ [python]\nimport struct, zlib, sys\n")
    i_img = text.index("[readimg] images attached, in order: img.png")
    assert i_bash < i_py < i_img, text
    assert "png written\nto stderr\n[returncode=0]" in text, text
    assert "[runtime error]" not in text, text
    png = base64.b64decode(images(obs)[0])
    assert png.startswith(b"\x89PNG\r\n\x1a\n"), png[:16]
    assert len(images(obs)) == 1
    # turn 3: the reply that did not parse
    text = user_text(msgs[2][-1])
    assert text.startswith("[parse_error] Your previous response could not be parsed and was "
                           "discarded. Reason: line 1: text before <response>"), text
    assert "Reply with exactly one <response> XML document" in text, text
    assert text.endswith("This is turn 3 of the task. There is currently no new terminal output."), text
    # the reply itself stays in the conversation as the model's turn
    assert any(m["role"] == "assistant" and "I have finished" in json.dumps(m) for m in msgs[2])
    # turn 4: 8192 characters of the long output and the marker; the code
    # line that equals a delimiter reached Python intact
    text = user_text(msgs[3][-1])
    full = "".join("%d\n" % i for i in range(1, 5001))
    assert "\n$ seq 1 5000\n" + full[:8192] + "\n[...truncated, total %d bytes]\n[returncode=0]" % len(full) in text, text[:300]
    assert "\nENGISWEEP_PYTHON_0\n[returncode=3]" in text, text[-400:]
    # turn 5: the wait ran nothing
    assert user_text(msgs[4][-1]) == ("This is turn 5 of the task. "
                                      "There is currently no new terminal output."), msgs[4][-1]
    pe = [t for t in tr if t["ev"] == "parse_error"]
    assert len(pe) == 1 and pe[0]["turn"] == 2, pe
    kinds = [(t["turn"], t["kind"]) for t in tr if t["ev"] == "action"]
    assert kinds == [(1, "run"), (1, "python"), (1, "read_image"), (3, "run"), (3, "python"),
                     (4, "wait"), (5, "done")], kinds
    assert os.path.exists("out/artifacts/%s/tetra.stl" % e["cell"])

# the replay: the same actions, turns and verdict, nothing bought
rep = R.episodes("rep/results.h5")
assert len(rep) == 1, rep
r = rep[0]
assert r["outcome"] == "done" and r["success"] and r["turns"] == 5 and r["cost_usd"] == 0, r
tr = R.trace("rep/results.h5", r["cell"])
assert [(t["turn"], t["kind"]) for t in tr if t["ev"] == "action"] == kinds
assert [t["turn"] for t in tr if t["ev"] == "parse_error"] == [2]
print("engiworld ok")
PY
echo "ok"
