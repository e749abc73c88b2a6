# plan: cell count, episode-hours and API cost from turn limits and prices.
. "$(dirname "$0")/lib.sh"
cat > models.json <<'JSON'
{"models": [
  {"name": "ref", "agent": "reference"},
  {"name": "pricey", "agent": "noop", "price_in_per_mtok": 3.0, "price_out_per_mtok": 15.0,
   "est_tokens_in_per_turn": 1000000, "est_tokens_out_per_turn": 0, "est_s_per_turn": 60}
]}
JSON
"$ENGISWEEP" plan --models models.json --trials 3 --ranks 4 "$ENGI_SRC/tasks/demo" | tee plan.txt
n=$(ls "$ENGI_SRC"/tasks/demo/*.json | wc -l)
grep -q "= $((n * 2 * 3)) cells" plan.txt || fail "cell count"
# noop plays one turn: 1M tokens at \$3 per million, per cell
"$PY" - plan.txt "$n" <<'PY'
import re, sys
text = open(sys.argv[1]).read(); n = int(sys.argv[2])
row = [l for l in text.splitlines() if l.startswith("| pricey")][0].split("|")
cells, hours, cost = int(row[2]), float(row[3]), float(row[4])
assert cells == 3 * n, cells
assert abs(cost - 3.0 * cells) < 0.01, cost
assert abs(hours - cells * 60 / 3600) < 0.01, hours
PY
expect_rc 2 "$ENGISWEEP" plan --models /nonexistent.json "$ENGI_SRC/tasks/demo"
echo '{"models":[{"name":"x","agent":"noop","colour":"red"}]}' > bad.json
says "$ENGISWEEP" plan --models bad.json "$ENGI_SRC/tasks/demo" | grep -q "bad.json: /models/0/colour: unknown field" \
	|| fail "unknown model field message"
echo "ok"
