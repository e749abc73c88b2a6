#!/usr/bin/python3
"""Reads a results file written by store_tool with h5py alone, as someone
without engisweep would: dataset names, row counts, field names and values,
root attributes, and a trace decompressed with the zstd command line tool.
The expected values follow the formulas of fixture.h.

usage: check_h5py.py STORE_TOOL WORKDIR
"""
import json
import math
import os
import subprocess
import sys

import h5py
import numpy as np

RECORDS = 3
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAILED:", what, file=sys.stderr)


def cell(i):
    return "%016x" % (0xC0FFEE00 + i)


def same(a, b):
    if isinstance(b, float) and math.isnan(b):
        return math.isnan(a)
    return a == b


EPISODE_FIELDS = [
    "cell", "task_id", "model", "condition", "trial", "outcome", "attempts",
    "success", "feasible", "score", "quality", "turns", "tokens_in",
    "tokens_out", "cost_usd", "wall_s", "env_s", "model_s", "verify_s",
    "started_at", "rank", "host", "run_id", "message", "infra", "version", "verifier",
    "run_outcome", "run_message", "judge_tokens_in", "judge_tokens_out",
    "judge_cost_usd"]
JUDGE_FIELDS = ("judge_tokens_in", "judge_tokens_out", "judge_cost_usd")
ASSERTION_FIELDS = ["cell", "name", "stage", "state", "required", "value",
                    "expected", "detail"]
METRIC_FIELDS = ["cell", "name", "value"]
ARTIFACT_FIELDS = ["cell", "path", "bytes", "sha256", "note"]
TASK_FIELDS = ["id", "title", "domain", "type", "interface", "software",
               "hash", "turns", "wall_s", "scoring"]
MODEL_FIELDS = ["name", "agent", "settings", "price_in_per_mtok",
                "price_out_per_mtok"]
CONDITION_FIELDS = ["name", "settings"]
TASK_META_FIELDS = ["task_id", "key", "value", "conflict"]
STATES = ["pass", "fail", "inapplicable", "unavailable"]


def episode(i):
    return {
        "cell": cell(i), "task_id": "task-%d" % (i % 2),
        "model": "model-%s" % "ab"[i % 2], "condition": "baseline",
        "trial": i, "outcome": "turn_limit" if i % 3 == 1 else "done",
        "attempts": 1 + i % 3, "success": int(i % 3 != 1),
        "feasible": int(i % 3 != 1), "score": 0.25 * (i % 4 + 1),
        "quality": i / 3.0, "turns": 10 + i,
        "tokens_in": 1000000000000 + i, "tokens_out": 7 * i,
        "cost_usd": 0.01 * (i + 1), "wall_s": 100.5 + i, "env_s": 1.25,
        "model_s": 2.5, "verify_s": 0.125, "started_at": 1.7e9 + i,
        "rank": i % 4, "host": "node%02d" % (i % 4),
        "run_id": "run-20250101",
        "message": "message %d: \u00fcnic\u00f8de" % i,
        "run_outcome": "" if i % 3 == 2 else "turn_limit" if i % 3 == 1 else "done",
        "run_message": "" if i % 3 == 2 else "run %d ended" % i,
        "judge_tokens_in": 500 + i, "judge_tokens_out": 50 * i,
        "judge_cost_usd": 0.001 * (i + 1),
    }


def value(v):
    """A row field as a Python value: bytes decoded, numpy scalars unboxed."""
    if isinstance(v, bytes):
        return v.decode("utf-8")
    return v.item() if hasattr(v, "item") else v


def check_table(f, name, fields, rows):
    d = f[name]
    check(d.dtype.names == tuple(fields),
          "%s fields %s" % (name, d.dtype.names))
    check(d.shape == (len(rows),), "%s has %s rows" % (name, d.shape))
    check(d.chunks is not None and d.maxshape == (None,),
          "%s chunked and extendible" % name)
    data = d[...]
    for k, want in enumerate(rows):
        if k >= len(data):
            break
        for field, w in want.items():
            got = value(data[k][field])
            check(same(got, w), "%s[%d].%s == %r, expected %r"
                  % (name, k, field, got, w))


