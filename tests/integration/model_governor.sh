# The request governor and the budget cap, with the test model server: a
# requests/min limit spaces the requests of concurrent episodes so that the
# rate the server observes is within 5 % of the limit, alone (4 episodes at
# once, 300/min) and under mpirun -np 4 (3 worker ranks asking rank 0, 60/min);
# a 429 lowers a model's concurrency limit to 0.8 of itself (3 -> 2 here);
# a model's budget cap stops dispatching its cells once its recorded cost
# reaches the cap, the run and the report say how many were left unrun, and
# --resume with a larger cap runs exactly those; --budget-usd caps the whole
# sweep the same way.
. "$(dirname "$0")/lib.sh"
. "$HERE/model_lib.sh"
bash "$HERE/make_suite.sh" suite 8 0
export ENGI_TEST_API_KEY="sk-engitest-gov-$$"
"$PY" - <<'PY'
import json, os
cmd = os.environ["TETRA_CMD"]
solve = [{"calls": [{"name": "bash", "args": {"command": cmd}}], "usage": [1000, 100]},
         {"calls": [{"name": "bash", "args": {"command": "true"}}], "usage": [1000, 100]},
         {"calls": [{"name": "done", "args": {"summary": "ok"}}], "usage": [1000, 10]}]
slow = [{"calls": [{"name": "bash", "args": {"command": cmd + "; sleep 1"}}], "usage": [10, 1]},
        {"calls": [{"name": "done", "args": {"summary": "ok"}}], "usage": [10, 1]}]
hit = [dict(slow[0], fault="429", retry_after=0)] + slow[1:]
json.dump({"models": {"solver": solve, "solver-mpi": solve, "slow": slow, "hit": hit}},
          open("script.json", "w"))
PY
start_model_server script.json --key "$ENGI_TEST_API_KEY"
U="http://127.0.0.1:$MODEL_PORT/v1"
cat > rate.json <<JSON
{"models": [{"name": "paced", "provider": "openai", "base_url": "$U", "model": "solver",
 "api_key_env": "ENGI_TEST_API_KEY", "rpm": 300, "timeout_s": 30}]}
JSON
"$ENGISWEEP" run --jobs 4 --models rate.json --quiet --out rate suite > rate.log 2>&1 \
	|| { cat rate.log; fail "paced sweep failed"; }
"$PY" - <<'PY'
import json
t = sorted(json.loads(l)["t"] for l in open("server.log"))
assert len(t) == 8 * 3, len(t)
rate = (len(t) - 1) / (t[-1] - t[0]) * 60
print("observed %.1f requests/min for a limit of 300" % rate)
assert abs(rate - 300) <= 0.05 * 300, rate
# requests are sent in slots 0.2 s apart: never a burst ahead of the slots
assert all(t[k] - t[0] >= (k - 1) * 0.2 for k in range(len(t))), t
PY

# across ranks: rank 0's buckets pace the requests of all workers
bash "$HERE/make_suite.sh" suite5 5 0
cat > mpi.json <<JSON
{"models": [{"name": "paced-mpi", "provider": "openai", "base_url": "$U", "model": "solver-mpi",
 "api_key_env": "ENGI_TEST_API_KEY", "rpm": 60, "timeout_s": 30}]}
