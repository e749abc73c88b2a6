# QEMU killed in the middle of an episode: the attempt ends as env_crash,
# the episode is retried in a fresh guest, the sweep completes, and no QEMU
# process or overlay is left behind.
. "$ENGI_SRC/tests/integration/lib.sh"
bash "$ENGI_SRC/tests/integration/make_suite.sh" suite 1 6
"$ENGISWEEP" run --backend qemu --quiet --out r suite &
sweep=$!
# the first guest of this sweep: its overlay lives under r/work
for _ in $(seq 600); do
	pid=$(pgrep -f "qemu-system.*$T/r/work" | head -1 || true)
	[ -n "$pid" ] && break
	sleep 0.1
done
[ -n "$pid" ] || fail "no guest started"
sleep 3
kill -KILL "$pid"
wait "$sweep" || fail "the sweep failed after a guest crash"
pgrep -f "qemu-system.*$T/r/work" >/dev/null && fail "a QEMU process outlived the sweep"
[ ! -d r/work ] || [ -z "$(ls -A r/work)" ] || fail "overlays left: $(ls -A r/work)"
PYTHONPATH="$ENGI_SRC/tests/integration" "$ENGI_PYTHON" - <<'PY'
import results as R
ep = R.episodes("r/results.h5")
assert len(ep) == 1, ep
e = ep[0]
assert e["attempts"] == 2, e
assert e["success"] == 1 and R.s(e["outcome"]) == "done", e
t = R.trace("r/results.h5", R.s(e["cell"]))
crash = [x for x in t if x["ev"] == "end" and x["outcome"] == "env_crash"]
assert crash and "QEMU exited" in crash[0]["message"], crash
assert any(x["ev"] == "retry" for x in t), t
print("crash:", crash[0]["message"])
PY
