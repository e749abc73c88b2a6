# The demo suite in real guests of the tools image: every reference solution
# succeeds, every flawed variant and the empty delivery fail (validate), and
# a sweep of one task records its episodes with guest timings.
. "$ENGI_SRC/tests/integration/lib.sh"
start=$(date +%s)
"$ENGISWEEP" validate --backend qemu --jobs 2 --keep --out v "$ENGI_SRC/tasks/demo"
echo "validate in qemu guests: $(( $(date +%s) - start )) s"
"$ENGISWEEP" run --backend qemu --quiet --out r -a reference,flawed:no-bolt-holes \
	"$ENGI_SRC/tasks/demo/flange.json"
PYTHONPATH="$ENGI_SRC/tests/integration" "$ENGI_PYTHON" - <<'PY'
import results as R
ep = {R.s(e["model"]): e for e in R.episodes("r/results.h5")}
assert ep["reference"]["success"] == 1, ep["reference"]
assert ep["flawed:no-bolt-holes"]["success"] == 0, ep["flawed:no-bolt-holes"]
for e in ep.values():
    t = R.trace("r/results.h5", R.s(e["cell"]))
    started = [x for x in t if x["ev"] == "env_started"]
    assert started, t
    print(R.s(e["model"]), "guest ready in %.2f s," % started[0]["seconds"], "env %.1f s" % e["env_s"])
PY
pgrep -f "qemu-system.*$T/" >/dev/null && fail "a QEMU process outlived the sweep"
exit 0
