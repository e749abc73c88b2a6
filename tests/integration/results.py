"""Reads an engisweep results file with h5py alone, the way a researcher would.

Used by the integration tests: python3 results.py COMMAND RESULTS.h5 [args]."""
import json
import subprocess
import sys

import h5py


def s(v):
    return v.decode() if isinstance(v, bytes) else str(v)


# the judge model's usage, apart from the agent's: columns since format 3
JUDGE_COLUMNS = ("judge_tokens_in", "judge_tokens_out", "judge_cost_usd")


def episodes(path):
    with h5py.File(path, "r") as f:
        names = f["episodes"].dtype.names
        if int(f.attrs["format_version"]) >= 3:
            assert all(c in names for c in JUDGE_COLUMNS), names
        return [{n: (s(r[n]) if isinstance(r[n], bytes) else r[n].item()) for n in names}
                for r in f["episodes"][:]]


def task_meta(path):
    """(task_id, key) -> (value, conflict) of /task_meta, the tasks' metadata"""
    with h5py.File(path, "r") as f:
        d = f["task_meta"]
        assert d.dtype.names == ("task_id", "key", "value", "conflict"), d.dtype.names
        return {(s(r["task_id"]), s(r["key"])): (s(r["value"]), s(r["conflict"]))
                for r in d[:]}


def trace(path, cell):
    with h5py.File(path, "r") as f:
        d = f["traces"][cell]
        raw = bytes(d[:])
        want = int(d.attrs["raw_bytes"])
        assert s(d.attrs["codec"]) == "zstd"
    text = subprocess.run(["zstd", "-d", "-c"], input=raw, capture_output=True, check=True).stdout
    assert len(text) == want, (len(text), want)
    return [json.loads(line) for line in text.decode().splitlines()]


def verdicts(path):
    """cell -> (task, model, condition, trial, outcome, success, score)"""
    return {e["cell"]: (e["task_id"], e["model"], e["condition"], e["trial"], e["outcome"],
                        e["success"], round(e["score"], 12)) for e in episodes(path)}


if __name__ == "__main__":
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "count":
        print(len(episodes(path)))
    elif cmd == "verdicts":
        json.dump(sorted(verdicts(path).items()), sys.stdout, indent=0)
    else:
        sys.exit("unknown command " + cmd)