JSON
mpirun_ -np 4 "$ENGISWEEP" run --models mpi.json --quiet --out mpi suite5 > mpi.log 2>&1 \
	|| { cat mpi.log; fail "paced sweep under mpirun failed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import json
import results as R
ep = R.episodes("mpi/results.h5")
assert len(ep) == 5 and all(e["success"] == 1 for e in ep), ep
assert len({e["rank"] for e in ep}) >= 2, {e["rank"] for e in ep}
t = sorted(l["t"] for l in map(json.loads, open("server.log")) if l["model"] == "solver-mpi")
assert len(t) == 5 * 3, len(t)
rate = (len(t) - 1) / (t[-1] - t[0]) * 60
print("observed %.2f requests/min across 3 worker ranks for a limit of 60" % rate)
assert abs(rate - 60) <= 0.05 * 60, rate
PY

# adaptive concurrency: 6 episodes of about 1 s, at most 3 at once; after a
# 429 in the first wave, the second wave runs 2 at once
for m in slow hit; do
	cat > "$m.json" <<JSON
{"models": [{"name": "$m", "provider": "anthropic", "base_url": "$U", "model": "$m",
 "api_key_env": "ENGI_TEST_API_KEY", "max_concurrent": 3, "timeout_s": 30, "retry_base_s": 0.05}]}
JSON
	bash "$HERE/make_suite.sh" "suite-$m" 6 0
	"$ENGISWEEP" run --jobs 3 --models "$m.json" --quiet --out "ac-$m" "suite-$m" > "ac-$m.log" 2>&1 \
		|| { cat "ac-$m.log"; fail "adaptive sweep $m failed"; }
done
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
def second_wave_peak(path):
    ep = R.episodes(path)
    assert len(ep) == 6 and all(e["success"] == 1 for e in ep), ep
    first_end = min(e["started_at"] + e["wall_s"] for e in ep)
    late = [e for e in ep if e["started_at"] >= first_end - 0.05]
    ev = sorted([(e["started_at"], 1) for e in late] + [(e["started_at"] + e["wall_s"], -1) for e in late],
                key=lambda x: (x[0], x[1]))
    live = peak = 0
    for _, d in ev:
        live += d
        peak = max(peak, live)
    return peak
a, b = second_wave_peak("ac-slow/results.h5"), second_wave_peak("ac-hit/results.h5")
print("second wave: %d at once without a 429, %d after one" % (a, b))
assert a == 3 and b == 2, (a, b)
PY

# budget: each episode costs 3210 tokens at $1/Mtok = $0.00321; a cap of
# $0.008 is reached after the third episode (one at a time)
cat > budget.json <<JSON
{"models": [{"name": "capped", "provider": "anthropic", "base_url": "$U", "model": "solver",
 "api_key_env": "ENGI_TEST_API_KEY", "price_in_per_mtok": 1, "price_out_per_mtok": 1,
 "budget_usd": 0.008, "timeout_s": 30}]}
JSON
"$ENGISWEEP" run --jobs 1 --models budget.json --out budget suite > budget.log 2>&1 \
	|| { cat budget.log; fail "budget sweep failed"; }
grep -q "5 cells unrun" budget.log || { cat budget.log; fail "the budget did not stop dispatch after 3 cells"; }
"$ENGISWEEP" report budget/results.h5 > report.md
grep -q "| missing (planned - recorded) | 5 |" report.md || { cat report.md; fail "report does not count the unrun cells"; }
sed -i 's/"budget_usd": 0.008/"budget_usd": 1/' budget.json
"$ENGISWEEP" run --resume --jobs 2 --models budget.json --out budget suite > resume.log 2>&1 \
	|| { cat resume.log; fail "resume failed"; }
grep -q "0 cells unrun" resume.log || { cat resume.log; fail "resume left cells unrun"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
ep = R.episodes("budget/results.h5")
assert len(ep) == 8 and all(e["success"] == 1 for e in ep), ep
assert abs(sum(e["cost_usd"] for e in ep) - 8 * 0.00321) < 1e-9
PY
# the sweep's cap, over two models without caps of their own
"$PY" - <<'PY'
import json
m = json.load(open("budget.json"))["models"][0]
del m["budget_usd"]
json.dump({"models": [dict(m, name="free"), dict(m, name="free-too")]}, open("sweepcap.json", "w"))
PY
"$ENGISWEEP" run --jobs 1 --budget-usd 0.008 --models sweepcap.json --out sweepcap suite > sweepcap.log 2>&1 \
	|| { cat sweepcap.log; fail "sweep with --budget-usd failed"; }
grep -q "13 cells unrun" sweepcap.log || { cat sweepcap.log; fail "--budget-usd did not stop dispatch after 3 cells"; }
echo "ok"
