# EngiWorld tasks (our own, in the benchmark's format) run end to end in a
# real guest of the tools image, in the guest's /home/user/Desktop: setup
# uploads, the agent, the benchmark's evaluator uploaded after it stopped
# and judged by its True/False protocol. The reference (the task's
# ground_truth) passes, noop fails, and an evaluator that prints neither
# True nor False is a verifier failure, never a score.
. "$(dirname "$0")/../integration/lib.sh"
bash "$ENGI_SRC/tests/engiworld/make_tree.sh" ew
ENGI_QEMU_NO_BUILD=1 "$ENGISWEEP" run --backend qemu --agents reference,noop --retries 0 --quiet \
	--out r ew > run.log 2>&1 || { cat run.log; fail "the sweep failed"; }
PYTHONPATH="$ENGI_SRC/tests/integration" "$PY" - <<'PY'
import results as R
ep = {(e["task_id"].split("--")[3], e["model"]): e for e in R.episodes("r/results.h5")}
assert len(ep) == 4, sorted(ep)
ok = ep["task-01", "reference"]
assert ok["outcome"] == "done" and ok["success"] == 1 and ok["score"] == 1, ok
no = ep["task-01", "noop"]
assert no["outcome"] == "done" and no["success"] == 0 and no["score"] == 0, no
for m in ("reference", "noop"):
    e = ep["task-02", m]
    assert e["outcome"] == "infra_error" and e["infra"] == "verifier crashed", e
    assert "printed neither True nor False" in e["message"], e["message"]
import h5py
with h5py.File("r/results.h5", "r") as f:
    rows = f["assertions"][:]
names = {R.s(x["name"]): R.s(x["state"]) for x in rows if R.s(x["cell"]) == ok["cell"]}
assert names.get("evaluator") == "pass" and names.get("delivered:answer.txt") == "pass", names
print("ok:", {k: (v["outcome"], v["score"]) for k, v in ep.items()})
PY
