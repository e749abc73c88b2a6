# The engiworld task source: the benchmark's own task files (the subset in
# ../shared/benchmarks/engiworld) each load or are refused with a named
# reason, counted; a tree of our own tasks in the benchmark's format loads
# what engisweep runs and refuses one task per reason; a sweep of it on a
# backend without guests is refused before anything runs.
. "$(dirname "$0")/lib.sh"
SHARED=$ENGI_SRC/../shared/benchmarks/engiworld
[ -f "$SHARED/task/taxonomy.json" ] || fail "the benchmark's task files are not at $SHARED"

# (inspect exits 1 when some tasks are refused)
expect_rc 1 "$ENGISWEEP" inspect "$SHARED" > shared.txt 2>&1
"$PY" - shared.txt <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert "source: engiworld (detected)" in text, text
m = re.search(r"tasks: (\d+) loaded, (\d+) refused", text)
assert m and (int(m[1]), int(m[2])) == (0, 151), m and m.group(0)
reasons = dict((r.strip(), int(n)) for n, r in re.findall(r"^  (\d+) +(.+)$", text, re.M))
# the evaluators (eval.py) and many inputs are not published with the
# task files: those tasks name what is missing, after every other check
want = {"windows guest": 35, "no image for the snapshot": 58,
        "evaluator not supported": 1, "no artifact paths": 2,
        "evaluator file missing": 28, "input file missing": 27}
assert reasons == want, reasons
assert sum(want.values()) == 151
# every refusal names its file and what in it
lines = [l for l in text.splitlines() if l.startswith("  /") and ".json: " in l]
assert len(lines) == 151, len(lines)
assert any("calculix/task-01/task-01.json: /evaluator/postconfig/0/parameters/files/0: "
           "'task-01/eval.py' is not in the task tree" in l for l in lines)
# launch and execute steps translate: none is refused for its setup
assert not any("setup step" in l for l in lines)
# launch and execute steps, prepare_command and files shared between tasks
# translate: the tasks that have them are refused for what is missing
print("ok: the benchmark's 151 task files: 0 loaded, 151 refused by 6 reasons")
PY

# --images names images for snapshots engisweep has none for
printf '{"LibreCAD2.2.0.2": "tools", "FreeCAD0.21.2": "tools"}' > images.json
expect_rc 1 "$ENGISWEEP" inspect --images images.json "$SHARED" > mapped.txt 2>&1
grep -q "^  31 *no image for the snapshot" mapped.txt || { cat mapped.txt | head -20; fail "--images did not map the snapshots"; }
printf '{"CalculiX-2.21": "/srv/CalculiX-2.21.qcow2"}' > qcow.json
expect_rc 2 "$ENGISWEEP" run --images qcow.json --out r-qcow "$SHARED" > qcow.log 2>&1
grep -q "qcow.json: /CalculiX-2.21: '/srv/CalculiX-2.21.qcow2': the benchmark's own qcow2 images are not supported yet" qcow.log \
	|| { cat qcow.log; fail "a qcow2 path in --images was not refused"; }
[ ! -e r-qcow ] || fail "a refused --images left an output folder"

bash "$ENGI_SRC/tests/engiworld/make_tree.sh" ew
expect_rc 1 "$ENGISWEEP" inspect ew > ew.txt 2>&1
expect_rc 1 "$ENGISWEEP" inspect --source engiworld ew/task > ew2.txt 2>&1
"$PY" - ew.txt ew2.txt <<'PY'
import re, sys
for f in sys.argv[1:]:
    text = open(f).read()
    assert re.search(r"tasks: 9 loaded, 9 refused", text), text
    reasons = dict((r.strip(), int(n)) for n, r in re.findall(r"^  (\d+) +(.+)$", text, re.M))
    assert reasons == {"windows guest": 1, "setup step not supported": 1, "input file missing": 1,
                       "file outside the tree": 1, "evaluator not supported": 2,
                       "guest path outside the Desktop": 1, "id does not match its folder": 1,
                       "no artifact paths": 1}, reasons
print("ok: our tree: 9 loaded, one refusal per reason")
PY

# the local backend gives the guest's Desktop only inside its sandbox: the
# tasks run there (the evaluator as the benchmark runs it), and without a
# sandbox the sweep is refused before any output exists; a task with a
# launch step needs a guest: refused for this backend, named, the rest run
"$ENGISWEEP" run --agents reference,noop --retries 0 --out r ew > run.log 2>&1 \
	|| { cat run.log; fail "the sweep on the local backend failed"; }
grep -q "calculix/task-12/task-12.json: backend 'local' cannot leave a command running in the background" run.log \
	|| { cat run.log; fail "the launch task was not named as refused for the local backend"; }
