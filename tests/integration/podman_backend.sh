# The podman backend on an image built here (podman import of a busybox
# root: no registry, no network): the Harbor tasks of tests/harbor run in
# containers of it (the reference scores 1, noop 0); a native task's agent
# there cannot hand out a link to a file of the container as a deliverable,
# a command past its limit is stopped, our environment (a variable holding
# a made-up key) is not the container's, and nothing of an episode's
# container is left after the sweep; an image podman does not have is
# refused by name before anything runs. Where podman cannot start
# containers on this machine at all (inspect says why), the sweep must be
# refused before it starts with that reason, and the test says so loudly.
. "$(dirname "$0")/lib.sh"
H="$ENGI_SRC/tests/harbor"
command -v podman > /dev/null || fail "podman is not installed (scripts/deps installs it)"
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "install ok installed" \
	|| fail "no static busybox (Debian's busybox-static, scripts/deps installs it)"
IMG="engisweep-test-busybox-$$"
trap 'podman rmi -f "$IMG" > /dev/null 2>&1 || true' EXIT
mkdir -p root/bin root/tmp root/root
cp /bin/busybox root/bin/busybox
/bin/busybox --list | while read -r a; do [ "$a" = busybox ] || ln -s busybox "root/bin/$a"; done
chmod 1777 root/tmp
tar -C root -c . | podman import - "$IMG" > import.log 2>&1 || { cat import.log; fail "podman import"; }
echo "{\"*\": \"$IMG\"}" > images.json

# podman on this machine: the sweep runs, or is refused with the reason
rc=0
ENGI_TEST_KEY=sk-engisweep-canary-0451 "$ENGISWEEP" run "$H/tasks" --backend podman \
	--images images.json --deliverables "$H/deliverables.json" --agents reference,noop \
	--quiet --out out > run.log 2>&1 || rc=$?
if grep -q "podman cannot start containers here" run.log; then
	[ "$rc" -eq 2 ] || { cat run.log; fail "podman unusable: exit $rc, expected 2"; }
	[ ! -e out/results.h5 ] || fail "a refused sweep left results"
	echo "NOTE: podman cannot start containers on this machine; only the refusal was tested:"
	cat run.log
	echo ok
	exit 0
fi
[ "$rc" -eq 0 ] || { cat run.log; fail "harbor tasks under podman: exit $rc"; }
"$PY" - <<'PY' || fail "harbor scores under podman"
import h5py
got = {(r["task_id"].decode(), r["model"].decode()): (r["outcome"].decode(), float(r["score"]))
       for r in h5py.File("out/results.h5", "r")["episodes"][:]}
want = {("sum-numbers", "reference"): 1.0, ("word-count", "reference"): 1.0,
        ("sum-numbers", "noop"): 0.0, ("word-count", "noop"): 0.0}
for k, s in want.items():
    assert got[k][0] == "done" and abs(got[k][1] - s) < 1e-9, (k, got[k])
PY

# a native task: a link handed out, a command past its limit, our variables
mkdir suite
"$PY" - <<'PY'
import json
task = {
    "id": "contained", "domain": "CAD", "software": ["sh"], "type": "single", "interface": "cli",
    "instruction": "Deliver env.txt.",
    "environment": {"image": "IMAGE", "workdir": "/job", "folders": ["/logs"]},
    "deliverables": [{"path": "env.txt"}, {"path": "passwd.txt", "required": False},
                     {"path": "/logs/big.bin", "max_bytes": 1000, "required": False}],
    "verifier": {"kind": "command", "file": "env.txt", "run": "grep -q PATH= env.txt",
                 "criteria": [{"name": "env_listed", "check": "exit_status", "equals": 0}]},
    "reference": [
        {"run": "echo root:x:0:0 > /etc/passwd.copy; ln -s /etc/passwd passwd.txt"},
        {"run": "head -c 5000 /dev/zero > /logs/big.bin"},
        {"run": "sleep 60; echo never"},
        {"run": "(setsid sleep 300 &) ; env > env.txt"},
    ],
}
json.dump(task, open("suite/contained.json", "w"), indent=1)
PY
sed -i "s/\"IMAGE\"/\"$IMG\"/" suite/contained.json
ENGI_TEST_KEY=sk-engisweep-canary-0451 "$ENGISWEEP" run suite --backend podman --cmd-timeout 5 \
	--quiet --out out2 > run2.log 2>&1 || { cat run2.log; fail "native task under podman"; }
cell=$("$PY" -c "
import h5py
print(h5py.File('out2/results.h5')['episodes'][0]['cell'].decode())")
[ -s "out2/artifacts/$cell/env.txt" ] || fail "env.txt was not delivered"
grep -q "PWD=/job" "out2/artifacts/$cell/env.txt" || fail "the command did not run in the task's workdir"
! grep -q "sk-engisweep-canary" "out2/artifacts/$cell/env.txt" || fail "our environment reached the container"
[ ! -e "out2/artifacts/$cell/passwd.txt" ] || fail "a link was copied out as a deliverable"
[ ! -e "out2/artifacts/$cell/logs/big.bin" ] || fail "a deliverable over its cap was copied"
"$PY" - "$cell" <<'PY' || fail "verdict under podman"
import h5py, sys
f = h5py.File("out2/results.h5", "r")
e = f["episodes"][0]
assert e["outcome"] == b"done" and e["success"], (e["outcome"], e["message"])
notes = {r["path"].decode(): r["note"].decode() for r in f["artifacts"][:]}
assert "link" in notes.get("passwd.txt", ""), notes
PY
"$PY" - <<'PY' || fail "the trace"
import h5py, subprocess
f = h5py.File("out2/results.h5", "r")
cell = f["episodes"][0]["cell"].decode()
t = subprocess.run(["zstd", "-dc"], input=bytes(f["traces"][cell][:]), capture_output=True).stdout.decode()
assert '"timed_out":true' in t, "the sleep 60 step did not time out"
assert "sk-engisweep-canary" not in t
PY
left=$(podman ps -a --format '{{.Names}}' | grep -c "^engisweep-" || true)
[ "$left" -eq 0 ] || { podman ps -a; fail "$left episode containers are left"; }

# an image podman does not have: refused before anything runs
sed -i "s/\"$IMG\"/\"engisweep-no-such-image\"/" suite/contained.json
expect_rc 2 "$ENGISWEEP" run suite --backend podman --quiet --out out3 > run3.log 2>&1
grep -q "podman has no image 'engisweep-no-such-image' here" run3.log || { cat run3.log; fail "missing image message"; }
[ ! -e out3/results.h5 ] || fail "a refused sweep left results"
echo ok
