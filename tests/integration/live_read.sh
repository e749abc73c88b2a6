# The h5py lines of docs/outputs.md, run as they stand, read results.h5 while the sweep
# writes it, with no HDF5 variable in the environment: every read succeeds
# and the episodes grow. An h5py File held open across several of the
# writer's flushes neither stops the sweep nor sees its copy change.
. "$(dirname "$0")/lib.sh"
# 40 reference episodes of 0.5 s on 2 slots: the sweep runs for 10 s or more
bash "$HERE/make_suite.sh" suite 10 0.5
CELLS=40

# the docs' block, only the results path changed
"$PY" - "$ENGI_SRC/docs/outputs.md" > readme_lines.py <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"Loading the episodes with Debian's python3-h5py alone.*?```python\n(.*?)```",
              text, re.S)
assert m, "the h5py lines of docs/outputs.md are gone"
code = m.group(1)
assert code.count('"results/x/results.h5"') == 1, code
print(code.replace('"results/x/results.h5"', '"s/results.h5"'), end="")
PY
grep -q 'h5py.File("s/results.h5", "r")' readme_lines.py || fail "unexpected lines in docs/outputs.md"

"$ENGISWEEP" run --jobs 2 --trials 4 --quiet --out s suite > run.log 2>&1 &
sweep=$!

# the holder opens results.h5 once and keeps it open for 6 s: three
# publications at least, and their flushes
"$PY" - > holder.log 2>&1 <<'PY' &
import os, time
import h5py
end = time.time() + 60
while not os.path.exists("s/results.h5") and time.time() < end:
    time.sleep(0.05)
while True:                             # hold a copy with episodes in it
    f = h5py.File("s/results.h5", "r")
    first = f["episodes"][:]
    if len(first) or time.time() > end:
        break
    f.close()
    time.sleep(0.1)
seen = []
t = time.time()
while time.time() - t < 6:
    ep = f["episodes"][:]
    assert (ep == first).all(), "the copy held open changed under its reader"
    seen.append(len(ep))
    time.sleep(0.25)
# meanwhile the sweep goes on: a later copy has more (on a loaded host the
# next publication may come after the 6 s; the copy stays held until then)
t = time.time()
while True:
    with h5py.File("s/results.h5", "r") as g:
        now = g["episodes"].shape[0]
    if now > len(first) or time.time() - t > 60:
        break
    time.sleep(0.25)
assert now > len(first), (now, len(first))
assert (f["episodes"][:] == first).all(), "the copy held open changed under its reader"
print("held", len(first), "rows for 6 s,", len(seen), "reads; meanwhile", now, "published")
f.close()
PY
holder=$!

"$PY" - "$sweep" "$CELLS" <<'PY' || { kill "$sweep" 2>/dev/null; cat run.log; fail "the lines of docs/outputs.md failed during the sweep"; }
import os, re, subprocess, sys, time
pid, cells = int(sys.argv[1]), int(sys.argv[2])
env = {k: v for k, v in os.environ.items() if not k.startswith("HDF5")}
end = time.time() + 60
while not os.path.exists("s/results.h5"):
    assert time.time() < end, "no results.h5"
    time.sleep(0.05)

def running():
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return open(f"/proc/{pid}/stat").read().split()[2] != "Z"

counts = []
while running():
    p = subprocess.run([sys.executable, "readme_lines.py"], env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    m = re.match(r"(\d+) episodes; fields: cell, ", p.stdout)
    assert m, p.stdout
    counts.append(int(m.group(1)))
    time.sleep(0.2)
print("episodes seen during the sweep:", counts)
assert counts == sorted(counts), "the episodes went backwards"
mid = sorted({n for n in counts if 0 < n < cells})
assert len(mid) >= 3, f"too few distinct counts seen mid-sweep: {mid}"
PY
wait "$sweep" || { cat run.log; fail "the sweep failed"; }
wait "$holder" || { cat holder.log; fail "the held-open reader failed"; }
cat holder.log

# every cell, and only the finished file is left
env -u HDF5_USE_FILE_LOCKING "$PY" readme_lines.py > final.txt
grep -q "^$CELLS episodes" final.txt || { cat final.txt; fail "not every cell is in results.h5"; }
grep -q "reference mean score: 1.0" final.txt || { cat final.txt; fail "wrong scores"; }
[ ! -e s/results.h5.part ] && [ ! -e s/results.h5.copy ] || fail "working files left behind"
echo "ok"
