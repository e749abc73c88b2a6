# A task's own folders (tasks/SCHEMA.md `environment.folders`) on the local
# backend: /logs and /solution exist in the sandbox, empty and writable
# besides the working folder; an input put at /solution/x.txt is read there
# by a reference step that writes /logs/out.txt, a deliverable copied out
# (to artifacts/CELL/logs/out.txt) and judged by a command verifier in the
# same sandbox; an absolute path outside the folders (/srv/x) cannot be
# written, nor can the system folders; links planted in a folder are not
# followed when deliverables are copied out; the noop agent fails. Without the
# sandbox the task is refused before the sweep (exit 2, no output folder),
# as is a task with folders on a backend that cannot make them (simulate).
. "$(dirname "$0")/lib.sh"
mkdir -p suite/files
printf 'seed\n' > suite/files/x.txt
cat > suite/folders.json <<'JSON'
{
  "id": "folders", "domain": "CAE", "software": ["sh"], "type": "single", "interface": "cli",
  "instruction": "Write /solution/x.txt upper-cased to /logs/out.txt.",
  "environment": {"folders": ["/logs", "/solution"]},
  "inputs": [{"host": "files/x.txt", "env": "/solution/x.txt", "protected": true}],
  "deliverables": [{"path": "/logs/out.txt"},
                   {"path": "/logs/probe.txt", "required": false},
                   {"path": "/solution/sub/note.txt", "required": false},
                   {"path": "/logs/link.txt", "required": false},
                   {"path": "/solution/up/etc/hostname", "required": false}],
  "verifier": {"kind": "command", "file": "/logs/out.txt", "run": "cat /logs/out.txt",
               "criteria": [{"name": "upper", "check": "output_equals", "text": "SEED\n"}]},
  "reference": [
    {"run": "l=$(ls -A /logs); s=$(ls -A /solution); printf 'logs=[%s]\\nsolution=[%s]\\ncwd=%s\\n' \"$l\" \"$s\" \"$(pwd)\" > /logs/probe.txt"},
    {"run": "echo escaped > /srv/x; echo escaped > /usr/x; echo escaped > /x; test ! -e /srv/x && test ! -e /usr/x && test ! -e /x && echo outside-refused >> /logs/probe.txt"},
    {"write": "/solution/sub/note.txt", "text": "a note\n"},
    {"run": "ln -s /etc/hostname /logs/link.txt && ln -s / /solution/up"},
    {"run": "tr a-z A-Z < /solution/x.txt > /logs/out.txt"}
  ]
}
JSON

"$ENGISWEEP" inspect | grep -q "local sandbox: available" || fail "inspect: no local sandbox here"
"$ENGISWEEP" run --agents reference,noop --retries 0 --quiet --out r suite > run.log 2>&1 \
	|| { cat run.log; fail "the sweep failed"; }
[ ! -e /srv/x ] || fail "a write to /srv/x in the sandbox reached the host"
PYTHONPATH="$HERE" "$PY" - <<'PY'
import os
import results as R
ep = {e["model"]: e for e in R.episodes("r/results.h5")}
ref, noop = ep["reference"], ep["noop"]
assert ref["outcome"] == "done" and ref["success"] == 1, ref
assert noop["success"] == 0, noop
art = "r/artifacts/" + ref["cell"]
assert open(art + "/logs/out.txt").read() == "SEED\n", os.listdir(art)
assert open(art + "/solution/sub/note.txt").read() == "a note\n"
probe = open(art + "/logs/probe.txt").read().splitlines()
# both folders start empty but for the input put there, the cwd is /work
assert probe[:3] == ["logs=[]", "solution=[x.txt]", "cwd=/work"], probe
assert probe[3:] == ["outside-refused"], probe
trace = R.trace("r/results.h5", ref["cell"])
out = "".join(o.get("output", "") for o in trace if o["ev"] == "observation")
assert "cannot create /srv/x" in out, out
assert "cannot create /usr/x: Read-only file system" in out, out
assert "cannot create /x: Read-only file system" in out, out
# links the agent plants in a folder are not followed when copying out
notes = {a["path"]: a["note"] for a in trace if a["ev"] == "artifact"}
assert notes["/logs/link.txt"] == "cannot open '/logs/link.txt': it is a symbolic link", notes
assert notes["/solution/up/etc/hostname"].startswith(
    "cannot open folder 'up' of '/solution/up/etc/hostname': not a plain folder"), notes
assert not os.path.lexists(art + "/logs/link.txt")
assert not os.path.lexists(art + "/solution/up/etc/hostname")
print("ok: the folders exist in the sandbox, the deliverable in one was copied and judged")
PY

# without the sandbox: refused before the sweep, like a task's workdir
set +e
ENGI_BWRAP=/nonexistent/bwrap "$ENGISWEEP" run --agents reference --out r2 suite > run2.log 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || { cat run2.log; fail "a sweep without the sandbox exited $rc, not 2"; }
grep -q "the task's folder '/logs' is a guest path, which the local backend gives only inside its sandbox" run2.log \
	|| { cat run2.log; fail "no reason given"; }
[ ! -e r2 ] || fail "the refused sweep left an output folder"

# a backend without the capability refuses it too
set +e
"$ENGISWEEP" run --backend simulate --agents reference --out r3 suite > run3.log 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || { cat run3.log; fail "the simulate backend exited $rc, not 2"; }
grep -q "backend 'simulate' cannot give an episode the folder '/logs' the task needs" run3.log \
	|| { cat run3.log; fail "the simulate backend did not say why"; }
[ ! -e r3 ] || fail "the refused sweep left an output folder"
echo ok
