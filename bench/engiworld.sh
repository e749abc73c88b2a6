#!/usr/bin/env bash
# EngiWorld figures (docs/benchmarks.md): loading a tree of all 1,301 task
# ids of the benchmark's inventory (../shared/benchmarks/engiworld, ids
# only; each task our own CLI task in the benchmark's format), and the
# per-episode cost of a CLI task in a restored guest of the tools image
# (start, setup upload, the agent, the evaluator uploaded and run), from
# the episodes' own timings, beside the same tasks on the local backend.
# Usage: bench/engiworld.sh [EPISODES]   (default 6)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-6}
BIN=build/src/engisweep
INV=../shared/benchmarks/engiworld/inventory.tsv
[ -x "$BIN" ] || scripts/build >/dev/null
[ -f "$INV" ] || { echo "no inventory at $INV" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash tests/engiworld/make_tree.sh "$tmp/one"
src=$tmp/one/task/single-software-execution/cli/calculix/task-01
/usr/bin/python3 - "$INV" "$src" "$tmp/big/task" <<'PY'
import json, os, shutil, sys
inv, src, root = sys.argv[1:4]
tmpl = open(os.path.join(src, "task-01.json")).read()
os.makedirs(root)
shutil.copy(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(src)))),
                         "taxonomy.json"), root)
for line in list(open(inv))[1:]:
    tid, path, cat, iface, sw, osname = line.rstrip("\n").split("\t")
    task = os.path.basename(path)
    d = os.path.join(root, os.path.relpath(path, "task"))
    shutil.copytree(src, d, ignore=shutil.ignore_patterns("task-01.json"))
    t = json.loads(tmpl.replace("task-01", task))
    t["id"] = tid
    open(os.path.join(d, task + ".json"), "w").write(json.dumps(t))
PY
best=1e9
for _ in 1 2 3; do
	t0=$(date +%s.%N)
	"$BIN" inspect "$tmp/big" > "$tmp/inspect.txt" 2>&1 || true
	t1=$(date +%s.%N)
	best=$(python3 -c "print(min($best, $t1 - $t0))")
done
grep "tasks:" "$tmp/inspect.txt"
python3 -c "print(f'load of the 1,301-task tree: {$best:.3f} s (best of 3), {$best / 1301 * 1000:.3f} ms a task')"

# per episode: the solvable task, N trials, on qemu (tools) and local
echo single-software-execution--cli--calculix--task-01--ubuntu > "$tmp/one.txt"
for be in local qemu; do
	ENGI_QEMU_NO_BUILD=1 "$BIN" run --backend "$be" --agents reference --trials "$N" --quiet \
		--subset file:"$tmp/one.txt" --out "$tmp/r-$be" "$tmp/one" > "$tmp/$be.log" 2>&1 \
		|| { cat "$tmp/$be.log"; exit 1; }
	/usr/bin/python3 - "$tmp/r-$be/results.h5" "$be" <<'PY'
import statistics, sys
sys.path.insert(0, "tests/integration")
import results as R
ep = R.episodes(sys.argv[1])
med = lambda k: statistics.median(e[k] for e in ep)
print(f"{sys.argv[2]:5s}: {len(ep)} episodes, median wall {med('wall_s'):.2f} s "
      f"(environment {med('env_s'):.2f} s, evaluator {med('verify_s'):.2f} s), "
      f"all passed: {all(e['success'] for e in ep)}")
PY
done
