# StructureClaw-Bench scenarios of several turns (`turns`), written here in
# the benchmark's format over its own fixtures, become tasks with follow-ups
# (tasks/SCHEMA.md `followups`): each turn's assertions judge the files as
# that turn left them. An incomplete request answered by a question, then
# the data; a truss analysed, then a report asked for: the reference passes
# turn by turn, noop and the flawed variants fail.
. "$(dirname "$0")/lib.sh"
SHARED=$ENGI_SRC/../shared/benchmarks/structureclaw-bench
[ -f "$SHARED/fixtures/ground-truth-models.json" ] || fail "the benchmark's data is not at $SHARED"
mkdir -p turns/scenarios/interactive_robustness turns/scenarios/standard_workflow \
	turns/scenarios/multimodal_reverse_engineering
cp -r "$SHARED/fixtures" turns/
"$PY" - <<'PY'
import json
def sc(id, turns, fam="interactive_robustness"):
    d = {"id": id, "description": id, "split": "core", "taskFamily": fam, "inputModality": "text",
         "structureType": "beam", "difficulty": "L2", "locale": "en", "turns": turns}
    json.dump(d, open("turns/scenarios/%s/%s.json" % (fam, id), "w"), indent=1)
sc("own-update-ask", [
    {"message": "Please analyze a simply supported beam.",
     "assertions": [{"type": "has_interaction_questions"}, {"type": "no_bad_model"},
                    {"type": "should_not_analyze"}]},
    {"message": "The span is 4 m with a 25 kN point load at mid-span.",
     "assertions": [{"type": "has_model", "minNodes": 2, "minElements": 1},
                    {"type": "model_matches", "groundTruthId": "beam-simple-4m-point25"},
                    {"type": "has_analysis"}]}])
sc("own-update-truss", [
    {"message": "A triangular truss spans 12 m, 3 m high, 20 kN at the nodes. Analyse it.",
     "assertions": [{"type": "skill_match", "primary": "truss"},
                    {"type": "has_model", "minNodes": 3, "minElements": 3},
                    {"type": "model_matches", "groundTruthId": "truss-triangle-12m-3m-20k"},
                    {"type": "has_analysis"}]},
    {"message": "Now write the report.",
     "assertions": [{"type": "has_model", "minNodes": 3, "minElements": 3},
                    {"type": "has_report"}]}], fam="standard_workflow")
PY
"$ENGISWEEP" validate turns > tv.log 2>&1 || { cat tv.log; fail "validate of the multi-turn scenarios"; }
grep -q "own-update-truss *| flawed:wrong-span *| fail *| failed" tv.log || { cat tv.log; fail "wrong-span not played"; }
"$ENGISWEEP" run --agents reference,noop --retries 0 --quiet --out rt turns > rt.log 2>&1 \
	|| { cat rt.log; fail "the multi-turn sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import collections, h5py, json, os
import results as R
ep = {(e["task_id"], e["model"]): e for e in R.episodes("rt/results.h5")}
with h5py.File("rt/results.h5", "r") as f:
    rows = f["assertions"][:]
A = collections.defaultdict(dict)
for x in rows:
    A[R.s(x["cell"])][R.s(x["name"])] = R.s(x["state"])
ask, truss = ep["own-update-ask", "reference"], ep["own-update-truss", "reference"]
a = A[ask["cell"]]
assert ask["success"] == 1, (ask, a)
# the first turn: asked, no model, no analysis yet; the second: the model
assert a["turn1:reached"] == a["turn1:no_bad_model"] == a["turn1:should_not_analyze"] == "pass", a
assert a["has_interaction_questions"] == "pass" and a["model_matches"] == a["has_analysis"] == "pass", a
assert not os.path.exists("rt/artifacts/%s/@turn1/model.json" % ask["cell"])
assert os.path.exists("rt/artifacts/%s/model.json" % ask["cell"])
t = A[truss["cell"]]
assert truss["success"] == 1, (truss, t)
assert t["turn1:model_matches"] == t["turn1:has_analysis"] == "pass", t
assert t["turn1:skill_match"] == "inapplicable" and t["has_report"] == "pass", t
# the report came in the second turn
assert not os.path.exists("rt/artifacts/%s/@turn1/report.md" % truss["cell"])
# noop ends each turn at once: the turns are reached, their checks fail
n = A[ep["own-update-truss", "noop"]["cell"]]
assert ep["own-update-truss", "noop"]["success"] == 0
assert n["turn1:reached"] == "pass" and n["turn1:has_model"] == "fail", n
assert ep["own-update-ask", "noop"]["success"] == 0
tr = [x for x in R.trace("rt/results.h5", ask["cell"]) if x["ev"] == "followup"]
assert [x["message"] for x in tr] == ["The span is 4 m with a 25 kN point load at mid-span."], tr
print("ok: multi-turn scenarios judged turn by turn")
PY
echo ok
