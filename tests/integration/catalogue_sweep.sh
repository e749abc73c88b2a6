# Scale without a cluster: the synthetic 1,301-task catalogue (composition
# of the engineering benchmark) x 7 models x 3 trials = 27,321 cells on the
# simulate backend (heavy-tailed durations, scaled down) under mpirun with 8
# oversubscribed ranks: every cell exactly once in the results file. Also the
# catalogue's composition and a stratified subset.
. "$(dirname "$0")/lib.sh"
"$PY" "$ENGI_SRC/tasks/gen-catalogue" cat | tee gen.txt
grep -q "1301 tasks, 1723 task-application pairs" gen.txt || fail "catalogue size"
"$PY" - <<'PY'
import collections, glob, json
tasks = [json.load(open(p)) for p in sorted(glob.glob("cat/*.json"))]
by = collections.Counter((t["type"], t["interface"]) for t in tasks)
want = {("single", "cli"): 511, ("single", "gui"): 420, ("selection", "cli"): 60,
        ("selection", "gui"): 80, ("vision", "cli"): 60, ("vision", "gui"): 60,
        ("optimization", "cli"): 20, ("optimization", "gui"): 20, ("cross", "cli"): 30,
        ("cross", "gui"): 30, ("open", "cli"): 10}
assert dict(by) == want, by
assert len({t["domain"] for t in tasks}) == 6
assert len({s for t in tasks for s in t["software"]}) == 26
PY
"$ENGISWEEP" plan --agents reference --subset "strata=software,type,interface per=4-5 seed=3 all=type:open" cat > plan.txt
"$PY" - <<'PY'
import collections, glob, json, re
text = open("plan.txt").read()
m = re.search(r"(\d+) tasks from (\d+) strata", text)
got, nstrata = int(m.group(1)), int(m.group(2))
tasks = [json.load(open(p)) for p in glob.glob("cat/*.json")]
strata = collections.Counter((t["software"][0], t["type"], t["interface"]) for t in tasks)
assert nstrata == len(strata), (nstrata, len(strata))
# 4 or 5 from each stratum (all of a smaller one), plus every open task
lo = sum(min(n, 4) for n in strata.values())
hi = sum(min(n, 5) for n in strata.values()) + sum(t["type"] == "open" for t in tasks)
assert lo <= got <= hi, (lo, got, hi)
PY
"$ENGISWEEP" plan --agents reference --subset "strata=software,type,interface per=4-5 seed=3 all=type:open" cat > plan2.txt
cmp <(grep subset plan.txt) <(grep subset plan2.txt) || fail "the same seed drew another subset"
cat > models.json <<'JSON'
{"models": [
 {"name": "m1", "agent": "reference"}, {"name": "m2", "agent": "reference"},
 {"name": "m3", "agent": "flawed:open"}, {"name": "m4", "agent": "reference"},
 {"name": "m5", "agent": "noop"}, {"name": "m6", "agent": "flawed:open"},
 {"name": "m7", "agent": "reference"}
]}
JSON
start=$(date +%s)
ENGISWEEP_SIM_SCALE_S=0.001 mpirun_ -np 8 "$ENGISWEEP" run --backend simulate --models models.json \
	--trials 3 --progress-every 5000 --out big cat 2> big.log || { tail big.log; fail "the catalogue sweep failed"; }
echo "27,321 cells in $(( $(date +%s) - start )) s"
PYTHONPATH="$HERE" "$PY" - <<'PY'
import collections
import results as R
ep = R.episodes("big/results.h5")
assert len(ep) == 27321, len(ep)
count = collections.Counter(e["cell"] for e in ep)
assert len(count) == 27321 and max(count.values()) == 1, "a cell appears twice"
per_model = collections.Counter((e["model"], bool(e["success"])) for e in ep)
for m in ("m1", "m2", "m4", "m7"):
    assert per_model[(m, True)] == 3903, per_model
for m in ("m3", "m5", "m6"):
    assert per_model[(m, False)] == 3903, per_model
print("ok: 27321 cells, each once, on", len({e["rank"] for e in ep}), "ranks")
PY
