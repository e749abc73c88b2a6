# The structureclaw task source: the benchmark's 150 scenarios each load or
# are refused with a named reason (counts by family, locale and assertion
# type asserted);
# assertions that mean something only inside StructureClaw's runtime are
# recorded as inapplicable, never failed, never dropped; the standard family
# swept by the reference (the ground truth delivered) and noop, the
# interactive family by the reference (it asks and delivers nothing) and an
# agent that models at once; the report counts the refused scenarios; the
# audit names the fixtures' defects.
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
echo ok

# audit: the fixtures' own defects, named per ground truth, the benchmark
# unchanged
find "$SHARED" -type f -exec sha256sum {} + | sort > before.sha
expect_rc 1 "$ENGISWEEP" audit --quiet --keep --out aud --json audit.json --clean clean.txt "$SHARED" > audit.txt 2>&1
find "$SHARED" -type f -exec sha256sum {} + | sort > after.sha
cmp -s before.sha after.sha || fail "audit changed the benchmark"
"$PY" - <<'PY'
import collections, json, re
d = json.load(open("audit.json"))
assert d["tasks_audited"] == 150, d["tasks_audited"]
# the judges are not checked, and the audit says so
judged = [t for t in d["tasks"] if "judge (judge:NAME) not checked" in t["notes"]]
assert len(judged) == 28, len(judged)
by = collections.defaultdict(set)
for t in d["tasks"]:
    for f in t["findings"]:
        m = re.search(r"ground truth '([^']+)'", f["detail"])
        by[f["kind"]].add(m.group(1) if m else t["task"])
# without its judge, a scenario whose other assertions ask for nothing passes noop
assert by["noop_passes"] == {"robust-generic-too-vague"}, by["noop_passes"]
# mechanisms with 7 free degrees of freedom
assert by["model_mechanism"] == {"truss-roof-18m-3m-12k", "truss-warren-12m-2m-8k"}, by["model_mechanism"]
assert all("7 free degrees of freedom" in f["detail"] for t in d["tasks"] for f in t["findings"]
           if f["kind"] == "model_mechanism")
# "simply supported" beams whose supports restrain the in-plane rotation
assert {"beam-simple-6m", "beam-complex-12m", "dspan-simple-5-6"} <= by["supports_restrain_rotation"], by
# the continuous beams do not move at all
assert by["model_does_not_move"] == {"dspan-simple-5-6", "dspan-complex-3span"}, by["model_does_not_move"]
# results that depend on which inertia the columns get
assert len(by["inertia_ambiguous"]) >= 8, by["inertia_ambiguous"]
# a section named for other dimensions than its values
assert any("section H600x250 carries the same values as" in f["detail"]
           for t in d["tasks"] for f in t["findings"]), "H600x250 not found"
# and sound tasks have none
sound = {t["task"] for t in d["tasks"] if not t["findings"]}
assert {"std-column-axial-800kn", "std-frame3d-complex-gt"} <= sound, sound
assert sorted(open("clean.txt").read().split()) == sorted(sound), "--clean lists other ids"
print("ok: audit:", {k: len(v) for k, v in by.items()})
PY
# every scenario loaded, by family and locale (25 each), and every assertion
# of the benchmark's files became what it should: counted in the audit's
# reference runs against the scenario files themselves
PYTHONPATH="$HERE" "$PY" - "$SHARED" <<'PY'
import collections, glob, h5py, json, os, sys
import results as R
files = sorted(glob.glob(os.path.join(sys.argv[1], "scenarios", "*", "*.json")))
assert len(files) == 150, len(files)
want = collections.Counter()
for f in files:
    d = json.load(open(f))
    for turn in d.get("turns") or [d.get("expect", {})]:
        for a in turn.get("assertions", []):
            want[a["type"]] += 1
with h5py.File("aud/results.h5", "r") as f:
    meta = collections.defaultdict(dict)
    for r in f["task_meta"][:]:
        meta[R.s(r["task_id"])][R.s(r["key"])] = R.s(r["value"])
    ep = {R.s(e["cell"]): R.s(e["task_id"]) for e in f["episodes"][:] if R.s(e["model"]) == "reference"}
    rows = [(R.s(x["cell"]), R.s(x["name"]), R.s(x["stage"]), R.s(x["state"])) for x in f["assertions"][:]
            if R.s(x["cell"]) in ep]
assert len(ep) == 150 and len(set(ep.values())) == 150, len(ep)
fam = collections.Counter((meta[t]["family"], meta[t]["locale"]) for t in ep.values())
assert set(fam.values()) == {25} and len(fam) == 6, fam
got = collections.Counter()
for cell, name, stage, state in rows:
    base = name.split(":", 1)[1] if name.startswith("turn") and ":" in name and name[4:5].isdigit() else name
    if state == "inapplicable":
        got["inapplicable"] += 1
    elif base.startswith("judge:natural_language"):
        got["natural_language"] += 1
inapp = want["skill_match"] + want["structural_type"] + want["engine_match"]
assert got["inapplicable"] == inapp, (got, inapp)
assert got["natural_language"] == want["natural_language"] == 28, (got, want)
print("ok: by family and locale", dict(fam), "; assertions", dict(want))
PY
# a sweep of the sound scenarios alone
n=$(wc -l < clean.txt)
"$ENGISWEEP" plan --subset file:clean.txt "$SHARED" > plan.txt 2>&1 || { cat plan.txt; fail "plan of the clean ids"; }
grep -q "^$n tasks x 1 models\|[^0-9]$n tasks x 1 models" plan.txt || { cat plan.txt; fail "the clean ids did not select $n tasks"; }

# analysis_matches: a model stretched half as long again with the truth's
# numbers beside it: the benchmark's model_matches fails, and the numbers are
# not the delivered model's
echo beam-static-with-report > one.txt
"$ENGISWEEP" run --agents flawed:wrong-span --retries 0 --quiet --subset file:one.txt --out rw bench > rw.log 2>&1 \
	|| { cat rw.log; fail "the wrong-span run failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import h5py
import results as R
(e,) = R.episodes("rw/results.h5")
with h5py.File("rw/results.h5", "r") as f:
    a = {R.s(x["name"]): (R.s(x["state"]), R.s(x["detail"])) for x in f["assertions"][:]}
assert e["success"] == 0 and a["model_matches"][0] == "fail", a
assert a["has_analysis"][0] == "pass" and a["has_analysis_right"][0] == "fail", a
assert "reported" in a["has_analysis_right"][1] and "solved" in a["has_analysis_right"][1], a
# and no responses are compared with a model that is not the truth's
assert a["model_matches_responses"][0] == "fail" and "does not match" in a["model_matches_responses"][1], a
print("ok: wrong numbers found:", a["has_analysis_right"][1])
PY
echo ok