def main():
    tool, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "fixture.h5")
    subprocess.run([tool, "write", path], check=True)

    with h5py.File(path, "r") as f:
        check(set(f.keys()) == {"tasks", "models", "conditions", "task_meta",
                                "episodes", "assertions", "metrics", "artifacts",
                                "traces"}, "top-level names %s" % list(f))
        a = f.attrs
        check(a["format"] == "engisweep-results", "format %r" % a["format"])
        check(int(a["format_version"]) == 3, "format_version")
        check(int(a["planned_cells"]) == 12, "planned_cells")
        check(a["sweep_id"] == "sweep-0001", "sweep_id")
        check(json.loads(a["config"])["pad"] == "x" * 990, "config")
        check(json.loads(a["versions"])["engisweep"] == "0.1.0", "versions")
        check(a["command_line"].startswith("engisweep run"), "command_line")

        check_table(f, "tasks", TASK_FIELDS, [
            {"id": "task-%d" % i, "interface": "gui" if i else "cli",
             "domain": "structural mechanics" if i else "CAD",
             "type": "finite-element-analysis" if i else "single",
             "software": "FreeCAD,OpenSCAD", "turns": 200 if i else 100,
             "wall_s": 18000.0, "scoring": "binary"} for i in range(2)])
        check_table(f, "models", MODEL_FIELDS, [
            {"name": "model-%s" % "ab"[i], "agent": "model",
             "settings": '{"temperature":0.%d}' % i,
             "price_in_per_mtok": 3.0 + i, "price_out_per_mtok": 15.0 + i}
            for i in range(2)])
        check_table(f, "conditions", CONDITION_FIELDS,
                    [{"name": "baseline", "settings": "{}"}])
        check_table(f, "task_meta", TASK_META_FIELDS, [
            {"task_id": "task-0", "key": "family", "value": "standard_workflow",
             "conflict": ""},
            {"task_id": "task-0", "key": "locale", "value": "zh-\u4e2d\u6587", "conflict": ""},
            {"task_id": "task-1", "key": "family", "value": "interactive_robustness",
             "conflict": ""}])
        check_table(f, "episodes", EPISODE_FIELDS,
                    [episode(i) for i in range(RECORDS)])
        assertions, metrics, artifacts = [], [], []
        for i in range(RECORDS):
            for j in range(i % 3 + 1):
                assertions.append({
                    "cell": cell(i), "name": "a%d.%d" % (i, j),
                    "stage": "stage%d" % j, "state": STATES[j % 4],
                    "required": int(j % 2 == 0),
                    "value": float("nan") if j == 0 else 1.5 * j,
                    "expected": 2.0 * j, "detail": "detail %d/%d" % (i, j)})
            metrics.append({"cell": cell(i), "name": "geometry",
                            "value": 0.5 + i / 10.0})
            metrics.append({"cell": cell(i), "name": "spec",
                            "value": float("nan") if i % 3 == 2 else 0.9})
            for j in range(i % 3):
                artifacts.append({
                    "cell": cell(i), "path": "out/part%d.stl" % j,
                    "bytes": 1000 * (j + 1) + i,
                    "sha256": "".join("0123456789abcdef"[(k + j + i) % 16]
                                      for k in range(64)),
                    "note": "not copied: too large" if j == 1 else ""})
        check_table(f, "assertions", ASSERTION_FIELDS, assertions)
        check_table(f, "metrics", METRIC_FIELDS, metrics)
        check_table(f, "artifacts", ARTIFACT_FIELDS, artifacts)

        traced = [i for i in range(RECORDS) if i % 3 != 1]
        check(sorted(f["traces"].keys()) == [cell(i) for i in traced],
              "trace names %s" % list(f["traces"]))
        for i in traced:
            d = f["traces"][cell(i)]
            check(d.dtype == np.uint8, "trace dtype %s" % d.dtype)
            check(d.attrs["codec"] == "zstd", "codec")
            z = d[...].tobytes()
            text = subprocess.run(["zstd", "-d", "-c", "-q"], input=z,
                                  stdout=subprocess.PIPE,
                                  check=True).stdout
            check(len(text) == int(d.attrs["raw_bytes"]), "raw_bytes")
            events = [json.loads(line) for line in text.splitlines()]
            check(len(events) == i % 5 + 2, "trace %d events" % i)
            check(all(e["cell"] == cell(i) and e["turn"] == k
                      for k, e in enumerate(events)), "trace %d content" % i)
            mine = subprocess.run([tool, "trace", path, cell(i)],
                                  stdout=subprocess.PIPE, check=True).stdout
            check(mine == text, "store_read_trace of %d equals zstd -d" % i)

    # a file h5py writes, without our layout, is refused by name
    foreign = os.path.join(work, "foreign.h5")
    with h5py.File(foreign, "w") as f:
        f.create_dataset("episodes", data=np.arange(3))
    r = subprocess.run([tool, "read", foreign], stdout=subprocess.PIPE,
                       text=True)
    check(r.returncode == 1 and "is not an engisweep results file"
          in r.stdout, "foreign file: %r" % r.stdout)
    # a file with our attributes but a table without a field
    with h5py.File(foreign, "a") as f:
        f.attrs["format"] = "engisweep-results"
        f.attrs["format_version"] = np.int32(1)
        for name in ["tasks", "models", "conditions", "assertions",
                     "metrics", "artifacts"]:
            f.create_dataset(name, shape=(0,),
                             dtype=[("x", "i4")], maxshape=(None,))
        del f["episodes"]
        f.create_dataset("episodes", data=np.zeros(2, dtype=[("cell", "S17")]))
    r = subprocess.run([tool, "read", foreign], stdout=subprocess.PIPE,
                       text=True)
    check(r.returncode == 1 and "has no field" in r.stdout,
          "foreign layout: %r" % r.stdout)

    r = subprocess.run([tool, "read", path], stdout=subprocess.PIPE,
                       text=True, check=True)
    check("episodes=3 assertions=6 metrics=6 artifacts=3" in r.stdout,
          "store_read counts: %r" % r.stdout)
    check("task_meta=3" in r.stdout, "store_read task_meta: %r" % r.stdout)
    r = subprocess.run([tool, "runs", path], stdout=subprocess.PIPE,
                       text=True, check=True)
    check(r.stdout.splitlines() == ["%s 0 run 0 ended" % cell(0),
                                    "%s 2 run 1 ended" % cell(1),
                                    "%s -1 " % cell(2)],
          "run_outcome and run_message read back: %r" % r.stdout)

    # a file of format version 1, whose episodes lack run_outcome and
    # run_message, still reads: the two fields empty, the run unknown
    old = os.path.join(work, "version1.h5")
    with h5py.File(path, "r") as src, h5py.File(old, "w") as f:
        for k, v in src.attrs.items():
            f.attrs[k] = v
        f.attrs["format_version"] = np.int32(1)
        for name in src:
            if name == "episodes":
                continue
            src.copy(src[name], f, name=name)
        ep = src["episodes"][...]
        keep = [n for n in ep.dtype.names
                if n not in ("run_outcome", "run_message") + JUDGE_FIELDS]
        dt = np.dtype([(n, ep.dtype[n]) for n in keep])
        rows = np.zeros(ep.shape, dtype=dt)
        for n in keep:
            rows[n] = ep[n]
        f.create_dataset("episodes", data=rows, maxshape=(None,), chunks=True)
    r = subprocess.run([tool, "read", old], stdout=subprocess.PIPE, text=True)
    check(r.returncode == 0 and "episodes=3 assertions=6" in r.stdout,
          "a version 1 file: %r" % r.stdout)
    # written before /task_meta came: no metadata, nothing else changed
    with h5py.File(old, "a") as f:
        del f["task_meta"]
    r = subprocess.run([tool, "read", old], stdout=subprocess.PIPE, text=True)
    check(r.returncode == 0 and "episodes=3 assertions=6" in r.stdout
          and "task_meta=0" in r.stdout, "a file without /task_meta: %r" % r.stdout)
    r = subprocess.run([tool, "runs", old], stdout=subprocess.PIPE, text=True)
    check(r.returncode == 0 and
          r.stdout.splitlines() == ["%s -1 " % cell(i) for i in range(RECORDS)],
          "a version 1 file's runs: %r" % r.stdout)
    # the same layout claiming version 2 lacks a field that version has
    with h5py.File(old, "a") as f:
        f.attrs["format_version"] = np.int32(2)
    r = subprocess.run([tool, "read", old], stdout=subprocess.PIPE, text=True)
    check(r.returncode == 1 and "has no field 'run_outcome'" in r.stdout,
          "version 2 without run_outcome: %r" % r.stdout)

    r = subprocess.run([tool, "judges", path], stdout=subprocess.PIPE, text=True)
    check(r.returncode == 0 and r.stdout.splitlines() ==
          ["%s %d %d %.6f" % (cell(i), 500 + i, 50 * i, 0.001 * (i + 1))
           for i in range(RECORDS)], "judge columns read back: %r" % r.stdout)
    # a file of format version 2, whose episodes lack the judge columns,
    # reads with them 0
    v2 = os.path.join(work, "version2.h5")
    with h5py.File(path, "r") as src, h5py.File(v2, "w") as f:
        for k, v in src.attrs.items():
            f.attrs[k] = v
        f.attrs["format_version"] = np.int32(2)
        for name in src:
            if name != "episodes":
                src.copy(src[name], f, name=name)
        ep = src["episodes"][...]
        keep = [n for n in ep.dtype.names if n not in JUDGE_FIELDS]
        rows = np.zeros(ep.shape, dtype=np.dtype([(n, ep.dtype[n]) for n in keep]))
        for n in keep:
            rows[n] = ep[n]
        f.create_dataset("episodes", data=rows, maxshape=(None,), chunks=True)
    r = subprocess.run([tool, "judges", v2], stdout=subprocess.PIPE, text=True)
    check(r.returncode == 0 and
          r.stdout.splitlines() == ["%s 0 0 0.000000" % cell(i) for i in range(RECORDS)],
          "a version 2 file's judge columns: %r" % r.stdout)
    with h5py.File(v2, "a") as f:
        f.attrs["format_version"] = np.int32(3)
    r = subprocess.run([tool, "judges", v2], stdout=subprocess.PIPE, text=True)
    check(r.returncode == 1 and "has no field 'judge_tokens_in'" in r.stdout,
          "version 3 without judge_tokens_in: %r" % r.stdout)

    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
