# run --command-policy FILE: the first rule whose pattern matches a command
# refuses it before it runs. The reference agent's `run` step that writes
# the deliverable is refused (no deliverable, no success, a policy_reject
# event with the rule and its message, no run action); a model in the
# engiworld action space is told "[bash action rejected by command policy:
# MESSAGE]" with returncode -2 (and the same for python), a model with
# native tools gets the message in the tool result, and neither command ran
# (the deliverable they would have written is absent). A bad policy file is
# refused with exit status 2, naming the file and the JSON pointer, before
# any output folder exists.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 1 0
"$PY" - <<'PY'
import json, os
cmd = os.environ["TETRA_CMD"]
t = json.load(open("suite/tetra-1.json"))
t["reference"] = [{"run": "echo allowed"}, {"run": cmd}]
json.dump(t, open("suite/tetra-1.json", "w"))
json.dump({"rules": [
    {"pattern": "\\bcurl\\b", "message": "no network from the terminal"},
    {"pattern": "import +socket", "message": "no sockets"},
    {"pattern": "> *tetra\\.stl", "message": "write the mesh with the CAD program"},
]}, open("policy.json", "w"))
net = "curl -s http://127.0.0.1:9/; " + cmd
sock = "import socket\nopen('tetra.stl', 'w').write('solid t\\nendsolid t\\n')"
ew = [{"text": "<response><reflection>fetch</reflection>"
               "<action type=\"bash\"><![CDATA[%s]]></action>"
               "<action type=\"python\"><![CDATA[%s]]></action>"
               "<action type=\"bash\"><![CDATA[echo still here]]></action></response>" % (net, sock)},
      {"text": "<response><reflection>stop</reflection><action type=\"done\"/></response>"}]
nat = [{"calls": [{"name": "bash", "args": {"command": net}}]},
       {"calls": [{"name": "done", "args": {"summary": "tried"}}]}]
json.dump({"models": {"ew": ew, "nat": nat}}, open("script.json", "w"))
PY

# the scripted reference agent
"$ENGISWEEP" run --agents reference --command-policy policy.json --quiet --out ref suite \
	> ref.log 2>&1 || { cat ref.log; fail "the reference sweep failed"; }

# models
start_model_server script.json
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > models.json <<JSON
{"models": [
  {"name": "ew", "provider": "openai", "base_url": "$U", "model": "ew", "tools": "engiworld",
   "timeout_s": 30},
  {"name": "nat", "provider": "anthropic", "base_url": "$U", "model": "nat", "timeout_s": 30}]}
JSON
"$ENGISWEEP" run --models models.json --command-policy policy.json --quiet --out mod suite \
	> mod.log 2>&1 || { cat mod.log; fail "the model sweep failed"; }
stop_model_server

PYTHONPATH="$HERE" "$PY" - <<'PY'
import json, os
import results as R

(e,) = R.episodes("ref/results.h5")
assert e["outcome"] == "done" and not e["success"], e
tr = R.trace("ref/results.h5", e["cell"])
rej = [t for t in tr if t["ev"] == "policy_reject"]
assert len(rej) == 1, rej
assert rej[0]["rule"] == 2 and rej[0]["message"] == "write the mesh with the CAD program", rej
assert rej[0]["kind"] == "run" and "tetra.stl" in rej[0]["command"], rej
runs = [t["command"] for t in tr if t["ev"] == "action" and t["kind"] == "run"]
assert runs == ["echo allowed"], runs
assert not os.path.exists("ref/artifacts/%s/tetra.stl" % e["cell"])

eps = {e["model"]: e for e in R.episodes("mod/results.h5")}
for name, e in eps.items():
    assert e["outcome"] == "done" and not e["success"], e
    assert not os.path.exists("mod/artifacts/%s/tetra.stl" % e["cell"]), name
    tr = R.trace("mod/results.h5", e["cell"])
    rej = [(t["kind"], t["rule"]) for t in tr if t["ev"] == "policy_reject"]
    bodies = [t["body"] for t in tr if t["ev"] == "model_request"]
    if name == "ew":
        assert rej == [("run", 0), ("python", 1)], rej
        ran = [t["command"] for t in tr if t["ev"] == "action" and t["kind"] == "run"]
        assert ran == ["echo still here"], ran
        text = bodies[1]["messages"][-1]["content"]
        assert ("$ curl -s http://127.0.0.1:9/; printf" in text and
                "\n[runtime error]\n[bash action rejected by command policy: no network from the "
                "terminal]\n[returncode=-2]\n" in text), text
        assert ("\n$ [python]\nimport socket\n" in text and
                "[runtime error]\n[python action rejected by command policy: no sockets]\n"
                "[returncode=-2]\n" in text), text
        assert "\n$ echo still here\nstill here\n[returncode=0]\n" in text, text
    else:
        assert rej == [("run", 0)], rej
        results = [b for m in bodies[1]["messages"] if m["role"] == "user"
                   for b in m["content"] if b.get("type") == "tool_result"]
        assert len(results) == 1, results
        said = results[0]["content"][0]["text"]
        assert said == ("exit code: -2 (not run: the command policy rejects it: no network "
                        "from the terminal)"), said
print("policy ok")
PY

# bad policy files: exit status 2, the file and the pointer named, nothing made
refused() { # FILE-CONTENT EXPECTED
	printf '%s' "$1" > bad.json
	local rc=0
	"$ENGISWEEP" run --agents reference --command-policy bad.json --quiet --out never suite \
		> bad.log 2>&1 || rc=$?
	[ "$rc" = 2 ] || { cat bad.log; fail "a bad policy exited $rc, not 2"; }
	grep -qF "bad.json: $2" bad.log || { cat bad.log; fail "the refusal does not say 'bad.json: $2'"; }
	[ ! -e never ] || fail "a refused policy left its output folder"
}
refused '{"rules": [{"pattern": "(", "message": "x"}]}' \
	"/rules/0/pattern: not a POSIX extended regular expression"
refused '{"rules": [{"pattern": "a", "message": "m"}, {"pattern": "b"}]}' "/rules/1/message: missing"
refused '{"rules": [{"pattern": "", "message": "m"}]}' "/rules/0/pattern: expected a non-empty"
refused '{"rules": [{"pattern": "a", "message": "m", "why": 1}]}' "/rules/0/why: unknown key"
refused '{"rule": []}' "/rule: unknown key"
refused '{"rules": {}}' "/rules: expected an array"
refused '{"rules": [1]}' "/rules/0: expected an object"
refused 'not json' "not JSON"
refused "{\"rules\": [$(for i in $(seq 257); do printf '{"pattern": "a", "message": "m"},'; done | sed 's/,$//')]}" \
	"/rules: 257 rules, at most 256"
rc=0
"$ENGISWEEP" run --agents reference --command-policy missing.json --quiet --out never suite \
	> miss.log 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -qF "missing.json" miss.log || { cat miss.log; fail "a missing policy file: exit $rc"; }
[ ! -e never ] || fail "a missing policy left its output folder"
# validate takes no policy
says "$ENGISWEEP" validate --command-policy policy.json suite | grep -qF "belongs to run" \
	|| fail "validate accepted --command-policy"
echo "ok"
