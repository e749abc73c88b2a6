"""The reliability campaign: kill -9 of a sweep's whole process tree at
random moments, during the sweep and during its resume, alone and under
mpirun, then --resume to completion, and count what the kills cost.

python3 reliability.py --engisweep BIN --suite DIR --seed N --rounds N
                       --json OUT.json [--modes serial,mpi]

Per mode: one sweep run through uninterrupted (its duration sets the window
of the kills, its verdicts are the reference), then ROUNDS rounds of: a
fresh sweep killed at a uniformly random moment, its --resume killed the
same way, and a last --resume run to completion. After every kill the
journal and results.h5 are read (h5py, h5dump); after the last resume the
final journal and results file are compared with what the kills left:

  lost        a cell whose finished record was in the journal at a kill
              and is missing from the final journal or results file
  duplicated  a cell with two rows in /episodes (after a kill or at the end)
  rerun_done  a cell finished in the journal at a kill and run again
  rerun_live  a cell that this run had started at a kill (a fresh
              artifacts/<cell>) without a journal record, and ran again:
              allowed. Of them, "running" had their environment or
              verifier up (a folder under work/): at most as many per kill
              as episodes run at once; the others had finished and their
              result had not reached the journal yet (a slot is refilled
              before its result is journaled): at most one per slot, so a
              kill re-runs at most twice as many cells as run at once. An
              episode that was over, its verification queued or running,
              is in verifying.jsonl: --resume judges it, it does not run
              again (its started_at stays the interrupted run's)
  changed     a cell finished at a kill whose outcome, success or score
              differs in the final file, or differs from the uninterrupted
              sweep
  h5          results.h5 opened with h5py and h5dump after every kill (it
              may be absent only before the sweep's first copy, when the
              journal holds nothing)

The whole tree is killed: this process is a child subreaper, so every
process the sweep started (mpirun's ranks, which Open MPI puts in process
groups of their own, the agents' commands and the verifier, in groups and
sessions of their own) stays its descendant, and each one gets SIGKILL.
"""
import argparse
import collections
import ctypes
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py

PR_SET_CHILD_SUBREAPER = 36
INFRA = ("infra_error",)
# a folder under out/work of a cell's episode: its environment
# (CELL-aATTEMPT-rRANK-pPID) or its verifier's scratch (judge-CELL)
CELL_DIR = re.compile(r"^(judge-)?([0-9a-f]{16})")


def become_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER): " + os.strerror(ctypes.get_errno()))


