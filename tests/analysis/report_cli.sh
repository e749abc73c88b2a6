# engisweep report from the command line: scores by software (a task counts
# in each of its programs) and by any metadata key (--by, an extra CSV
# column), the mean reward beside EngiScore, the evidence ladder in
# report.json, a cell that two CSV files both hold refused with both places
# named, --plots drawing PNG and SVG byte-identically twice, and a clear
# error when matplotlib is missing.
. "$ENGI_SRC/tests/integration/lib.sh"

"$PY" - <<'PY'
import csv
for part, tasks in (("a", range(0, 8)), ("b", range(8, 14))):
    with open(f"ep_{part}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task_id", "model", "trial", "success", "score", "scoring", "software",
                    "lab"])
        for t in tasks:
            for mi, m in enumerate(["alpha", "beta"]):
                for trial in (1, 2):
                    s = int((t * 5 + mi * 3 + trial) % 4 < 2 + mi)
                    # continuous-reward tasks: a reward without success
                    scoring = "continuous" if t % 3 == 0 else "binary"
                    score = 0.5 if scoring == "continuous" and not s else s
                    sw = "openscad, freecad" if t % 2 else "calculix"
                    w.writerow([f"t{t:02d}", m, trial, s, score, scoring, sw,
                                "north" if t < 5 else "south"])
with open("as.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["task_id", "model", "trial", "assertion", "stage", "state"])
    w.writerow(["t00", "alpha", 1, "file", "delivery", "pass"])
    w.writerow(["t09", "beta", 2, "file", "delivery", "fail"])
PY

"$ENGISWEEP" report --by lab --by scoring --out-prefix r1 --assertions as.csv ep_a.csv ep_b.csv > r1.md
"$ENGISWEEP" report --by lab --by scoring --out-prefix r2 --assertions as.csv ep_a.csv ep_b.csv > r2.md
for f in r1.md:r2.md r1.csv:r2.csv r1.json:r2.json r1.evidence.csv:r2.evidence.csv; do
	cmp "${f%%:*}" "${f##*:}" || fail "$f differ: same input and seed must give the same bytes"
done
for h in "## Score by software" "## Score by lab" "## Score by scoring" \
	"| model | calculix | freecad | openscad |" "| model | north | south |"; do
	grep -qF "$h" r1.md || fail "report lacks '$h'"
done
grep -q "EngiScore | 95 % CI | reward | 95 % CI | success rate" r1.md || fail "no reward column"

"$PY" - <<'PY' || fail "report.json is not what the episodes say"
import csv, json
rows = list(csv.DictReader(open("ep_a.csv"))) + list(csv.DictReader(open("ep_b.csv")))
doc = json.load(open("r1.json"))
assert doc["tables"] == ["overall", "type", "domain", "interface", "software", "lab", "scoring"], doc["tables"]
def two_level(model, key, pick=lambda r: True):
    per = {}
    for r in rows:
        if r["model"] == model and pick(r):
            per.setdefault(r["task_id"], []).append(key(r))
    return 100 * sum(sum(v) / len(v) for v in per.values()) / len(per), len(per)
for model in ("alpha", "beta"):
    got = {(r["table"], r["group"]): r for r in doc["rows"] if r["model"] == model}
    engi = lambda r: float(r["success"])  # no optimization task here
    reward = lambda r: float(r["score"])
    for (table, group), pick in ((("overall", "all"), lambda r: True),
                                 (("software", "freecad"), lambda r: "freecad" in r["software"]),
                                 (("software", "calculix"), lambda r: "calculix" in r["software"]),
                                 (("lab", "south"), lambda r: r["lab"] == "south")):
        row = got[(table, group)]
        want, n = two_level(model, engi, pick)
        assert abs(row["score_x100"] - want) < 1e-9 and row["tasks"] == n, (model, table, group, row, want)
        want, n = two_level(model, reward, pick)
        assert abs(row["reward_x100"] - want) < 1e-9, (model, table, group, row["reward_x100"], want)
    assert got[("overall", "all")]["reward_x100"] > got[("overall", "all")]["score_x100"]
ev = doc["evidence"]
assert ev["stages"] == ["delivery"], ev
arms = {a["model"]: a for a in ev["arms"]}
assert arms["alpha"]["ladder"][0]["denominator"] == 4 and arms["alpha"]["ladder"][0]["passed"] == 1, arms
assert arms["beta"]["ladder"][0]["passed"] == 0, arms
PY

out=$(says "$ENGISWEEP" report --by colour ep_a.csv)
expect_rc 2 "$ENGISWEEP" report --by colour ep_a.csv
echo "$out" | grep -q "\-\-by 'colour': no task has this metadata key" || fail "unknown key: $out"

# a cell in two files: refused, both places named
"$PY" - <<'PY'
import csv
with open("ep_c.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["task_id", "model", "trial", "success", "score"])
    w.writerow(["t20", "alpha", 1, 1, 1])
    w.writerow(["t03", "beta", 2, 0, 0])
PY
out=$(says "$ENGISWEEP" report ep_a.csv ep_c.csv)
expect_rc 2 "$ENGISWEEP" report ep_a.csv ep_c.csv
echo "$out" | grep -q "ep_c.csv: line 3: task 't03', model 'beta', condition 'base', trial 2 is also on line 17 of ep_a.csv" \
	|| fail "a cell in two files: $out"
expect_rc 2 "$ENGISWEEP" compare ep_a.csv ep_c.csv

# --plots: the report files and the plots in one folder, the same bytes twice
"$ENGISWEEP" report --plots p1 --assertions as.csv ep_a.csv ep_b.csv > p1.md
"$ENGISWEEP" report --plots p2 --assertions as.csv ep_a.csv ep_b.csv > p2.md
for f in report.json report.csv report.evidence.csv forest.png forest.svg outcomes.png \
	outcomes.svg ladder.png ladder.svg; do
	[ -s "p1/$f" ] || fail "report --plots did not write p1/$f"
	cmp "p1/$f" "p2/$f" || fail "p1/$f and p2/$f differ"
done
grep -q "svg.hashsalt\|<dc:date>" p1/forest.svg && fail "forest.svg carries a date or the salt"
"$ENGISWEEP" report --out-prefix q/r --plots q --assertions as.csv ep_a.csv ep_b.csv > /dev/null
[ -s q/r.json ] && [ -s q/forest.svg ] && [ -s q/ladder.png ] || fail "--plots with --out-prefix"

# matplotlib missing: a module that fails to import stands in for it
mkdir -p nompl/matplotlib
echo 'raise ImportError("No module named matplotlib")' > nompl/matplotlib/__init__.py
out=$(PYTHONPATH="$T/nompl" says "$ENGISWEEP" report --plots p3 ep_a.csv)
PYTHONPATH="$T/nompl" expect_rc 1 "$ENGISWEEP" report --plots p3 ep_a.csv
echo "$out" | grep -q "plots: matplotlib is missing" || fail "no clear error without matplotlib: $out"
echo "$out" | grep -q "report --plots: .* failed" || fail "report does not say the plots failed: $out"
[ -s p3/report.json ] || fail "the report files should be written even without matplotlib"
echo "report cli: ok"
