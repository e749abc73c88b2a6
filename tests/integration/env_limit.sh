# limits.env_s caps environment time apart from the wall limit: a command
# that would run past it is cut and the episode ends as time_limit, with
# the time recorded as env_s.
. "$(dirname "$0")/lib.sh"
bash "$HERE/make_suite.sh" suite 1 0
"$PY" - <<'PY'
import json
t = json.load(open("suite/tetra-1.json"))
t["limits"] = {"wall_s": 600, "env_s": 1.5}
t["reference"] = [{"run": "sleep 1"}, {"run": "sleep 5"}] + t["reference"]
json.dump(t, open("suite/tetra-1.json", "w"))
bad = dict(t, id="bad-limit", limits={"env_s": 0})
json.dump(bad, open("bad.json", "w"))
PY
start=$(date +%s)
"$ENGISWEEP" run --quiet --out r suite
[ $(( $(date +%s) - start )) -lt 5 ] || fail "the environment time limit did not cut the command"
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
(e,) = R.episodes("r/results.h5")
assert e["outcome"] == "time_limit", e
assert 1.4 < e["env_s"] < 3, e
print("env_s", e["env_s"])
PY
says "$ENGISWEEP" validate bad.json | grep -q "/limits/env_s.*greater than 0" || fail "env_s 0 accepted"
echo ok
