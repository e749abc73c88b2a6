# EngiWorld tasks (our own, in the benchmark's format) run end to end in a
# real guest of the tools image, in the guest's /home/user/Desktop: setup
# uploads and the launch and execute steps, the agent, the benchmark's
# evaluator (and the files tasks share, its prepare_command) uploaded after
# it stopped
# and judged by its True/False protocol. The reference (the task's
# ground_truth) passes, noop fails, and an evaluator that prints neither
# True nor False is a verifier failure, never a score.
. "$(dirname "$0")/../integration/lib.sh"
bash "$ENGI_SRC/tests/engiworld/make_tree.sh" ew
ENGI_QEMU_NO_BUILD=1 "$ENGISWEEP" run --backend qemu --agents reference,noop --retries 0 --quiet \
	--out r ew > run.log 2>&1 || { cat run.log; fail "the sweep failed"; }
PYTHONPATH="$ENGI_SRC/tests/integration" "$PY" - <<'PY'
import results as R
ep = {(e["task_id"].split("--")[0][:6] + "/" + e["task_id"].split("--")[3], e["model"]): e
      for e in R.episodes("r/results.h5")}
assert len(ep) == 18, sorted(ep)
ok = ep["single/task-01", "reference"]
assert ok["outcome"] == "done" and ok["success"] == 1 and ok["score"] == 1, ok
no = ep["single/task-01", "noop"]
assert no["outcome"] == "done" and no["success"] == 0 and no["score"] == 0, no
for m in ("reference", "noop"):
    e = ep["single/task-02", m]
    assert e["outcome"] == "infra_error" and e["infra"] == "verifier crashed", e
    assert "printed neither True nor False" in e["message"], e["message"]
import h5py
with h5py.File("r/results.h5", "r") as f:
    rows = f["assertions"][:]
names = {R.s(x["name"]): R.s(x["state"]) for x in rows if R.s(x["cell"]) == ok["cell"]}
assert names.get("evaluator") == "pass" and names.get("delivered:answer.txt") == "pass", names
vis = ep["vision/task-01", "reference"]
assert vis["outcome"] == "done" and vis["success"] == 1, vis
# the scored protocol: the evaluator's score.json is the quality
opt = ep["design/task-01", "reference"]
assert opt["outcome"] == "done" and opt["success"] == 1 and abs(opt["score"] - 0.7) < 1e-12, opt
opt0 = ep["design/task-01", "noop"]
assert opt0["outcome"] == "done" and opt0["success"] == 0 and opt0["score"] == 0, opt0
# a score file the agent delivered and the evaluator did not write: scored
# as the benchmark scores it, and said
forged = ep["design/task-02", "reference"]
assert abs(forged["score"] - 0.9) < 1e-12, forged
fa = {R.s(x["name"]): R.s(x["state"]) for x in rows if R.s(x["cell"]) == forged["cell"]}
assert fa.get("score_written_by_evaluator") == "fail", fa
oa = {R.s(x["name"]): R.s(x["state"]) for x in rows if R.s(x["cell"]) == opt["cell"]}
assert "score_written_by_evaluator" not in oa and oa.get("evaluator") == "pass", oa
# setup steps: the launch outlived its start (the evaluator saw its second
# line), the execute ran with the screen placeholders, its exit 7 ignored
st = ep["single/task-12", "reference"]
assert st["outcome"] == "done" and st["success"] == 1, st
assert ep["single/task-12", "noop"]["success"] == 0
ev = [e for e in R.trace("r/results.h5", st["cell"]) if e.get("ev") == "setup"]
assert [(e["kind"], e["exit"]) for e in ev] == [("launch", 0), ("run", 7), ("run", 0)], ev
assert ev[0]["output"].startswith("started ") and ev[2]["output"] == "960\n", ev
# a prepare_command and an evaluator module shared between tasks
assert ep["single/task-13", "reference"]["success"] == 1 and ep["single/task-13", "noop"]["success"] == 0
for m in ("reference", "noop"):
    assert ep["single/task-14", m]["infra"] == "verifier crashed", ep["single/task-14", m]
    assert ep["single/task-15", m]["infra"] == "verifier crashed", ep["single/task-15", m]
print("ok:", {k: (v["outcome"], v["score"]) for k, v in ep.items()})
PY

# the evaluator judged again in a fresh guest with only the artifacts
echo single-software-execution--cli--calculix--task-01--ubuntu > one.txt
ENGI_QEMU_NO_BUILD=1 "$ENGISWEEP" run --backend qemu --agents reference --retries 0 --quiet \
	--verify-in both --subset file:one.txt --out rb ew > both.log 2>&1 || { cat both.log; fail "--verify-in both"; }
PYTHONPATH="$ENGI_SRC/tests/integration" "$PY" - <<'PY'
import h5py
import results as R
(e,) = R.episodes("rb/results.h5")
assert e["success"] == 1 and e["verifier"] == "command@1+both", e
with h5py.File("rb/results.h5", "r") as f:
    a = {R.s(x["name"]): R.s(x["state"]) for x in f["assertions"][:]}
assert a.get("clean:evaluator") == "pass" and a.get("clean_agrees") == "pass", a
print("ok: the clean guest agrees")
PY
