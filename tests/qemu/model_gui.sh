# Language models (OpenAI and Anthropic APIs) drive a GUI task in a desktop
# guest: each sees the screen as PNG images (at the condition's
# screen_scale) in its requests, clicks into the terminal and types a
# command, which makes the deliverable. The guests' vCPUs are starved as on
# a loaded host (starve.py), which lost keystrokes ("cp tetra.tl") before
# input was paced by what the guest has taken.
. "$ENGI_SRC/tests/integration/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" src 1 0
"$PY" - <<'PY'
import json
t = json.load(open("src/tetra-1.json"))
tetra = [s for s in t["reference"] if "write" in s][0]["text"]
os_ = __import__("os")
os_.makedirs("suite", exist_ok=True)
open("suite/tetra.stl", "w").write(tetra)
t.update({"id": "gui-copy", "interface": "gui",
          "instruction": "In the terminal on screen, copy tetra.stl to out.stl.",
          "environment": {"image": "desktop", "memory_mb": 2048},
          "inputs": [{"host": "tetra.stl", "env": "tetra.stl"}],
          "deliverables": [{"path": "out.stl"}]})
t["verifier"]["file"] = "out.stl"
t["reference"] = [{"run": "cp tetra.stl out.stl"}, {"done": "copied"}]
t.pop("flawed", None)
json.dump(t, open("suite/gui-copy.json", "w"), indent=1)
# the shell in the xterm runs the copy, which in a guest under TCG on a loaded
# host takes seconds: the model waits for the file (up to 60 s) before it
# says done
# the xterm sits at native (80..1080, 60..660); at scale 0.6 its middle is (300, 200)
gui = [{"calls": [{"name": "computer", "args": {"action": "click", "x": 300, "y": 200}}]},
       {"calls": [{"name": "computer", "args": {"action": "type", "text": "cp tetra.stl out.stl\n"}},
                  {"name": "bash", "args": {"command":
                      "for i in $(seq 120); do [ -s out.stl ] && break; sleep 0.5; done; ls -l out.stl"}}]},
       {"calls": [{"name": "done", "args": {"summary": "copied"}}]}]
json.dump({"models": {"gui": gui}}, open("script.json", "w"))
PY
start_model_server script.json
cat > models.json <<JSON
{"models": [{"name": "oa", "provider": "openai", "base_url": "http://127.0.0.1:$MODEL_PORT/v1",
             "model": "gui", "timeout_s": 60},
            {"name": "an", "provider": "anthropic", "base_url": "http://127.0.0.1:$MODEL_PORT/v1",
             "model": "gui", "timeout_s": 60}]}
JSON
"$PY" "$ENGI_SRC/tests/qemu/starve.py" $$ 600 > starve.log 2>&1 &
starver=$!
trap 'kill $starver 2>/dev/null || true; stop_model_server' EXIT
"$ENGISWEEP" run --backend qemu --models models.json -c small:screen_scale=0.6 \
	--quiet --out out suite > run.log 2>&1 || { cat run.log; fail "sweep failed"; }
kill $starver
wait $starver || true
[ "$(grep -c '^starving' starve.log)" -ge 2 ] || { cat starve.log; fail "the guests were not starved"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import base64, struct
import results as R
eps = R.episodes("out/results.h5")
assert sorted(e["model"] for e in eps) == ["an", "oa"], eps
for e in eps:
    assert e["outcome"] == "done" and e["success"] == 1, e
    t = R.trace("out/results.h5", e["cell"])
    screens = [x for x in t if x["ev"] == "screen"]
    assert len(screens) == 3 and all(s["bytes"] > 0 for s in screens), screens
    sizes = []
    for x in t:
        if x["ev"] != "model_request":
            continue
        for m in x["body"]["messages"]:
            c = m["content"]
            for part in c if isinstance(c, list) else []:
                # tool results carry their own content list (Anthropic)
                parts = [part] + (part.get("content") if isinstance(part.get("content"), list) else [])
                for p in parts:
                    if p.get("type") == "image_url":
                        data = p["image_url"]["url"].split(",", 1)[1]
                    elif p.get("type") == "image":
                        data = p["source"]["data"]
                    else:
                        continue
                    png = base64.b64decode(data)
                    sizes.append(struct.unpack(">II", png[16:24]))
    assert sizes and all(s == (1152, 648) for s in sizes), (e["model"], sizes)
    print(e["model"], "screens in requests:", len(sizes), "sizes", set(sizes))
PY
echo ok
