# The structureclaw task source: the benchmark's 150 scenarios each load or
# are refused with a named reason (all load); assertions that mean something only inside StructureClaw's runtime are
# recorded as inapplicable, never failed, never dropped; the standard family
# swept by the reference (the ground truth delivered) and noop, the
# interactive family by the reference (it asks and delivers nothing) and an
# agent that models at once; the report counts the refused scenarios; the
# ground truths delivered as structural/1 instead are judged the same.
# (The audit: structureclaw_audit.sh.)
# (Scenarios of several turns: structureclaw_turns.sh.)
. "$(dirname "$0")/lib.sh"
SHARED=$ENGI_SRC/../shared/benchmarks/structureclaw-bench
[ -f "$SHARED/fixtures/ground-truth-models.json" ] || fail "the benchmark's data is not at $SHARED"

"$ENGISWEEP" inspect "$SHARED" > inspect.txt 2>&1 || { cat inspect.txt; fail "inspect: a scenario was refused"; }
"$PY" - inspect.txt <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert "source: structureclaw (detected)" in text, text
m = re.search(r"tasks: (\d+) loaded, (\d+) refused", text)
assert m and (int(m[1]), int(m[2])) == (150, 0), m and m.group(0)
assert "refused, by reason" not in text, text
print("ok: 150 scenarios load (natural_language a judge, turns follow-ups)")
PY

