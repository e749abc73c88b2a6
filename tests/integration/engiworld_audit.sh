# engisweep audit on a tree of our own tasks in EngiWorld's format with one
# planted defect each (tests/engiworld/make_tree.sh --defects): it finds
# each, and nothing on the sound tasks; the table, the JSON and the exit
# status say so. The benchmark's tree itself is never changed.
. "$(dirname "$0")/lib.sh"
bash "$ENGI_SRC/tests/engiworld/make_tree.sh" ew --defects
find ew -type f -exec sha256sum {} + | sort > before.sha
expect_rc 1 "$ENGISWEEP" audit --quiet --json audit.json ew > audit.txt 2>&1
find ew -type f -exec sha256sum {} + | sort > after.sha
cmp -s before.sha after.sha || fail "audit changed the task tree"
"$PY" - <<'PY'
import json
d = json.load(open("audit.json"))
got = {t["task"]: sorted(f["kind"] for f in t["findings"]) for t in d["tasks"]}
c = "single-software-execution--cli--calculix--"
want = {
    c + "task-01--ubuntu": [],
    c + "task-02--ubuntu": ["evaluator_error"] * 3,          # the evaluator crashes
    c + "task-13--ubuntu": [],
    c + "task-14--ubuntu": ["evaluator_error"] * 3,          # a module it needs is missing
    c + "task-15--ubuntu": ["evaluator_error"] * 3,          # exit 1 and a traceback
    c + "task-21--ubuntu": ["empty_artifacts_pass", "noop_passes"],  # says True to anything
    c + "task-22--ubuntu": ["empty_artifacts_pass"],         # checks only that it exists
    c + "task-23--ubuntu": ["ground_truth_fails"],           # a wrong ground truth
    c + "task-24--ubuntu": ["passes_without"],               # never needs the solver's output
    c + "task-25--ubuntu": ["deck_mechanism"],               # a deck with no unique solution
    c + "task-26--ubuntu": ["summary_zero"],                 # zeros where the deck moves
    "vision-guided-modeling--cli--openscad--task-01--ubuntu": [],
    "design-optimization--cli--openscad--task-01--ubuntu": [],
    # the score is the agent's own file; without it the evaluator gives none
    "design-optimization--cli--openscad--task-02--ubuntu": ["agent_score_file"] + ["evaluator_error"] * 2,
}
assert got == {k: sorted(v) for k, v in want.items()}, got
assert d["tasks_audited"] == 14 and d["tasks_with_findings"] == 10, d
f = {t["task"]: t for t in d["tasks"]}
assert "beam.dat" in f[c + "task-24--ubuntu"]["findings"][0]["detail"]
assert "mechanism" in f[c + "task-25--ubuntu"]["findings"][0]["detail"]
assert "re-solved: max |u|" in f[c + "task-26--ubuntu"]["notes"]
print("ok: every planted defect found, nothing else")
PY
grep -q "14 tasks audited: 10 with findings (19 findings)" audit.txt || { cat audit.txt; fail "summary line"; }
grep -q "| single-software-execution--cli--calculix--task-24--ubuntu .*| passes_without " audit.txt \
	|| { cat audit.txt; fail "table row"; }
# the sound tasks alone: exit 0
printf 'single-software-execution--cli--calculix--task-01--ubuntu\ndesign-optimization--cli--openscad--task-01--ubuntu\n' > sound.txt
"$ENGISWEEP" audit --quiet --subset file:sound.txt ew > sound.log 2>&1 || { cat sound.log; fail "audit of sound tasks"; }
grep -q "2 tasks audited: 0 with findings" sound.log || { cat sound.log; fail "sound tasks had findings"; }
echo ok
