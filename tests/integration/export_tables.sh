# export --format csv|jsonl: the demo sweep (reference, noop, two trials)
# written as tables; every HDF5 row is one CSV row and one JSON line with the
# same values (Python's csv and json modules read them back), texts with
# commas and quotes survive; `report` of the exported
# episodes and assertions CSV gives the report of the results file, number
# for number; NaN values are empty in CSV and null in JSON; an unknown
# format is refused.
. "$(dirname "$0")/lib.sh"
"$ENGISWEEP" run --agents reference,noop --trials 2 --quiet --out out "$ENGI_SRC/tasks/demo" \
	> run.log 2>&1 || { cat run.log; fail "sweep"; }
"$ENGISWEEP" export out/results.h5 --format csv --out csv > csv.log || { cat csv.log; fail "export csv"; }
"$ENGISWEEP" export out/results.h5 --format jsonl --out jsonl > jsonl.log || fail "export jsonl"
grep -q "^exported [0-9]* episodes" csv.log || fail "no summary line"
expect_rc 2 "$ENGISWEEP" export out/results.h5 --format parquet --out x
"$PY" - <<'PY' || fail "tables"
import csv, h5py, json, math
f = h5py.File("out/results.h5", "r")
def s(v):
    return v.decode() if isinstance(v, bytes) else v
def same(a, b):
    if isinstance(b, float) and math.isnan(b):
        return a in ("", None)
    if isinstance(a, str):
        if isinstance(b, str):
            return a == b
        return float(a) == float(b) if a != "" else False
    if a is None:
        return False
    return a == b or float(a) == float(b)
for table, key, cols in (("episodes", "episodes", None),
                         ("assertions", "assertions", {"name": "assertion"}),
                         ("metrics", "metrics", None), ("artifacts", "artifacts", None)):
    rows = f[key][:]
    c = list(csv.DictReader(open(f"csv/{table}.csv", newline="")))
    j = [json.loads(l) for l in open(f"jsonl/{table}.jsonl")]
    assert len(c) == len(rows) == len(j), (table, len(c), len(rows), len(j))
    for r, cr, jr in zip(rows, c, j):
        for name in rows.dtype.names:
            col = (cols or {}).get(name, name)
            v = s(r[name])
            if table == "episodes" and rows.dtype[name].kind in "iu" and name in ("success", "feasible"):
                v = int(v)
            assert col in cr and col in jr, (table, col)
            jv = jr[col]
            if isinstance(jv, bool):
                jv = int(jv)
            assert same(cr[col], v), (table, name, cr[col], v)
            assert same(jv, v) or (jv is None and isinstance(v, float) and not math.isfinite(v)), (table, name, jv, v)
# the episodes carry the task's columns the report reads
t = {s(r["id"]): r for r in f["tasks"][:]}
for cr in csv.DictReader(open("csv/episodes.csv", newline="")):
    assert cr["domain"] == s(t[cr["task_id"]]["domain"]), cr
PY
"$ENGISWEEP" report out/results.h5 --out-prefix from-h5 > /dev/null 2>&1 || fail "report of the results"
"$ENGISWEEP" report csv/episodes.csv --assertions csv/assertions.csv --out-prefix from-csv > /dev/null 2>&1 \
	|| fail "report of the exported CSV"
"$PY" - <<'PY' || fail "the report of the export differs"
import json
def rows(path):
    j = json.load(open(path))
    return {(r["table"], r["group"], r["model"], r["condition"]): r for r in j["rows"]}
a, b = rows("from-h5.json"), rows("from-csv.json")
assert a.keys() == b.keys() and len(a) > 10, (sorted(a)[:5], sorted(b)[:5])
for k in a:
    for f, v in a[k].items():
        if f in ("mean_wall_s",):
            assert abs((v or 0) - (b[k][f] or 0)) < 1e-9, (k, f, v, b[k][f])
        else:
            assert v == b[k][f], (k, f, v, b[k][f])
PY
echo ok
