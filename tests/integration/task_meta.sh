# Task metadata for report --by: a native task's meta loads and a bad one
# is refused with file and pointer; StructureClaw-Bench scenarios carry
# family, locale, structure_type... into the results' /task_meta (read
# with h5py), swept in two pieces by the reference and noop on the local
# backend, merged, and reported by family, locale and structure type with
# the right task counts and scores; a merge of files that disagree on a
# value keeps the conflict, and report --by that key refuses it; a key no
# task has is refused with the keys there are.
. "$(dirname "$0")/lib.sh"
SHARED=$ENGI_SRC/../shared/benchmarks/structureclaw-bench
[ -f "$SHARED/fixtures/ground-truth-models.json" ] || fail "the benchmark's data is not at $SHARED"

# --- a native suite: meta loads, is swept, is reported by ---
bash "$HERE/make_suite.sh" native 3 0
"$PY" - <<'PY'
import json
meta = {1: {"lab": "north", "level": 2}, 2: {"lab": "south", "level": 2, "public": True},
        3: {"lab": "north", "level": 1.5}}
for i, m in meta.items():
    p = "native/tetra-%d.json" % i
    t = json.load(open(p))
    t["meta"] = m
    json.dump(t, open(p, "w"))
PY
"$ENGISWEEP" run --agents reference,noop --quiet --out rn native > run_native.log 2>&1 \
	|| { cat run_native.log; fail "native sweep"; }
"$ENGISWEEP" report --by lab --by level --by public --out-prefix rn/rep rn/results.h5 > rn.md 2>&1 \
	|| { cat rn.md; fail "report --by lab"; }
"$PY" - <<'PY'
import csv
rows = {(r["table"], r["group"], r["model"]): r for r in csv.DictReader(open("rn/rep.csv"))}
def tasks(t, g, m="reference"):
    return int(rows[(t, g, m)]["tasks"])
assert tasks("lab", "north") == 2 and tasks("lab", "south") == 1, rows.keys()
assert tasks("level", "2") == 2 and tasks("level", "1.5") == 1
assert tasks("public", "true") == 1 and tasks("public", "(unknown)") == 2
assert float(rows[("lab", "north", "reference")]["score_x100"]) == 100
assert float(rows[("lab", "north", "noop")]["score_x100"]) == 0
print("ok: a native suite's meta grouped")
PY
# a bad value: refused, naming the file and the pointer
mkdir -p badmeta
"$PY" - <<'PY'
import json
t = json.load(open("native/tetra-1.json"))
t["meta"] = {"lab": {"room": 3}}
json.dump(t, open("badmeta/tetra-1.json", "w"))
t["meta"] = {"domain": "CAE"}
json.dump(t, open("badmeta/tetra-2.json", "w"))
PY
expect_rc 1 "$ENGISWEEP" inspect badmeta > bad.txt 2>&1
grep -qF "badmeta/tetra-1.json: /meta/lab: expected a string, a number or a boolean, found an object" bad.txt \
	|| fail "bad value: $(cat bad.txt)"
grep -qF "badmeta/tetra-2.json: /meta/domain: 'domain' is a key the report takes from the task itself" bad.txt \
	|| fail "reserved key: $(cat bad.txt)"

# --- StructureClaw-Bench: six scenarios in two pieces ---
mk_bench() {
	mkdir -p "$1/scenarios/standard_workflow" "$1/scenarios/interactive_robustness" \
		"$1/scenarios/multimodal_reverse_engineering"
	cp -r "$SHARED/fixtures" "$1/"
}
mk_bench b1
mk_bench b2
for f in beam-static-with-report frame-1story-yjk-static frame-industrial-heavy; do
	cp "$SHARED/scenarios/standard_workflow/$f.json" b1/scenarios/standard_workflow/
done
for f in beam-error-impossible-values robust-beam-negative-span; do
	cp "$SHARED/scenarios/interactive_robustness/$f.json" b2/scenarios/interactive_robustness/
done
cp "$SHARED/scenarios/multimodal_reverse_engineering/image-frame-sketch.json" \
	b2/scenarios/multimodal_reverse_engineering/
for b in b1 b2; do
	"$ENGISWEEP" run --agents reference,noop --retries 0 --quiet --out "r$b" "$b" > "run_$b.log" 2>&1 \
		|| { cat "run_$b.log"; fail "the sweep of $b failed"; }
done
"$ENGISWEEP" merge -o merged.h5 rb1/results.h5 rb2/results.h5 > merge.log 2>&1 \
	|| { cat merge.log; fail "merge"; }
# what h5py sees: /task_meta, one row per scenario and key, carried by merge
PYTHONPATH="$HERE" "$PY" - <<'PY'
import results as R
m1, m2, m = (R.task_meta(p) for p in ("rb1/results.h5", "rb2/results.h5", "merged.h5"))
assert len(m1) == 3 * 7 and len(m2) == 3 * 7, (len(m1), len(m2))
assert m == {**m1, **m2}, "merge lost or changed rows"
want = {"family": "multimodal_reverse_engineering", "locale": "zh", "structure_type": "frame",
        "difficulty": "L2", "category": "multimodal", "modality": "image", "split": "auxiliary"}
