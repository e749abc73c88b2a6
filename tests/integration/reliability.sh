# The reliability campaign (reliability.py): kill -9 of the whole process
# tree at random moments during a sweep and during its resume, alone and
# under mpirun with 3 ranks, then --resume to completion: no episode lost,
# none twice in results.h5, none finished run again, no verdict changed,
# results.h5 opens (h5py, h5dump) after every kill. The counts go to the
# output as a table and to reliability.json in the scratch folder.
#   ENGI_RELIABILITY_ROUNDS=N  rounds per mode (default 2; each round kills
#                              twice), e.g. 50 for a long campaign
#   ENGI_RELIABILITY_SEED=S    the kill times' seed (default: a random one,
#                              printed)
# The agents' hostile side (links, caps, endless output, runaway commands)
# is hostile_local.sh, run here as the campaign's last part.
. "$(dirname "$0")/lib.sh"
rounds=${ENGI_RELIABILITY_ROUNDS:-2}
seed=${ENGI_RELIABILITY_SEED:-$("$PY" -c 'import random; print(random.SystemRandom().randrange(1 << 31))')}
# 48 cells (8 tasks, reference and flawed:open, 3 trials), 24 of them sleep
# 0.6 s: with 3 episodes at once, a sweep runs 5-10 s
bash "$HERE/make_suite.sh" suite 8 0.6
export MPI_ASAN_OPTIONS
"$PY" "$HERE/reliability.py" --engisweep "$ENGISWEEP" --suite "$T/suite" --seed "$seed" \
	--rounds "$rounds" --json "$T/reliability.json"
ENGI_TEST_NAME="${ENGI_TEST_NAME:-reliability}-hostile" bash "$HERE/hostile_local.sh" ||
	fail "hostile_local.sh failed"
echo "hostile agents: ok (hostile_local.sh)"
