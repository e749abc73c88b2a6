#!/usr/bin/env bash
# Scheduler quality at scale: the synthetic 1,301-task catalogue x 7 models x
# 3 trials (27,321 cells) on the simulate backend (Pareto durations, shape
# 1.5, scaled by SCALE seconds) under mpirun with R oversubscribed ranks, for
# each R in RANKS. Prints, per R: makespan / lower bound (the larger of total
# work / workers and the longest cell), the makespan static round-robin
# sharding (what a job array does) would have had on the same durations,
# rank 0's peak memory and rank 0's wall time per dispatched cell.
#   bench/sweep_scale.sh            (RANKS="8 16 64" SCALE=0.05 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build >/dev/null
. scripts/env.sh
RANKS=${RANKS:-"8 16 64"}
SCALE=${SCALE:-0.05}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tasks/gen-catalogue "$tmp/cat" >/dev/null
cat > "$tmp/models.json" <<'JSON'
{"models": [{"name": "m1", "agent": "reference"}, {"name": "m2", "agent": "reference"},
 {"name": "m3", "agent": "flawed:open"}, {"name": "m4", "agent": "reference"},
 {"name": "m5", "agent": "noop"}, {"name": "m6", "agent": "flawed:open"},
 {"name": "m7", "agent": "reference"}]}
JSON
for r in $RANKS; do
	ENGISWEEP_SIM_SCALE_S=$SCALE mpirun -np "$r" build/src/engisweep run --quiet --backend simulate \
		--models "$tmp/models.json" --trials 3 --out "$tmp/r$r" "$tmp/cat"
	/usr/bin/python3 - "$tmp/r$r" "$r" <<'PY'
import json, sys
import h5py
out, ranks = sys.argv[1], int(sys.argv[2])
with h5py.File(out + "/results.h5", "r") as f:
    ep = f["episodes"][:]
st = json.load(open(out + "/status.json"))
workers = ranks - 1 if ranks >= 4 else ranks
start = ep["started_at"].min()
makespan = (ep["started_at"] + ep["wall_s"]).max() - start
total, longest = ep["wall_s"].sum(), ep["wall_s"].max()
bound = max(total / workers, longest)
# static round-robin over the same cells in id order, as an array job would
order = sorted(range(len(ep)), key=lambda i: ep["cell"][i])
load = [0.0] * workers
for k, i in enumerate(order):
    load[k % workers] += ep["wall_s"][i]
print(f"{ranks:3d} ranks: makespan {makespan:8.1f} s, bound {bound:8.1f} s, ratio {makespan / bound:.3f}; "
      f"static round-robin {max(load):8.1f} s ({max(load) / makespan:.2f}x ours); "
      f"rank-0 peak {st['rank0_peak_rss_mb']:.0f} MB; {st['elapsed_s'] / len(ep) * 1e3:.2f} ms/cell")
PY
done
