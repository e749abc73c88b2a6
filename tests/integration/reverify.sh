# Verdicts say which verifier made them, and a results file can be judged
# again. Records (journal and HDF5) carry the engisweep version and the
# verifier kind@version; --resume refuses records judged by other verifier
# versions unless told to mix, and the report then says the file mixes
# them; reverify re-judges the saved deliverables into a new file and
# prints exactly the verdicts that changed; a task changed since the sweep
# is refused.
. "$(dirname "$0")/lib.sh"
bash "$HERE/make_suite.sh" suite 2 0
"$ENGISWEEP" run --agents reference,noop --quiet --out r suite > run.log 2>&1 || { cat run.log; fail "run"; }
grep -q '"verifier":"mesh@1"' r/journal.jsonl || fail "journal records name no verifier"
grep -q "\"version\":\"$("$ENGISWEEP" --version | cut -d' ' -f2)\"" r/journal.jsonl \
	|| fail "journal records name no engisweep version"
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
ep = R.episodes("r/results.h5")
assert len(ep) == 4 and all(e["verifier"] == "mesh@1" and e["version"] for e in ep), ep
PY

# the same verifiers, the same deliverables: nothing changes
"$ENGISWEEP" reverify r/results.h5 --out same.h5 > same.txt 2>&1 || { cat same.txt; fail "reverify"; }
grep -q "reverified 4 of 4 episodes with this binary's verifiers: 0 verdicts changed" same.txt \
	|| { cat same.txt; fail "unexpected changes: $(cat same.txt)"; }

# one delivery altered after the sweep: exactly that verdict changes
cell=$(PYTHONPATH="$HERE" "$PY" -c "
import results as R
print([e['cell'] for e in R.episodes('r/results.h5') if e['task_id'] == 'tetra-1' and e['model'] == 'reference'][0])")
printf 'solid t\nendsolid t\n' > "r/artifacts/$cell/tetra.stl"
"$ENGISWEEP" reverify r/results.h5 --out new.h5 > new.txt 2>&1 || { cat new.txt; fail "reverify"; }
grep -q "1 verdict changed" new.txt || { cat new.txt; fail "expected one change"; }
grep -q "^tetra-1 reference base trial 0: success 1 -> 0, score 1 -> 0; closed: pass -> " new.txt \
	|| { cat new.txt; fail "the change is not described"; }
[ "$(grep -c ' trial ' new.txt)" -eq 1 ] || { cat new.txt; fail "other verdicts printed"; }
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
old = {e["cell"]: e for e in R.episodes("r/results.h5")}
new = {e["cell"]: e for e in R.episodes("new.h5")}
assert old.keys() == new.keys()
diff = [c for c in old if old[c]["success"] != new[c]["success"]]
assert len(diff) == 1 and new[diff[0]]["task_id"] == "tetra-1", diff
for c in old:   # the runs themselves are kept
    for k in ("turns", "tokens_in", "wall_s", "started_at", "trial", "model"):
        assert old[c][k] == new[c][k], (k, old[c], new[c])
    assert R.trace("new.h5", c) == R.trace("r/results.h5", c)
PY
expect_rc 2 "$ENGISWEEP" reverify r/results.h5 --out new.h5

# a task that changed since the sweep
cp -r suite suite2
sed -i 's/"closed"/"shut"/; s/\["closed"\]/["shut"]/' suite2/tetra-2.json
expect_rc 2 "$ENGISWEEP" reverify --suite suite2 r/results.h5 --out x.h5
says "$ENGISWEEP" reverify --suite suite2 r/results.h5 --out x.h5 | grep -q "task 'tetra-2' changed since the sweep" \
	|| fail "changed task not named"

# resume with records of another verifier version: refused, then mixed on request
bash "$HERE/make_suite.sh" suite3 3 0
"$ENGISWEEP" run --agents reference --quiet --out m suite3 > m.log 2>&1 || { cat m.log; fail "run"; }
# the first record (line 2, after the journal's header) as an older binary wrote it
sed -i '2s/"verifier":"mesh@1"/"verifier":"mesh@0"/' m/journal.jsonl
grep -q '"verifier":"mesh@0"' m/journal.jsonl || fail "journal not edited"
expect_rc 2 "$ENGISWEEP" run --resume --agents reference --quiet --out m suite3
says "$ENGISWEEP" run --resume --agents reference --quiet --out m suite3 \
	| grep -q "1 finished episode was judged by other verifiers than this binary's (cell .* was judged by mesh@0, this binary has mesh@1)" \
	|| fail "refusal does not say why"
"$ENGISWEEP" run --resume --mix-verifiers --agents reference --quiet --out m suite3 > mix.log 2>&1 \
	|| { cat mix.log; fail "resume --mix-verifiers"; }
"$ENGISWEEP" report m/results.h5 > rep.txt 2>&1 || { cat rep.txt; fail "report"; }
grep -q "Warning: verdicts from different verifiers (kind@version):\*\* mesh@0 (1 episode), mesh@1 (2 episodes)" rep.txt \
	|| { head -20 rep.txt; fail "report does not say the file mixes verifiers"; }
