# Tasks judged by the structureclaw kind, through the judge's child process
# as a sweep runs them: a beam whose reference delivers the model, its
# analysis and a report passes and a span 1 m too long fails model_matches;
# a scenario whose right answer is to ask and deliver nothing passes with
# its model an optional deliverable (delivered:model.json failed but not
# required), its any_of finding the interaction assertion the episode
# recorded outside the child; the agent that never asks and the flawed
# variant that builds a model anyway fail.
. "$(dirname "$0")/lib.sh"
mkdir -p suite/refs
"$PY" - <<'PY'
import json
def beam(x3):
    return {"schema_version": "2.0.0", "unit_system": "SI", "metadata": {"frameDimension": "2d"},
            "nodes": [{"id": "1", "x": 0, "y": 0, "z": 0, "restraints": [True] * 5 + [False]},
                      {"id": "2", "x": x3, "y": 0, "z": 0,
                       "restraints": [False, True, True, True, True, False]}],
            "elements": [{"id": "1", "type": "beam", "nodes": ["1", "2"], "material": "1",
                          "section": "1"}],
            "materials": [{"id": "1", "E": 205000, "nu": 0.3}],
            "sections": [{"id": "1", "properties": {"A": 0.01, "Iy": 1e-4, "Iz": 1e-4,
                                                    "J": 1e-4, "G": 79000}}],
            "load_cases": [{"id": "LC1", "loads": [{"type": "distributed", "element": "1",
                                                    "wz": -20}]}]}
json.dump([{"id": "beam-6m", "model": beam(6)}], open("suite/refs/gt.json", "w"))
base = {"domain": "CAE", "software": ["sh"], "type": "single", "interface": "cli"}
report = "# Beam\n\n" + "A simply supported steel beam of 6 m under 20 kN/m. " * 4
analysis = json.dumps({"displacements": {"2": [0, 0, -0.0033]}})
beam_task = dict(base, id="sc-beam", instruction="Model the 6 m beam; analyse it; report.",
    deliverables=[{"path": "model.json"}, {"path": "analysis.json", "required": False},
                  {"path": "report.md", "required": False}],
    verifier={"kind": "structureclaw", "file": "model.json", "criteria": [
        {"name": "has_model", "check": "has_model"},
        {"name": "model_matches", "check": "model_matches", "reference": "refs/gt.json",
         "id": "beam-6m"},
        {"name": "strict", "check": "model_matches_strict", "reference": "refs/gt.json",
         "id": "beam-6m", "required": False},
        {"name": "has_analysis", "check": "has_analysis"},
        {"name": "has_report", "check": "has_report"},
        {"name": "skill_match", "check": "inapplicable", "reason": "the skill router"}]},
    reference=[{"write": "model.json", "text": json.dumps(beam(6))},
               {"write": "analysis.json", "text": analysis},
               {"write": "report.md", "text": report}],
    flawed=[{"name": "long", "expect": "fail", "failing": ["model_matches"],
             "steps": [{"write": "model.json", "text": json.dumps(beam(7))},
                       {"write": "analysis.json", "text": analysis},
                       {"write": "report.md", "text": report}]}])
ask_task = dict(base, id="sc-ask", instruction="Model a beam (its span is not given).",
    deliverables=[{"path": "model.json", "required": False},
                  {"path": "analysis.json", "required": False}],
    interaction={"user": [{"reply": "I cannot say."}],
                 "assert": [{"name": "asked", "check": "asked_user", "required": False}]},
    verifier={"kind": "structureclaw", "file": "model.json", "criteria": [
        {"name": "no_bad_model", "check": "no_bad_model"},
        {"name": "should_not_analyze", "check": "no_analysis"},
        {"name": "analysis_or_interaction", "check": "any_of", "of": ["has_analysis", "asked"]}]},
    reference=[{"ask": "What is the span?"}, {"done": "asked; nothing to model"}],
    flawed=[{"name": "builds", "expect": "fail",
             "failing": ["no_bad_model", "should_not_analyze"],
             "steps": [{"write": "model.json", "text": json.dumps(beam(6))},
                       {"write": "analysis.json", "text": analysis}]}])
json.dump(beam_task, open("suite/sc-beam.json", "w"), indent=1)
json.dump(ask_task, open("suite/sc-ask.json", "w"), indent=1)
PY
"$ENGISWEEP" validate suite > validate.log 2>&1 || { cat validate.log; fail "validate failed"; }
"$ENGISWEEP" run --agents reference,noop --quiet --out r suite > run.log 2>&1 \
	|| { cat run.log; fail "the sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
seen = set()
for e in R.episodes("r/results.h5"):
    tr = R.trace("r/results.h5", e["cell"])
    verdict = [x for x in tr if x["ev"] == "verdict"][-1]
    st = {a["name"]: (a["state"], a["required"]) for a in verdict["assertions"]}
    key = (e["task_id"], e["model"])
    seen.add(key)
    assert e["outcome"] == "done", (key, e)
    if key == ("sc-beam", "reference"):
        assert e["success"] == 1, st
        for n in ("delivered:model.json", "has_model", "model_matches", "strict", "has_analysis",
                  "has_report"):
            assert st[n] == ("pass", True if n != "strict" else False), (n, st)
        assert st["skill_match"] == ("inapplicable", False), st
    elif key == ("sc-beam", "noop"):
        assert e["success"] == 0, st
        assert st["delivered:model.json"] == ("fail", True), st
        assert st["model_matches"][0] == "fail", st
    elif key == ("sc-ask", "reference"):
        assert e["success"] == 1, st
        assert st["delivered:model.json"] == ("fail", False), st
        assert st["asked"] == ("pass", False), st
        assert st["no_bad_model"] == ("pass", True) and st["should_not_analyze"] == ("pass", True), st
        # judged after the child's verdict came back, beside the interaction one
        assert st["analysis_or_interaction"] == ("pass", True), st
        assert verdict["assertions"][-1]["name"] == "analysis_or_interaction", verdict
    elif key == ("sc-ask", "noop"):
        assert e["success"] == 0, st
        assert st["asked"] == ("fail", False), st
        assert st["analysis_or_interaction"] == ("fail", True), st
assert len(seen) == 4, seen
print("ok: structureclaw tasks judged as the benchmark judges them")
PY
# by hand, the judge says the same of a saved episode
cell=$(PYTHONPATH="$HERE" "$PY" -c '
import results as R
print([e["cell"] for e in R.episodes("r/results.h5") if (e["task_id"], e["model"]) == ("sc-ask", "reference")][0])')
"$ENGISWEEP" judge suite/sc-ask.json "r/artifacts/$cell" > judge.log 2>&1 || { cat judge.log; fail "judge"; }
# (without the episode's interaction assertions, which the record keeps)
grep -q "analysis_or_interaction .*none of has_analysis, asked is in the verdict" judge.log \
	|| { cat judge.log; fail "judge by hand left out any_of"; }
grep -q "(optional) 'model.json' was not delivered" judge.log || { cat judge.log; fail "judge: optional"; }
echo ok