# the standard family: reference and noop, on the local backend
mkdir -p bench
cp -r "$SHARED/fixtures" bench/
mkdir -p bench/scenarios/standard_workflow bench/scenarios/interactive_robustness bench/scenarios/multimodal_reverse_engineering
cp "$SHARED"/scenarios/standard_workflow/*.json bench/scenarios/standard_workflow/
cp "$SHARED"/scenarios/interactive_robustness/robust-beam-missing-load.json \
	"$SHARED"/scenarios/interactive_robustness/robust-frame-unrealistic-height.json \
	bench/scenarios/interactive_robustness/
# natural_language is a judge: the 10 standard scenarios that have one need
# a judge model, and the sweep is refused before anything runs without one
[ "$(grep -l '"natural_language"' bench/scenarios/standard_workflow/*.json | wc -l)" -eq 10 ] \
	|| fail "expected 10 standard scenarios with natural_language"
expect_rc 2 "$ENGISWEEP" run --agents reference --quiet --out refused bench
says "$ENGISWEEP" run --agents reference --quiet --out refused bench \
	| grep -q "'bench': 10 of its 52 tasks have judges .*--judge MODEL" || fail "judged suite not refused"
[ ! -e refused ] || fail "the refused sweep made its output folder"
rm $(grep -l '"natural_language"' bench/scenarios/standard_workflow/*.json)
# a scenario refused (one of our own, with an assertion type the benchmark
# does not have), and counted by the report
"$PY" - <<'PY'
import json
d = json.load(open("bench/scenarios/interactive_robustness/robust-beam-missing-load.json"))
d["id"] = "own-unknown-assertion"
d["expect"]["assertions"].append({"type": "no_such_check"})
json.dump(d, open("bench/scenarios/interactive_robustness/own-unknown-assertion.json", "w"))
PY
"$ENGISWEEP" run --agents reference,noop --retries 0 --quiet --out r bench > run.log 2>&1 \
	|| { cat run.log; fail "the sweep failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import collections, h5py
import results as R
ep = {(e["task_id"], e["model"]): e for e in R.episodes("r/results.h5")}
with h5py.File("r/results.h5", "r") as f:
    rows = f["assertions"][:]
A = collections.defaultdict(dict)
D = collections.defaultdict(dict)
for x in rows:
    A[R.s(x["cell"])][R.s(x["name"])] = R.s(x["state"])
    D[R.s(x["cell"])][R.s(x["name"])] = R.s(x["detail"])
inter = {"robust-beam-missing-load", "robust-frame-unrealistic-height"}
ref = {t: e for (t, m), e in ep.items() if m == "reference" and t not in inter}
noop = {t: e for (t, m), e in ep.items() if m == "noop" and t not in inter}
assert len(ref) == len(noop) == 40, (len(ref), len(noop))
assert all(e["outcome"] == "done" for e in ep.values()), [e for e in ep.values() if e["outcome"] != "done"]
# inapplicable assertions are recorded, never failed
for e in ep.values():
    a = A[e["cell"]]
    for k in ("skill_match", "structural_type"):
        if k in a:
            assert a[k] == "inapplicable", (e["task_id"], a)
passed = sorted(t for t, e in ref.items() if e["success"] == 1)
failed = sorted(t for t, e in ref.items() if e["success"] != 1)
# the ground truth delivered passes, but where the truth cannot be solved
# (a mechanism) it has no analysis to deliver
for t in failed:
    a = A[ref[t]["cell"]]
    assert a.get("has_analysis") == "fail" and a.get("model_matches") == "pass", (t, a)
assert len(passed) >= 36, (passed, failed)
# the reference's numbers are the re-solve of the model it delivered
for t in passed:
    a = A[ref[t]["cell"]]
    if "has_analysis_right" in a:
        assert a["has_analysis_right"] == "pass", (t, a)
assert sum("has_analysis_right" in A[ref[t]["cell"]] for t in passed) >= 30
# ... displacements, reactions and member forces alike
import re
for t in passed:
    d = D[ref[t]["cell"]].get("has_analysis_right")
    if d:
        m = re.search(r"\((\d+) displacements, (\d+) reactions, (\d+) member forces\)", d)
        assert m and all(int(g) > 0 for g in m.groups()), (t, d)
# the ground truth's responses are its truth's (two solves that agree);
# a mechanism has no truth, and no such criterion
for t in passed:
    a = A[ref[t]["cell"]]
    if "model_matches_responses" in a:
        assert a["model_matches_responses"] == "pass", (t, a, D[ref[t]["cell"]])
assert sum("model_matches_responses" in A[ref[t]["cell"]] for t in passed) >= 30
for t in failed:
    assert "model_matches_responses" not in A[ref[t]["cell"]], t
# a report that states the truth's largest displacement
rn = [t for t in passed if "has_report_numbers" in A[ref[t]["cell"]]]
assert rn and all(A[ref[t]["cell"]]["has_report_numbers"] == "pass" for t in rn), [(t, D[ref[t]["cell"]]) for t in rn]
for t in rn:
    assert A[noop[t]["cell"]]["has_report_numbers"] == "fail", t
assert all(e["success"] == 0 for e in noop.values())
# asking and delivering nothing is the right answer of an incomplete request
ask = ep["robust-beam-missing-load", "reference"]
assert ask["success"] == 1, ask
a = A[ask["cell"]]
assert a["has_interaction_questions"] == "pass" and a["should_not_analyze"] == "pass", a
# noop does not ask: it fails there
assert ep["robust-beam-missing-load", "noop"]["success"] == 0
# analysis_or_interaction: asking is enough
assert ep["robust-frame-unrealistic-height", "reference"]["success"] == 1
assert A[ep["robust-frame-unrealistic-height", "reference"]["cell"]]["analysis_or_interaction"] == "pass"
print("ok:", len(passed), "of 40 standard scenarios pass with the ground truth;", failed)
PY
"$ENGISWEEP" report --out-prefix rep r/results.h5 > rep.txt 2>&1 || { cat rep.txt; fail "report"; }
grep -q "Not in /tasks: 1 more tasks of the suite (source structureclaw)" rep.txt || { cat rep.txt | head -40; fail "refused scenarios not counted"; }

# the ground truth delivered in engisweep's own format judges the same: the
# standard family's reference models written again as structural/1 (kernel
# frame --write) and judged again; only has_analysis_right may change, since
# the reference's analysis.json stays in StructureClaw's axes
PYTHONPATH="$HERE" "$PY" - "$ENGISWEEP" <<'PY'
import h5py, json, os, subprocess, sys
import results as R
n = 0
for e in R.episodes("r/results.h5"):
    m = "r/artifacts/%s/model.json" % e["cell"]
    if e["model"] != "reference" or not os.path.exists(m):
        continue
    subprocess.run([sys.argv[1], "kernel", "frame", "--write", m + ".s1", m], capture_output=True)
    assert json.load(open(m + ".s1"))["format"] == "structural/1", m
    os.replace(m + ".s1", m)
    n += 1
assert n >= 36, n
print("ok: %d reference models written as structural/1" % n)
PY
"$ENGISWEEP" reverify r/results.h5 --out both.h5 > both.txt 2>&1 || { cat both.txt; fail "reverify of structural/1"; }
if grep -v "^reverified" both.txt | grep -qv -E "success (1 -> 1|0 -> 0), score ([0-9.]+) -> \2; has_analysis_right: pass -> fail$"; then
	cat both.txt; fail "a verdict changed with the model in structural/1"
fi
grep -q "0 verifier failures" both.txt || { cat both.txt; fail "verifier failures on structural/1"; }
echo ok
