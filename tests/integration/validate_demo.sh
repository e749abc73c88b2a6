# engisweep validate tasks/demo: every reference passes, every flawed
# variant and noop fails (on the assertions each variant names).
. "$(dirname "$0")/lib.sh"
"$ENGISWEEP" validate --quiet --out "$T/v" "$ENGI_SRC/tasks/demo" | tee validate.txt
grep -q "all verdicts as expected" validate.txt || fail "validate did not pass"
n_ref=$(grep -c "| reference " validate.txt)
n_tasks=$(ls "$ENGI_SRC"/tasks/demo/*.json | wc -l)
[ "$n_ref" -eq "$n_tasks" ] || fail "expected $n_tasks reference runs, saw $n_ref"
[ "$n_tasks" -ge 8 ] || fail "the demo suite has fewer than 8 tasks"
# a broken expectation must make validate fail: a flawed variant that is
# really the reference
mkdir -p bad
cp -r "$ENGI_SRC/tasks/demo/hex-nut" bad/
"$PY" - "$ENGI_SRC/tasks/demo/hex-nut.json" bad/hex-nut.json <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["flawed"][0]["steps"] = t["reference"]
json.dump(t, open(sys.argv[2], "w"), indent=1)
PY
expect_rc 1 "$ENGISWEEP" validate --quiet bad > bad.txt
grep -q "succeeded but must fail" bad.txt || fail "validate did not say why"
echo "ok"
