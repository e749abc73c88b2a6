# Licence tokens and per-model concurrency caps hold at dispatch, alone and
# under mpirun: episodes holding the one 'lic' token never overlap in time.
. "$(dirname "$0")/lib.sh"
bash "$HERE/make_suite.sh" lic 6 0.5 lic

check_no_overlap() {
	PYTHONPATH="$HERE" "$PY" - "$1" "$2" <<'PY'
import sys
import results as R
ep = sorted(R.episodes(sys.argv[1]), key=lambda e: e["started_at"])
cap = int(sys.argv[2])
assert len(ep) == 6, len(ep)
events = []
for e in ep:
    events += [(e["started_at"], 1), (e["started_at"] + e["wall_s"], -1)]
live = peak = 0
for t, d in sorted(events, key=lambda x: (x[0], x[1])):
    live += d
    peak = max(peak, live)
assert peak <= cap, f"{peak} episodes held the token at once (cap {cap})"
print("peak", peak)
PY
}

"$ENGISWEEP" run --jobs 3 --resource lic=1 --quiet --out serial lic
check_no_overlap serial/results.h5 1
mpirun_ -np 4 "$ENGISWEEP" run --resource lic=1 --quiet --out mpi lic
check_no_overlap mpi/results.h5 1

# a per-model cap: at most 2 at once with 3 slots
cat > models.json <<'JSON'
{"models": [{"name": "capped", "agent": "reference", "max_concurrent": 2}]}
JSON
"$ENGISWEEP" run --jobs 3 --models models.json --quiet --out capped lic
check_no_overlap capped/results.h5 2
# a pool of no tokens would block its cells forever: refused before anything runs
expect_rc 2 "$ENGISWEEP" run --jobs 2 --resource lic=0 --out none lic
[ ! -e none ] || fail "a refused run created its folder"
echo "ok"
