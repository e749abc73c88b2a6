# engisweep audit on StructureClaw-Bench as published: the fixtures' own
# defects named per ground truth (mechanisms, supports that restrain the
# in-plane rotation, models that do not move, inertia that decides the
# answer, sections named for other values), the benchmark unchanged; its
# reference runs count every scenario by family and locale and every
# assertion type as what it became; a sweep of the sound ids alone; a model
# stretched half as long again with the truth's numbers beside it fails
# model_matches and has_analysis_right.
. "$(dirname "$0")/lib.sh"
SHARED=$ENGI_SRC/../shared/benchmarks/structureclaw-bench
[ -f "$SHARED/fixtures/ground-truth-models.json" ] || fail "the benchmark's data is not at $SHARED"
# the standard scenarios without a judge, for the flawed run at the end
mkdir -p bench/scenarios/standard_workflow bench/scenarios/interactive_robustness \
	bench/scenarios/multimodal_reverse_engineering
cp -r "$SHARED/fixtures" bench/
cp "$SHARED"/scenarios/standard_workflow/*.json bench/scenarios/standard_workflow/
rm $(grep -l '"natural_language"' bench/scenarios/standard_workflow/*.json)

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
