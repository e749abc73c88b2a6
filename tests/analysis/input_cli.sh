# Analysis input never hides a row, from the command line: an unknown
# outcome stops the load naming file and line; names of any length are
# reported whole; the same rows shuffled give byte-identical reports and
# comparisons; an output that would write over an input is refused; a model
# whose endpoint was down is listed with its episodes not run and no score
# while the other is scored; mixed engisweep versions and verifiers are
# named in the text and in report.json.
. "$ENGI_SRC/tests/integration/lib.sh"

"$PY" - <<'PY'
import csv, random
long_model = "vendor/" + "x" * 90 + "-instruct"
rows = []
for t in range(12):
    for m in ("alpha", long_model, "dead"):
        for trial in (0, 1, 2):
            s = int(random.Random(t * 31 + trial * 7 + len(m)).random() < 0.5)
            out, infra = "done", ""
            if m == "dead":
                out, infra, s = "infra_error", "endpoint unavailable", 0
            ver = "1.2.0" if (t, trial) != (0, 0) else "1.1.0"
            rows.append([f"task{t:02d}", m, trial, s, s, out, infra,
                         "structural mechanics" if t % 2 else "CAD",
                         "finite-element-analysis" if t % 2 else "single", ver,
                         "mesh@1" if t % 3 else "fe@2"])
head = ["task_id", "model", "trial", "success", "score", "outcome", "infra", "domain", "type",
        "version", "verifier"]
for name, order in (("in.csv", rows), ("shuffled.csv", random.Random(3).sample(rows, len(rows)))):
    with open(name, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(order)
# the 9,171-episode failure in small: an outcome this reader does not know
with open("odd.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["task_id", "model", "trial", "success", "score", "outcome"])
    w.writerow(["t1", "m", 0, 1, 1, "done"])
    w.writerow(["t2", "m", 0, 0, 0, "verifier_error"])
PY

# an unknown outcome: exit 2, file, line and column named
out=$(says "$ENGISWEEP" report odd.csv)
expect_rc 2 "$ENGISWEEP" report odd.csv
echo "$out" | grep -q "odd.csv: line 3, column 'outcome': expected done, fail_declared, turn_limit, time_limit, agent_error, env_crash, infra_error, missing or unrun, found 'verifier_error'" \
	|| fail "unknown outcome not refused: $out"

"$ENGISWEEP" report --interval bca --out-prefix a in.csv > a.md
"$ENGISWEEP" report --interval bca --out-prefix b shuffled.csv > b.md
cmp a.md b.md && cmp a.csv b.csv && cmp a.json b.json && cmp a.evidence.csv b.evidence.csv \
	|| fail "shuffled rows give another report"
"$ENGISWEEP" compare --out-prefix ca in.csv > ca.md
"$ENGISWEEP" compare --out-prefix cb shuffled.csv > cb.md
cmp ca.md cb.md && cmp ca.csv cb.csv && cmp ca.json cb.json || fail "shuffled rows give another comparison"

# long names whole: the 106-byte model, the 20-byte domain, the 23-byte type
grep -q "| vendor/x\{90\}-instruct | 12 | 36 |" a.md || fail "long model name not whole: $(grep vendor a.md | head -2)"
grep -q "| model | CAD | structural mechanics |" a.md || fail "long domain not whole"
grep -q "finite-element-analysis" a.md || fail "long type not whole"

# the dead endpoint: not run by reason, no score; alpha scored
grep -q "^- dead: 36 episodes not run: endpoint unavailable; no scored episode, no score$" a.md \
	|| fail "dead model not listed: $(grep -A4 'Episodes not run' a.md)"
grep -q "| dead | 0 | 0 | no score | no scored episode | no score |" a.md || fail "dead model shown with a score"
grep -q "| alpha | 12 | 36 | [0-9.]* | \[" a.md || fail "alpha not scored"
grep -q "| infra_error (infrastructure failure, not run, not scored) | 36 |" a.md || fail "infra_error not counted"
grep -q '^overall,all,dead,base,0,36,0,,,,no_tasks,0,.*,36,endpoint unavailable: 36,' a.csv \
	|| fail "CSV row of dead: $(grep '^overall,all,dead' a.csv)"
"$PY" - <<'PY' || fail "report.json: not_run or provenance wrong"
import json
d = json.load(open("a.json"))
assert d["not_run"] == [{"model": "dead", "condition": "base", "reason": "endpoint unavailable",
                         "episodes": 36}], d["not_run"]
dead = [r for r in d["rows"] if r["table"] == "overall" and r["model"] == "dead"][0]
assert dead["score_x100"] is None and dead["not_run"] == 36, dead
p = d["provenance"]
assert p["versions"] == [{"value": "1.1.0", "episodes": 3}, {"value": "1.2.0", "episodes": 105}], p
assert p["mixed_versions"] is True and p["mixed_verifiers"] is False, p
assert p["verifiers"] == [{"value": "fe@2", "episodes": 36}, {"value": "mesh@1", "episodes": 72}], p
PY
grep -q "^\*\*Warning: episodes from different engisweep versions:\*\* 1.1.0 (3 episodes), 1.2.0 (105 episodes)\.$" a.md \
	|| fail "no version warning: $(grep -i warning a.md)"

# outputs over inputs are refused, through another name too
cp in.csv X.csv
ln -s X.csv link.csv
for args in "report --out-prefix X X.csv" "report --out-prefix X link.csv" \
	"compare --out-prefix X X.csv" "report --out-prefix ./X ./link.csv"; do
	out=$(says "$ENGISWEEP" $args)
	expect_rc 2 "$ENGISWEEP" $args
	echo "$out" | grep -q "refusing to write over an input" || fail "$args: $out"
	cmp X.csv in.csv || fail "$args wrote over its input"
done
printf 'task_id,model,trial,assertion,stage,state\n' > as.csv
out=$(says "$ENGISWEEP" report --out-prefix as --assertions as.csv in.csv)
echo "$out" | grep -q "output .as.csv. is the input .as.csv." || fail "assertions input: $out"
expect_rc 2 "$ENGISWEEP" report --out-prefix as --assertions as.csv in.csv
[ "$(cat as.csv)" = "task_id,model,trial,assertion,stage,state" ] || fail "the assertions input was written over"
echo "input cli: ok"
