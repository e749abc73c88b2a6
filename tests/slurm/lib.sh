# Sourced by the SLURM tests: scratch folder, a private cluster, job helpers.
. "$ENGI_SRC/tests/integration/lib.sh"
CLUSTER="$T/cluster"
eval "$("$ENGI_SRC/jobscripts/testing/slurm-up" "$CLUSTER" 8)"
trap '"$ENGI_SRC/jobscripts/testing/slurm-down" "$CLUSTER"' EXIT

# job_state ID: COMPLETED, RUNNING, PENDING, ... (empty when unknown)
job_state() {
	timeout 10 scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2
}

# wait_job ID LIMIT_S: waits until the job has ended; prints its state
wait_job() {
	local id=$1 limit=$2 st=""
	for _ in $(seq 1 $((limit * 2))); do
		st=$(job_state "$id")
		case "$st" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
		sleep 0.5
	done
	echo "$st"
}
