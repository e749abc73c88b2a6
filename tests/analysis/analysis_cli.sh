# engisweep report and compare on CSV input from the command line: several
# files merged, input errors named by file, line and column (exit 2), an
# unknown baseline naming the valid ones, identical bytes for the same seed;
# then analysis/plots.py draws the forest, outcome and lift plots as PNG and
# SVG, byte-identical on a second run.
. "$ENGI_SRC/tests/integration/lib.sh"

"$PY" - <<'PY'
import csv
for part, tasks in (("a", range(0, 12)), ("b", range(12, 20))):
    with open(f"ep_{part}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["task_id", "model", "trial", "condition", "success", "score", "outcome",
                    "domain", "type", "interface", "software"])
        for t in tasks:
            for mi, m in enumerate(["alpha", "beta", "gamma"]):
                for c in ("base", "hint"):
                    for trial in (1, 2):
                        s = int((t * 7 + mi * 3 + trial + (c == "hint")) % 5 < 2 + mi)
                        out = "env_crash" if (t, m, c, trial) == (3, "beta", "base", 2) else "done"
                        out = "unrun" if (t, m, c, trial) == (4, "gamma", "hint", 2) else out
                        w.writerow([f"t{t:02d}", m, trial, c, s, s, out, "CAD", "single", "cli",
                                    "openscad"])
PY

printf 'task_id,model,trial,condition,assertion,stage,state\nt00,alpha,1,base,file,delivery,pass\nt00,alpha,1,base,vol,geometry,unavailable\nt01,alpha,1,base,file,delivery,fail\n' > as_a.csv
"$ENGISWEEP" report --out-prefix r --assertions as_a.csv ep_a.csv ep_b.csv > report.md
# two trials on t00 and t01, one verdict each on trial 1: trial 2 has none
# and counts as a failure; geometry applies to t00 only
grep -q "| alpha | base | 25.0 % (1/4) | 0.0 % (0/2) |" report.md || fail "evidence ladder wrong: $(grep '| alpha | base | [0-9.]* %' report.md)"
[ -s r.evidence.csv ] || fail "no r.evidence.csv"
grep -q "| alpha | base | 20 |" report.md || fail "merged report lacks alpha over 20 tasks"
grep -q "| missing (planned - recorded) | 1 |" report.md || fail "the unrun episode is not missing"
grep -q "| env_crash (infrastructure failure, not run, not scored) | 1 |" report.md || fail "env_crash not counted"

"$ENGISWEEP" compare --axis conditions --baseline base --out-prefix c1 ep_a.csv ep_b.csv > c1.md
"$ENGISWEEP" compare --axis conditions --baseline base --out-prefix c2 ep_a.csv ep_b.csv > c2.md
cmp c1.md c2.md && cmp c1.csv c2.csv && cmp c1.json c2.json || fail "compare is not deterministic"
grep -q "### Lift over 'base'" c1.md || fail "no ablation grid"
grep -q "Family: every condition against the baseline condition 'base' within each model, 3 comparisons" c1.md \
	|| fail "family line missing"
"$ENGISWEEP" compare --out-prefix pairs ep_a.csv > pairs.md
[ "$(($(wc -l < pairs.csv) - 1))" -eq 6 ] || fail "3 models x 2 conditions should give 6 pairs"

printf 'task_id,model,trial,success,score\nt1,m,1,1,1\nt2,m,1,1,oops\n' > bad.csv
out=$(says "$ENGISWEEP" report bad.csv)
expect_rc 2 "$ENGISWEEP" report bad.csv
echo "$out" | grep -q "bad.csv: line 3, column 'score': expected a finite number, found 'oops'" \
	|| fail "unclear CSV error: $out"
out=$(says "$ENGISWEEP" compare --baseline nobody ep_a.csv)
expect_rc 2 "$ENGISWEEP" compare --baseline nobody ep_a.csv
echo "$out" | grep -q "baseline model 'nobody' is not in the results; known: 'alpha', 'beta', 'gamma'" \
	|| fail "unknown baseline: $out"

"$PY" "$ENGI_SRC/analysis/plots.py" --report r.json --compare c1.json --evidence r.evidence.csv --out plots1
"$PY" "$ENGI_SRC/analysis/plots.py" --report r.json --compare c1.json --evidence r.evidence.csv --out plots2
for f in forest outcomes lifts ladder; do
	for ext in png svg; do
		[ -s "plots1/$f.$ext" ] || fail "plots1/$f.$ext not drawn"
		cmp "plots1/$f.$ext" "plots2/$f.$ext" || fail "$f.$ext differs between two runs"
	done
	head -c 8 "plots1/$f.png" | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" || fail "$f.png is not a PNG"
	"$PY" -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" "plots1/$f.svg" \
		|| fail "$f.svg is not XML"
done
out=$(says "$PY" "$ENGI_SRC/analysis/plots.py" --report c1.json --out plots3)
echo "$out" | grep -q "'c1.json' is not an engisweep-report file" || fail "plots accepted a wrong file: $out"
"$ENGISWEEP" compare --help | grep -q "usage: engisweep compare" || fail "compare --help"
expect_rc 2 "$ENGISWEEP" compare
expect_rc 2 "$ENGISWEEP" compare --axis sideways ep_a.csv
echo "analysis cli: ok"