grep -q "8 tasks run, 10 refused: 1 windows guest.*, 1 backend cannot run it" run.log || { cat run.log; fail "no refusal summary"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
ep = {(e["task_id"].split("--")[3], e["task_id"].split("--")[0][:6], e["model"]): e
      for e in R.episodes("r/results.h5")}
assert len(ep) == 16, sorted(ep)
assert ep["task-01", "single", "reference"]["success"] == 1
# a shared evaluator module and a prepare_command: the reference passes
assert ep["task-13", "single", "reference"]["success"] == 1
assert ep["task-13", "single", "noop"]["success"] == 0
# what the runtime takes for the evaluator's own failure is never a verdict
for m in ("reference", "noop"):
    e14, e15 = ep["task-14", "single", m], ep["task-15", "single", m]
    assert e14["infra"] == "verifier crashed" and "evaluator dependency error: ModuleNotFoundError" in e14["message"], e14
    assert e15["infra"] == "verifier crashed" and "exit status 1 with a traceback" in e15["message"], e15
assert ep["task-01", "single", "noop"]["success"] == 0
assert ep["task-02", "single", "reference"]["infra"] == "verifier crashed"
assert abs(ep["task-01", "design", "reference"]["score"] - 0.7) < 1e-12
import h5py, json
with h5py.File("r/results.h5", "r") as f:
    cfg = json.loads(f.attrs["config"])
assert cfg["suite_source"] == "engiworld" and cfg["suite_refused"] == 10, cfg
assert cfg["suite_refused_reasons"]["backend cannot run it"] == 1, cfg
assert cfg["suite_refused_reasons"]["windows guest"] == 1, cfg
print("ok: the local backend runs the tree in its sandbox")
PY
# the report names the refused tasks beside its denominator
"$ENGISWEEP" report --out-prefix rep r/results.h5 > rep.txt 2>&1 || { cat rep.txt; fail "report"; }
grep -q "Not in /tasks: 10 more tasks of the suite (source engiworld) that engisweep refused to run, never planned and in no denominator: 1 backend cannot run it, 2 evaluator not supported," rep.txt \
	|| { cat rep.txt; fail "the report does not count the refused tasks"; }
grep -q '"suite_refused": {"tasks": 10, "source": "engiworld", "reasons": "1 backend cannot run it, ' rep.json \
	|| fail "report.json does not count the refused tasks"
set +e
ENGI_BWRAP=/nonexistent/bwrap "$ENGISWEEP" run --agents reference --out r2 ew > run2.log 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] || { cat run2.log; fail "a sweep without the sandbox exited $rc, not 2"; }
grep -q "working folder '/home/user/Desktop' is a guest path, which the local backend gives only inside its sandbox" run2.log \
	|| { cat run2.log; fail "no reason given"; }
[ ! -e r2 ] || fail "the refused sweep left an output folder"
echo ok

# the same tree as checked out before the categories' rename (earlier
# folder names and ids): the same tasks load, under their current ids, so
# the current splits select them; the oldest layout is refused by name
mkdir -p old && cp -r ew/task old/
for m in single-software-execution:single-software design-optimization:quantitative-design \
	vision-guided-modeling:image-based-modeling; do
	now=${m%%:*} was=${m##*:}
	mv "old/task/$now" "old/task/$was"
	find "old/task/$was" -name 'task-*.json' -exec sed -i "s/\"id\": \"$now--/\"id\": \"$was--/" {} +
done
grep -rq '"id": "single-software--cli--calculix--task-01--ubuntu"' old/task/single-software || fail "the old tree was not made"
expect_rc 1 "$ENGISWEEP" inspect old > old.txt 2>&1
grep -q "tasks: 9 loaded, 9 refused" old.txt || { cat old.txt; fail "the earlier layout did not load as the current one"; }
"$ENGISWEEP" plan --subset file:ew/task/splits/two.txt old > plan-old.txt 2>&1 || { cat plan-old.txt; fail "plan of the old tree"; }
grep -q "2 tasks x 1 models" plan-old.txt || { cat plan-old.txt; fail "the current ids do not select the old tree's tasks"; }
mkdir -p oldest/task/task-c/calculix && echo '{}' > oldest/task/taxonomy.json
expect_rc 2 "$ENGISWEEP" inspect oldest > oldest.txt 2>&1
grep -q "oldest layout (task/task-c/<software>/), which engisweep does not read" oldest.txt || { cat oldest.txt; fail "the oldest layout was not named"; }
echo "ok: the earlier layout loads under the current ids"

# the benchmark's splits: --subset file: keeps the listed ids; ids that did
# not load are counted when the source refused some
"$ENGISWEEP" plan --subset file:ew/task/splits/two.txt ew > plan.txt 2>&1 || { cat plan.txt; fail "plan --subset file:"; }
grep -q "2 tasks x 1 models" plan.txt || { cat plan.txt; fail "the split did not keep its 2 tasks"; }
printf '# a comment\n\nsingle-software-execution--cli--calculix--task-01--ubuntu\r\nno-such-task\n' > split.txt
"$ENGISWEEP" plan --subset file:split.txt ew > plan2.txt 2>&1 || { cat plan2.txt; fail "plan with an unknown id"; }
grep -q "1 of its ids are no task that loaded" plan2.txt && grep -q "1 tasks x 1 models" plan2.txt \
	|| { cat plan2.txt; fail "the unknown id was not counted"; }
printf 'tetra-1\nno-such-task\n' > split3.txt
bash "$HERE/make_suite.sh" native 1 0
set +e
"$ENGISWEEP" plan --subset file:split3.txt native > plan3.txt 2>&1
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "split3.txt: line 2: 'no-such-task' is no task of the suite" plan3.txt \
	|| { cat plan3.txt; fail "an unknown id in a strict suite was not the error ($rc)"; }
echo ok: splits