got = {k: v for (t, k), (v, c) in m.items() if t == "image-frame-sketch"}
assert got == want, got
assert all(c == "" for v, c in m.values())
assert m[("beam-static-with-report", "locale")] == ("zh", "")
assert m[("frame-1story-yjk-static", "locale")] == ("en", "")
print("ok: /task_meta read with h5py, carried by merge")
PY
check_report() { # PREFIX: the groups and their task counts, reference 100, noop lower
	"$PY" - "$1.csv" <<'PY'
import csv, sys
rows = {}
for r in csv.DictReader(open(sys.argv[1])):
    rows.setdefault(r["table"], {})[(r["group"], r["model"])] = r
def counts(table, model="reference"):
    return {g: int(r["tasks"]) for (g, m), r in rows[table].items() if m == model}
assert counts("overall") == {"all": 6}, counts("overall")
assert counts("family") == {"standard_workflow": 3, "interactive_robustness": 2,
                            "multimodal_reverse_engineering": 1}, counts("family")
assert counts("locale") == {"en": 2, "zh": 4}, counts("locale")
assert counts("structure_type") == {"beam": 3, "frame": 3}, counts("structure_type")
assert counts("family", "noop") == counts("family")
for t in ("family", "locale", "structure_type"):
    for (g, m), r in rows[t].items():
        if m == "reference":
            assert float(r["score_x100"]) == 100, (t, g, r["score_x100"])
std = rows["family"][("standard_workflow", "noop")]
assert float(std["score_x100"]) == 0, std["score_x100"]
print("ok: report by family, locale and structure_type:", sys.argv[1])
PY
}
"$ENGISWEEP" report --by family --by locale --by structure_type --out-prefix merged merged.h5 \
	> merged.md 2>&1 || { cat merged.md; fail "report of the merged file"; }
check_report merged
grep -q "^## Score by structure_type" merged.md || fail "no structure_type table: $(cat merged.md)"
grep -q "^| reference | 100.0 (n=2, few tasks) | 100.0 (n=4, few tasks) |" merged.md \
	|| fail "locale table: $(grep -A4 'by locale' merged.md)"
# both files read together, without merging: the same groups
"$ENGISWEEP" report --by family --by locale --by structure_type --out-prefix both \
	rb1/results.h5 rb2/results.h5 > both.md 2>&1 || { cat both.md; fail "report of two files"; }
check_report both

# a key no task has: refused, with the keys there are
expect_rc 2 "$ENGISWEEP" report --by colour merged.h5 > colour.txt 2>&1
grep -qF -- "--by 'colour': no task has this metadata key (known: type, domain, interface, software, title, scoring, turns; the metadata of these results: family, locale, structure_type, difficulty, category, modality, split)" colour.txt \
	|| fail "unknown key: $(cat colour.txt)"

# two files that disagree on a value: merge keeps the conflict, --by refuses it
"$PY" - <<'PY'
import shutil, h5py
shutil.copy("rb2/results.h5", "other.h5")
with h5py.File("other.h5", "a") as f:
    d = f["task_meta"]
    rows = d[:]
    for r in rows:
        if r["task_id"] == b"image-frame-sketch" and r["key"] == b"locale":
            r["value"] = b"en"
    d[:] = rows
PY
"$ENGISWEEP" merge -o conflict.h5 rb2/results.h5 other.h5 > merge2.log 2>&1 || { cat merge2.log; fail "merge 2"; }
expect_rc 2 "$ENGISWEEP" report --by locale conflict.h5 > conflict.txt 2>&1
grep -qF "not task metadata: task 'image-frame-sketch' has locale 'en' in 'other.h5' and 'zh' in 'rb2/results.h5'" conflict.txt \
	|| fail "merged conflict: $(cat conflict.txt)"
"$ENGISWEEP" report --by family conflict.h5 > /dev/null 2>&1 || fail "a key without conflict refused"
# the two read together: the same refusal, without a merge
expect_rc 2 "$ENGISWEEP" report --by locale rb2/results.h5 other.h5 > conflict2.txt 2>&1
grep -qF "task 'image-frame-sketch' has 'zh' in one input and 'en' in another" conflict2.txt \
	|| fail "conflict across inputs: $(cat conflict2.txt)"

# a scenario whose metadata is not a string is refused with its pointer
mk_bench b3
"$PY" - "$SHARED/scenarios/standard_workflow/frame-1story-yjk-static.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["locale"] = 7
json.dump(s, open("b3/scenarios/standard_workflow/frame-1story-yjk-static.json", "w"))
s = json.load(open(sys.argv[1]))
s["id"] = "beam-no-meta"
for k in ("locale", "structureType", "difficulty", "category", "inputModality", "split"):
    del s[k]
json.dump(s, open("b3/scenarios/standard_workflow/beam-no-meta.json", "w"))
PY
expect_rc 1 "$ENGISWEEP" inspect b3 > b3.txt 2>&1
grep -qF "frame-1story-yjk-static.json: /locale: expected a string of 1 to 127 bytes, found an integer" b3.txt \
	|| fail "malformed locale: $(cat b3.txt)"
grep -q "tasks: 1 loaded, 1 refused" b3.txt || fail "b3 counts: $(cat b3.txt)"
echo ok
