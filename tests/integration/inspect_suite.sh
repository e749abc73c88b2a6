# engisweep inspect SUITE: which task source reads a suite and what of it
# loads, refusals tabulated by reason with every refused file named; the
# task sources listed by inspect; --source chosen or refused up front.
. "$(dirname "$0")/lib.sh"
DEMO="$ENGI_SRC/tasks/demo"
BAD="$ENGI_SRC/tests/core/bad_tasks"
out=$("$ENGISWEEP" inspect "$DEMO") || fail "inspect demo: $out"
echo "$out" | grep -q "source: native (detected)" || fail "no source line: $out"
n=$(ls "$DEMO"/*.json | wc -l)
echo "$out" | grep -q "tasks: $n loaded, 0 refused" || fail "demo counts: $out"

expect_rc 1 "$ENGISWEEP" inspect "$BAD"
out=$(says "$ENGISWEEP" inspect "$BAD")
n=$(ls "$BAD"/*.json | wc -l)
echo "$out" | grep -q "tasks: 0 loaded, $n refused" || fail "bad corpus counts: $(echo "$out" | head -3)"
echo "$out" | grep -Eq '^  1 +/hint: unknown field$' || fail "no reason row for /hint"
echo "$out" | grep -Eq '^  3 +not valid JSON$' || fail "no JSON row"
echo "$out" | grep -q "05-unknown-top-level.json: /hint: unknown field (valid:" || fail "refused file not named"
[ "$(echo "$out" | grep -c '\.json: ')" -eq "$n" ] || fail "not every refused file named"

# one broken file beside good ones: the good ones load
mkdir mixed
cp "$DEMO"/hex-nut.json mixed/ && cp -r "$DEMO"/hex-nut mixed/ 2>/dev/null || true
cp "$BAD"/05-unknown-top-level.json mixed/
expect_rc 1 "$ENGISWEEP" inspect mixed
says "$ENGISWEEP" inspect mixed | grep -q "tasks: 1 loaded, 1 refused" || fail "mixed: $(says "$ENGISWEEP" inspect mixed)"
# ... but a sweep refuses the suite, naming the file
expect_rc 2 "$ENGISWEEP" plan --agents noop mixed
says "$ENGISWEEP" plan --agents noop mixed | grep -q "05-unknown-top-level.json: /hint: unknown field" || fail "plan message"

expect_rc 2 "$ENGISWEEP" inspect --source nope "$DEMO"
expect_rc 2 "$ENGISWEEP" run --source nope --agents noop --out r "$DEMO"
# the sources of this binary, as inspect lists them
known=$("$ENGISWEEP" inspect | sed -n '/^task sources:/,/^$/p' | awk 'NR > 1 && /^  [a-z]/ {print $1}' | paste -sd, | sed 's/,/, /g')
[ -n "$known" ] && echo "$known" | grep -q native || fail "inspect lists no task source: '$known'"
says "$ENGISWEEP" run --source nope --agents noop --out r "$DEMO" | grep -qF "no task source 'nope' (known: $known)" \
	|| fail "unknown source message"
[ ! -e r ] || fail "a refused run created its folder"
"$ENGISWEEP" plan --source native --agents noop "$DEMO" > /dev/null || fail "plan --source native"
"$ENGISWEEP" inspect | grep -q "^task sources:" || fail "inspect lists no task sources"
"$ENGISWEEP" inspect | grep -Eq '^  native +engisweep.s own task JSON' || fail "native not listed"
