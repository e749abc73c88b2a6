# merge: two shards of an ablation (one condition each) and a continued run
# become one file with each cell once and traces intact; files that define a
# task differently are refused.
. "$(dirname "$0")/lib.sh"
bash "$HERE/make_suite.sh" suite 4 0
"$ENGISWEEP" run --quiet --agents reference,flawed:open --condition short:history_turns=5 --out a suite
"$ENGISWEEP" run --quiet --agents reference,flawed:open --condition long:history_turns=15 --out b suite
"$ENGISWEEP" merge -o merged.h5 a/results.h5 b/results.h5 a/results.h5 2> merge.log
grep -q "16 cells (8 duplicate records dropped)" merge.log || { cat merge.log; fail "merge counts"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import collections, h5py
import results as R
ep = R.episodes("merged.h5")
assert len(ep) == 16, len(ep)
assert max(collections.Counter(e["cell"] for e in ep).values()) == 1
a = R.verdicts("a/results.h5"); b = R.verdicts("b/results.h5"); m = R.verdicts("merged.h5")
assert m == {**a, **b}, "merged verdicts differ from the inputs"
with h5py.File("merged.h5", "r") as f:
    conds = sorted(R.s(c["name"]) for c in f["conditions"][:])
    assert conds == ["long", "short"], conds
    assert int(f.attrs["planned_cells"]) == 16, f.attrs["planned_cells"]
    na = {R.s(x["cell"]) for x in f["assertions"][:]}
    assert na == set(m), "assertions missing for some cells"
t = R.trace("merged.h5", ep[0]["cell"])
assert t[0]["ev"] == "episode" and t[-1]["ev"] == "verdict"
print("ok")
PY
"$ENGISWEEP" report merged.h5 > merged.md
grep -q "| reference | short |" merged.md && grep -q "| reference | long |" merged.md || fail "report of the merged file"
# the bootstrap options report and compare share
for cmd in report compare; do
	"$ENGISWEEP" $cmd --seed 7 --draws 500 --level 0.9 --min-tasks 2 --interval bca merged.h5 > /dev/null \
		|| fail "$cmd with every bootstrap option"
	expect_rc 2 "$ENGISWEEP" $cmd --interval median merged.h5
	says "$ENGISWEEP" $cmd --interval median merged.h5 | grep -q "'median' is not percentile or bca" \
		|| fail "$cmd: no reason for a bad --interval"
	expect_rc 2 "$ENGISWEEP" $cmd --draws 5 merged.h5
done
# a task whose content changed is another task: refuse
mkdir -p suite2 && cp suite/*.json suite2/
sed -i 's/Write a closed unit tetrahedron/Write a closed tetrahedron/' suite2/tetra-1.json
"$ENGISWEEP" run --quiet --agents reference --out c suite2
expect_rc 2 "$ENGISWEEP" merge -o bad.h5 a/results.h5 c/results.h5
says "$ENGISWEEP" merge -o bad.h5 a/results.h5 c/results.h5 | grep -q "define task 'tetra-1' differently" \
	|| fail "no reason given for refusing the merge"
[ ! -e bad.h5 ] || fail "a refused merge left a file"
expect_rc 2 "$ENGISWEEP" merge -o merged.h5 a/results.h5
echo "ok"