def proc_table():
    """pid -> (ppid, state) of every process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rfind(")") + 2:].split()
        out[int(name)] = (int(rest[1]), rest[0])
    return out


def descendants():
    """The live (not zombie) descendants of this process."""
    table = proc_table()
    children = collections.defaultdict(list)
    for pid, (ppid, _) in table.items():
        children[ppid].append(pid)
    todo, found = [os.getpid()], []
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return [p for p in found if table[p][1] != "Z"]


def fresh(folder, since):
    """The entries of folder changed since the given time."""
    if not os.path.isdir(folder):
        return []
    return [n for n in os.listdir(folder) if os.stat(f"{folder}/{n}").st_mtime >= since]


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_tree(proc):
    """SIGKILL to every descendant until none is left; returns how many."""
    killed = set()
    end = time.time() + 30
    while time.time() < end:
        live = descendants()
        if not live:
            break
        for pid in live:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        if proc.poll() is None:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        reap()
        time.sleep(0.01)
    else:
        sys.exit("processes survived SIGKILL: " + str(descendants()))
    return len(killed)


def read_journal(path):
    """The complete records of a journal, in order (a partial last line is
    what a killed writer leaves, and is no record)."""
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if not lines[0]:
        return []
    head = json.loads(lines[0])
    assert head.get("format") == "engisweep-journal", head
    return [json.loads(line) for line in lines[1:-1] if line]


def verdict(r):
    return (r["outcome"], bool(r["success"]), round(float(r["score"]), 12))


def s(v):
    return v.decode() if isinstance(v, bytes) else v


def read_h5(path):
    """The /episodes rows of a results file as dicts, or raises."""
    with h5py.File(path, "r") as f:
        ep = f["episodes"][:]
        planned = int(f.attrs["planned_cells"]) if "planned_cells" in f.attrs else None
    rows = [{"cell": s(e["cell"]), "run_id": s(e["run_id"]), "started_at": float(e["started_at"]),
             "outcome": s(e["outcome"]), "success": int(e["success"]), "score": float(e["score"])}
            for e in ep]
    return rows, planned


class Campaign:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.h5dump = os.environ.get("ENGI_H5DUMP") or shutil.which("h5dump")
        if not self.h5dump:
            sys.exit("h5dump is not installed")
        self.tmp = tempfile.mkdtemp(prefix="engi-rel-")
        self.failures = []
        self.kills = []

    def fail(self, what):
        print("  FAIL:", what, flush=True)
        self.failures.append(what)

    def command(self, mode, out, resume):
        args = [self.a.engisweep, "run", "--agents", "reference,flawed:open", "--trials",
                str(self.a.trials), "--quiet", "--out", out]
        if resume:
            args.append("--resume")
        env = dict(os.environ)
        if mode == "mpi":
            # Open MPI's session folder and shared-memory segments, which
            # a killed mpirun leaves behind, in a folder removed at the end
            env["TMPDIR"] = self.tmp
            env["OMPI_MCA_btl_vader_backing_directory"] = self.tmp
            if "MPI_ASAN_OPTIONS" in os.environ:
                env["ASAN_OPTIONS"] = os.environ["MPI_ASAN_OPTIONS"]
            return ["mpirun", "-np", "3"] + args + [self.a.suite], env
        return args + ["--jobs", str(self.a.jobs), self.a.suite], env

    def start(self, mode, out, resume, log):
        cmd, env = self.command(mode, out, resume)
        logf = open(log, "ab")
        p = subprocess.Popen(cmd, env=env, stdout=logf, stderr=subprocess.STDOUT,
                             start_new_session=True)
        logf.close()
        return p

    def run_through(self, mode, out, resume, log):
        t0 = time.time()
        p = self.start(mode, out, resume, log)
        rc = p.wait()
        reap()
        if descendants():
            self.fail(f"{out}: processes outlived the sweep: {descendants()}")
            kill_tree(p)
        if rc != 0:
            with open(log) as f:
                sys.stdout.write(f.read()[-3000:])
            sys.exit(f"{out}: {'resume' if resume else 'sweep'} exited {rc}")
        return time.time() - t0

    def check_h5(self, path, journal, where):
        """results.h5 after a kill: opens with h5py and h5dump, each cell
        once, none that the journal lacks, the journal's verdicts."""
        res = {"exists": os.path.exists(path), "h5py": False, "h5dump": False,
               "rows": 0, "duplicated": 0}
        done = {r["cell"]: r for r in journal}
        if not res["exists"]:
            if done:
                self.fail(f"{where}: no results.h5 although the journal holds {len(done)}")
            return res
        try:
            rows, _ = read_h5(path)
            res["h5py"] = True
        except Exception as e:  # noqa: BLE001 - any failure to read counts
            self.fail(f"{where}: h5py cannot read {path}: {e}")
            rows = []
        r = subprocess.run([self.h5dump, path], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        res["h5dump"] = r.returncode == 0
        if r.returncode:
            self.fail(f"{where}: h5dump {path} exited {r.returncode}: "
                      f"{r.stderr.decode()[-500:]}")
        res["rows"] = len(rows)
        count = collections.Counter(e["cell"] for e in rows)
        res["duplicated"] = sum(1 for n in count.values() if n > 1)
        if res["duplicated"]:
            self.fail(f"{where}: {res['duplicated']} cells with two rows in /episodes")
        for e in rows:
            j = done.get(e["cell"])
            if not j:
                self.fail(f"{where}: cell {e['cell']} is in results.h5, not in the journal")
            elif verdict(j) != verdict(e):
                self.fail(f"{where}: cell {e['cell']}: results.h5 says {verdict(e)}, "
                          f"the journal {verdict(j)}")
        return res

    def killed_run(self, mode, out, resume, window, log, kill_no):
        """Starts a run, SIGKILLs its tree at a random moment in the window,
        and looks at what it left."""
        delay = self.rng.uniform(0, window)
        t0 = time.time()
        p = self.start(mode, out, resume, log)
        end = t0 + delay
        while time.time() < end and p.poll() is None:
            time.sleep(min(0.01, max(0, end - time.time())))
        landed = p.poll() is None
        kill_wall = time.time()
        nproc = kill_tree(p)
        where = f"{mode} kill {kill_no} ({'resume' if resume else 'sweep'}, {delay:.2f} s)"
        if not landed and p.returncode != 0:
            self.fail(f"{where}: the run ended by itself with exit code {p.returncode}")
        journal = read_journal(f"{out}/journal.jsonl")
        done = {}
        for r in journal:
            if r["outcome"] in INFRA:
                continue
            if r["cell"] in done:
                self.fail(f"{where}: cell {r['cell']} is in the journal twice")
            done[r["cell"]] = r
        # the cells this run started: an episode makes artifacts/<cell>
        # afresh when it starts (older ones are an earlier run's)
        live = sorted(set(fresh(f"{out}/artifacts", t0)) - set(done))
        # of those, the cells whose environment or verifier was still up
        # (the rest had finished, their result not yet in the journal); a
        # killed run leaves its folders, so again only this run's count
        running = sorted({m.group(2) for m in map(CELL_DIR.match, fresh(f"{out}/work", t0))
                          if m} & set(live))
        h5 = self.check_h5(f"{out}/results.h5", journal, where)
        k = {"mode": mode, "phase": "resume" if resume else "sweep", "delay_s": round(delay, 3),
             "landed": landed, "processes": nproc, "journaled": len(done), "live": live,
             "running": len(running), "running_cells": running,
             "kill_wall": kill_wall, "h5": h5}
        print(f"  {where}: {'killed ' + str(nproc) + ' processes' if landed else 'had ended'}, "
              f"{len(done)} journaled, {len(running)} running, "
              f"{len(live) - len(running)} finished unjournaled, results.h5 "
              f"{'absent' if not h5['exists'] else str(h5['rows']) + ' rows'}", flush=True)
        self.kills.append(k)
        return k, done

    def round(self, mode, rno, window, ncells, baseline):
        out = f"{mode}-{rno}"
        log = f"{out}.log"
        first = {}  # cell -> its record when a kill first found it finished
        kills = []
        k, done = self.killed_run(mode, out, False, window, log, 1)
        kills.append(k)
        for c, r in done.items():
            first.setdefault(c, r)
        left = 1 - len(done) / ncells
        k, done = self.killed_run(mode, out, True, 0.5 + window * left, log, 2)
        kills.append(k)
        for c, r in done.items():
            first.setdefault(c, r)
        self.run_through(mode, out, True, log)

        final_j = read_journal(f"{out}/journal.jsonl")
        rows, planned = read_h5(f"{out}/results.h5")
        h5 = self.check_h5(f"{out}/results.h5", final_j, f"{out} final")
        jcount = collections.Counter(r["cell"] for r in final_j if r["outcome"] not in INFRA)
        last = {r["cell"]: r for r in final_j}
        row = {e["cell"]: e for e in rows}
        stats = collections.Counter()
        stats["journaled"] = len(first)
        if len(row) != ncells or len(rows) != ncells or planned != ncells:
            self.fail(f"{out}: {len(rows)} rows, {len(row)} cells, planned {planned}, "
                      f"expected {ncells}")
        for leftover in ("results.h5.part", "results.h5.copy", "work"):
            if os.path.exists(f"{out}/{leftover}"):
                self.fail(f"{out}: {leftover} is left after the sweep finished")
        stats["duplicated"] = h5["duplicated"] + sum(x["h5"]["duplicated"] for x in kills)
        twice = [c for c, n in jcount.items() if n > 1]
        if twice:
            self.fail(f"{out}: {len(twice)} cells are in the final journal twice")
        for c, r in first.items():
            if c not in row or c not in last:
                stats["lost"] += 1
                self.fail(f"{out}: cell {c}, journaled before a kill, is lost")
                continue
            e = row[c]
            if jcount[c] > 1 or e["run_id"] != r["run_id"] or \
                    abs(e["started_at"] - r["started_at"]) > 1e-6:
                stats["rerun_done"] += 1
                self.fail(f"{out}: cell {c}, finished before a kill, was run again")
            if verdict(e) != verdict(r):
                stats["changed"] += 1
                self.fail(f"{out}: cell {c}: {verdict(r)} before, {verdict(e)} after")
        for e in rows:
            if baseline.get(e["cell"]) != verdict(e):
                stats["changed"] += 1
                self.fail(f"{out}: cell {e['cell']}: {verdict(e)}, the uninterrupted sweep "
                          f"had {baseline.get(e['cell'])}")
        for k in kills:
            again = [c for c in k["live"] if c in row and row[c]["started_at"] > k["kill_wall"]]
            k["rerun"] = len(again)
            stats["rerun_live"] += len(again)
            stats["rerun_unjournaled"] += len(set(again) - set(k["running_cells"]))
            stats["rerun_live_max"] = max(stats["rerun_live_max"], len(again))
            stats["running_max"] = max(stats["running_max"], k["running"])
            if k["running"] > self.a.concurrency:
                self.fail(f"{out}: {k['running']} episodes ran at a kill, more than "
                          f"the {self.a.concurrency} that run at once")
            # each episode slot (a thread of rank 0, a worker rank) holds
            # at most one running episode and one finished one that the
            # journal does not have yet (the slot is refilled first)
            if len(again) > 2 * self.a.concurrency:
                self.fail(f"{out}: {len(again)} cells ran again after one kill, more than "
                          f"the {self.a.concurrency} episode slots hold")
        # the deliverables of every cell are in place
        for e in rows:
            if e["success"] and not os.path.isfile(f"{out}/artifacts/{e['cell']}/tetra.stl"):
                self.fail(f"{out}: cell {e['cell']} lacks its deliverable")
        print(f"  {out}: complete, {len(first)} kept across kills, "
              f"{stats['rerun_live']} interrupted cells ran again", flush=True)
        if not self.a.keep:
            shutil.rmtree(out, ignore_errors=True)
        return stats

    def mode(self, mode):
        base = f"{mode}-baseline"
        dur = self.run_through(mode, base, False, f"{base}.log")
        rows, planned = read_h5(f"{base}/results.h5")
        baseline = {e["cell"]: verdict(e) for e in rows}
        ncells = len(rows)
        assert planned == ncells and ncells > 0, (planned, ncells)
        print(f"{mode}: {ncells} cells, uninterrupted sweep {dur:.1f} s", flush=True)
        total = collections.Counter()
        for rno in range(1, self.a.rounds + 1):
            st = self.round(mode, rno, dur, ncells, baseline)
            for key, v in st.items():
                if key.endswith("_max"):
                    total[key] = max(total[key], v)
                else:
                    total[key] += v
        ks = [k for k in self.kills if k["mode"] == mode]
        total["kills"] = len(ks)
        total["landed"] = sum(k["landed"] for k in ks)
        total["h5_present"] = sum(k["h5"]["exists"] for k in ks)
        total["h5py_ok"] = sum(k["h5"]["h5py"] for k in ks)
        total["h5dump_ok"] = sum(k["h5"]["h5dump"] for k in ks)
        total["sweep_s"] = round(dur, 2)
        total["cells"] = ncells
        shutil.rmtree(base, ignore_errors=True)
        return dict(total)

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


COLUMNS = [("kills", "kills"), ("landed", "landed"), ("journaled", "kept"),
           ("lost", "lost"), ("duplicated", "dup"), ("rerun_done", "rerun done"),
           ("rerun_live", "rerun live"), ("rerun_unjournaled", "of them done"),
           ("rerun_live_max", "max/kill"), ("running_max", "running max"),
           ("changed", "changed"), ("h5py_ok", "h5py ok"), ("h5dump_ok", "h5dump ok"),
           ("h5_present", "h5 present")]


def table(results):
    head = "| mode | " + " | ".join(c[1] for c in COLUMNS) + " |"
    lines = [head, "|---|" + "---:|" * len(COLUMNS)]
    for mode, t in results.items():
        lines.append(f"| {mode} | " + " | ".join(str(t.get(k, 0)) for k, _ in COLUMNS) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engisweep", required=True)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=3,
                    help="episodes that run at once (serial --jobs, or mpirun's 3 ranks)")
    ap.add_argument("--modes", default="serial,mpi")
    ap.add_argument("--json", required=True)
    ap.add_argument("--keep", action="store_true", help="keep every round's results folder")
    a = ap.parse_args()
    become_subreaper()
    print(f"reliability campaign: seed {a.seed}, {a.rounds} rounds per mode "
          f"(ENGI_RELIABILITY_SEED={a.seed} repeats it)", flush=True)
    c = Campaign(a)
    results = {}
    try:
        for mode in a.modes.split(","):
            results[mode] = c.mode(mode)
    finally:
        c.close()
    report = {"seed": a.seed, "rounds": a.rounds, "modes": results,
              "kills": [{k: v for k, v in x.items() if k not in ("live", "running_cells")} |
                        {"live": len(x["live"])} for x in c.kills],
              "failures": c.failures}
    with open(a.json, "w") as f:
        json.dump(report, f, indent=1)
    print(table(results))
    print("counts written to", os.path.abspath(a.json))
    if c.failures:
        print(f"FAIL: {len(c.failures)} failures (seed {a.seed})", file=sys.stderr)
        for x in c.failures[:20]:
            print("  " + x, file=sys.stderr)
        sys.exit(1)
    for mode, t in results.items():
        if t["landed"] == 0:
            sys.exit(f"FAIL: no kill of the {mode} sweep landed while it ran")


if __name__ == "__main__":
    main()
