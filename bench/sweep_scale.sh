#!/usr/bin/env bash
# Scheduler quality at scale: the synthetic 1,301-task catalogue x 7 models x
# 3 trials (27,321 cells) on the simulate backend (heavy-tailed durations per
# task and model, Pareto shape 1.5 with minimum SCALE seconds, capped at
# 100 x SCALE, a log-normal spread of 0.25 between trials) under mpirun with R
# oversubscribed ranks, for each R in RANKS. Then the same cells as a job
# array would run them: R - 1 independent serial processes, each taking the
# static share `--shard k/(R-1)` (round robin in cell-id order), all started
# at once. Prints, per R: makespan / lower bound (the larger of total episode
# time / workers and the longest cell), the static shards' makespan and its
# ratio to ours, rank 0's peak memory and rank 0's wall time per cell.
#   bench/sweep_scale.sh   (RANKS="8 16 64"; STATIC=0 skips the job-array
#                           comparison; SCALE, in seconds, defaults to 0.05 up
#                           to 16 ranks and 0.1 above: all processes together
#                           spend about 3 ms of CPU per cell, so 64 ranks on
#                           2 cores at 0.05 s would measure the CPU, not the
#                           schedule)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build >/dev/null
. scripts/env.sh
RANKS=${RANKS:-"8 16 64"}
STATIC=${STATIC:-1}
E=build/src/engisweep
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tasks/gen-catalogue "$tmp/cat" >/dev/null
cat > "$tmp/models.json" <<'JSON'
{"models": [{"name": "m1", "agent": "reference"}, {"name": "m2", "agent": "reference"},
 {"name": "m3", "agent": "flawed:open"}, {"name": "m4", "agent": "reference"},
 {"name": "m5", "agent": "noop"}, {"name": "m6", "agent": "flawed:open"},
 {"name": "m7", "agent": "reference"}]}
JSON
export OMP_NUM_THREADS=1
for r in $RANKS; do
	scale=${SCALE:-$([ "$r" -le 16 ] && echo 0.05 || echo 0.1)}
	export ENGISWEEP_SIM_SCALE_S=$scale
	echo "# $r ranks, scale $scale s, $(getconf _NPROCESSORS_ONLN) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
	mpirun -np "$r" $E run --quiet --backend simulate --models "$tmp/models.json" --trials 3 \
		--out "$tmp/r$r" "$tmp/cat"
	workers=$((r >= 4 ? r - 1 : r))
	shards=()
	if [ "$STATIC" = 1 ]; then
		pids=()
		for ((k = 0; k < workers; k++)); do
			$E run --quiet --backend simulate --models "$tmp/models.json" --trials 3 \
				--jobs 1 --shard "$k/$workers" --out "$tmp/s$r-$k" "$tmp/cat" &
			pids+=($!)
			shards+=("$tmp/s$r-$k")
		done
		for p in "${pids[@]}"; do wait "$p"; done
	fi
	/usr/bin/python3 - "$tmp/r$r" "$r" "$workers" "${shards[@]}" <<'PY'
import json, sys
import h5py
import numpy as np
out, ranks, workers, shards = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def episodes(d):
    with h5py.File(d + "/results.h5", "r") as f:
        return f["episodes"][:]
ep = episodes(out)
st = json.load(open(out + "/status.json"))
assert len(ep) == 27321 and len(set(ep["cell"])) == len(ep), "cells missing or repeated"
start = ep["started_at"].min()
makespan = (ep["started_at"] + ep["wall_s"]).max() - start
total, longest = ep["wall_s"].sum(), ep["wall_s"].max()
bound = max(total / workers, longest)
line = (f"{ranks:3d} ranks: makespan {makespan:7.1f} s, bound {bound:7.1f} s, ratio {makespan / bound:.3f}; ")
if shards:
    se = np.concatenate([episodes(d) for d in shards])
    assert len(se) == 27321 and len(set(se["cell"])) == len(se), "the shards miss or repeat cells"
    smk = (se["started_at"] + se["wall_s"]).max() - se["started_at"].min()
    sb = max(se["wall_s"].sum() / workers, se["wall_s"].max())
    line += f"static shards {smk:7.1f} s (bound {sb:.1f} s, {smk / makespan:.2f}x ours); "
line += f"rank-0 peak {st['rank0_peak_rss_mb']:.0f} MB; {st['elapsed_s'] / len(ep) * 1e3:.2f} ms/cell"
print(line, flush=True)
PY
done
