#!/usr/bin/python3
"""check_demo.py - plays the demo suite without engisweep, as a cross-check.

For every task file in this folder it checks the format (task format v1, see
../SCHEMA.md, as far as this script understands it), then plays the reference
solution, every flawed variant and an empty delivery each in a fresh empty
folder the way the local backend does (sh -c, PATH=/usr/local/bin:/usr/bin:/bin,
HOME = that folder, LANG=C), evaluates the criteria on what was delivered
(mesh criteria with measure_stl.py, ccx_dat criteria with the parser below,
fe_solid criteria from the deck and a fresh ccx run of it, structural models
by the matching and the plane-frame solver in check_frame.py), and reports
whether each run got its expected verdict.

    /usr/bin/python3 check_demo.py [TASK_ID ...] [--keep DIR] [--table]

Exit status 0 when every run got its expected verdict.
"""
import argparse
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import check_frame  # noqa: E402
import measure_stl  # noqa: E402

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
DOMAINS = {"CAD", "CAE", "CAM", "BIM", "EDA", "DCC"}
TYPES = {"single", "selection", "vision", "optimization", "cross", "open"}
TOP = {"schema", "id", "title", "domain", "software", "type", "interface",
       "instruction", "drawings", "environment", "inputs", "limits",
       "deliverables", "verifier", "reference", "flawed", "resources"}
REQUIRED_TOP = {"id", "domain", "software", "type", "interface", "instruction",
                "deliverables", "verifier", "reference"}
CRIT_COMMON = {"name", "required", "stage", "equals", "value", "tol_rel", "tol_abs", "min", "max"}
MESH_CRIT = CRIT_COMMON | {"check", "axis", "beam_axis", "about"}
CCX_CRIT = CRIT_COMMON | {"quantity", "set", "component", "reduce"}
MESH_CHECKS = {"watertight", "oriented", "shells", "genus", "volume", "area",
               "bbox_span", "section_inertia"}
FE_CRIT = CRIT_COMMON | {"check", "component", "plane", "point", "results"}
FE_CHECKS = {"young", "poisson", "load_as_force", "supports_on_plane", "load_sum",
             "reaction_sum", "max_u", "own_results"}
DEFAULT_STAGE = {"watertight": "validity", "oriented": "validity", "shells": "validity",
                 "genus": "topology", "volume": "geometry", "area": "geometry",
                 "bbox_span": "geometry", "section_inertia": "performance"}


# --loose: read "default tol_rel 0.01" as applying even when tol_abs is given
LOOSE = False


class FormatError(Exception):
    pass


def err(file, ptr, msg):
    raise FormatError("%s: %s: %s" % (file, ptr, msg))


def check_keys(file, ptr, obj, allowed, required=()):
    if not isinstance(obj, dict):
        err(file, ptr, "expected an object")
    for k in obj:
        if k not in allowed:
            err(file, "%s/%s" % (ptr, k), "unknown field")
    for k in required:
        if k not in obj:
            err(file, "%s/%s" % (ptr, k), "missing")


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def env_path(file, ptr, p):
    if not isinstance(p, str) or not p or p.startswith("/") or any(
            c in ("", "..", ".") for c in p.split("/")):
        err(file, ptr, "bad environment path %r" % (p,))


def host_path(file, ptr, p):
    if not isinstance(p, str) or not p or p.startswith("/") or ".." in p.split("/"):
        err(file, ptr, "bad host path %r" % (p,))
    if not os.path.isfile(os.path.join(HERE, p)):
        err(file, ptr, "no such host file %r" % (p,))


def check_steps(file, ptr, steps):
    if not isinstance(steps, list) or not steps:
        err(file, ptr, "expected a non-empty array")
    for i, s in enumerate(steps):
        p = "%s/%d" % (ptr, i)
        check_keys(file, p, s, {"run", "write", "from", "text", "done", "fail"})
        if "run" in s or "done" in s or "fail" in s:
            if len(s) != 1:
                err(file, p, "a step is exactly one action")
        elif "write" in s:
            env_path(file, p + "/write", s["write"])
            if ("from" in s) == ("text" in s):
                err(file, p, "write needs exactly one of from / text")
            if "from" in s:
                host_path(file, p + "/from", s["from"])
        else:
            err(file, p, "empty step")


def check_crit(file, ptr, c, kind):
    allowed = {"mesh": MESH_CRIT, "fe_solid": FE_CRIT}.get(kind, CCX_CRIT)
    check_keys(file, ptr, c, allowed, ["name"])
    if "equals" in c and not isinstance(c["equals"], int):
        err(file, ptr + "/equals", "expected an integer")
    for k in ("value", "tol_rel", "tol_abs", "min", "max"):
        if k in c and not is_num(c[k]):
            err(file, "%s/%s" % (ptr, k), "expected a number")
    if kind == "mesh":
        if c.get("check") not in MESH_CHECKS:
            err(file, ptr + "/check", "unknown check")
        ch = c["check"]
        if ch == "bbox_span" and c.get("axis") not in ("x", "y", "z"):
            err(file, ptr + "/axis", "expected x, y or z")
        if ch == "section_inertia":
            if c.get("beam_axis") not in ("x", "y", "z") or c.get("about") not in ("x", "y", "z") \
                    or c["about"] == c["beam_axis"]:
                err(file, ptr, "section_inertia needs beam_axis and a different about")
        has_cmp = any(k in c for k in ("equals", "value", "min", "max"))
        if ch in ("watertight", "oriented") and has_cmp:
            err(file, ptr, "boolean check takes no comparator")
        if ch not in ("watertight", "oriented") and not has_cmp:
            err(file, ptr, "no comparator")
    elif kind == "fe_solid":
        if c.get("check") not in FE_CHECKS:
            err(file, ptr + "/check", "unknown check")
        if c["check"] in ("load_sum", "reaction_sum") and c.get("component") not in ("x", "y", "z"):
            err(file, ptr + "/component", "expected x, y or z")
        if c["check"] == "supports_on_plane" and c.get("plane", {}).get("axis") not in ("x", "y", "z"):
            err(file, ptr + "/plane", "expected {axis, value}")
        if c["check"] == "own_results" and not isinstance(c.get("results"), str):
            err(file, ptr + "/results", "expected a file name")
    else:
        if c.get("quantity") not in ("displacements", "forces"):
            err(file, ptr + "/quantity", "expected displacements or forces")
        if not isinstance(c.get("set"), str) or c["set"] != c["set"].upper():
            err(file, ptr + "/set", "expected an upper-case set name")
        if c.get("component") not in ("x", "y", "z", "magnitude"):
            err(file, ptr + "/component", "bad component")
        if c.get("reduce") not in ("mean", "min", "max", "maxabs", "sum"):
            err(file, ptr + "/reduce", "bad reduce")


def load_task(path):
    file = os.path.relpath(path)
    with open(path) as f:
        t = json.load(f)
    check_keys(file, "", t, TOP, REQUIRED_TOP)
    if t.get("schema", 1) != 1:
        err(file, "/schema", "must be 1")
    if not ID_RE.match(t["id"]):
        err(file, "/id", "bad id")
    if os.path.basename(path) != t["id"] + ".json":
        err(file, "/id", "file name differs from id")
    if t["domain"] not in DOMAINS:
        err(file, "/domain", "unknown")
    if t["type"] not in TYPES:
        err(file, "/type", "unknown")
    if t["interface"] not in ("cli", "gui"):
        err(file, "/interface", "unknown")
    if not t["software"] or not all(isinstance(s, str) for s in t["software"]):
        err(file, "/software", "expected strings")
    env = t.get("environment", {})
    check_keys(file, "/environment", env, {"image", "cpus", "memory_mb", "network"})
    for i, inp in enumerate(t.get("inputs", [])):
        p = "/inputs/%d" % i
        check_keys(file, p, inp, {"host", "env", "protected"}, ["host", "env"])
        host_path(file, p + "/host", inp["host"])
        env_path(file, p + "/env", inp["env"])
    check_keys(file, "/limits", t.get("limits", {}), {"turns", "wall_s"})
    paths = []
    for i, d in enumerate(t["deliverables"]):
        p = "/deliverables/%d" % i
        check_keys(file, p, d, {"path", "max_bytes", "required"}, ["path"])
        env_path(file, p + "/path", d["path"])
        paths.append(d["path"])
    v = t["verifier"]
    if v.get("kind") == "structural":
        check_keys(file, "/verifier", v, {"kind", "file", "reference", "truth", "node_tol",
                                          "prop_tol_rel", "result_tol_rel", "result_tol_abs"},
                   ["kind", "file", "reference", "truth"])
        host_path(file, "/verifier/reference", v["reference"])
        host_path(file, "/verifier/truth", v["truth"])
        v = dict(v, criteria=[{"name": n} for n in check_frame.ASSERTIONS])
    else:
        check_keys(file, "/verifier", v, {"kind", "file", "criteria", "objective", "reward", "weld_tol"},
                   ["kind", "file", "criteria"])
    if v["kind"] not in ("mesh", "ccx_dat", "fe_solid", "structural"):
        err(file, "/verifier/kind", "unknown kind")
    if "weld_tol" in v and v["kind"] != "mesh":
        err(file, "/verifier/weld_tol", "mesh only")
    if v["file"] not in paths:
        err(file, "/verifier/file", "not a deliverable")
    names = set()
    for i, c in enumerate(v["criteria"]):
        if v["kind"] == "structural":
            names.add(c["name"])
            continue
        check_crit(file, "/verifier/criteria/%d" % i, c, v["kind"])
        if c["name"] in names:
            err(file, "/verifier/criteria/%d/name" % i, "duplicate")
        names.add(c["name"])
    if t["type"] == "optimization":
        o = v.get("objective")
        if o is None:
            err(file, "/verifier", "optimization needs objective")
        check_keys(file, "/verifier/objective", o, {"metric", "sense", "baseline", "reference", "lambda"},
                   ["metric", "sense"])
    check_steps(file, "/reference", t["reference"])
    for i, fl in enumerate(t.get("flawed", [])):
        p = "/flawed/%d" % i
        check_keys(file, p, fl, {"name", "steps", "expect", "failing"}, ["name", "steps", "expect"])
        if not ID_RE.match(fl["name"]):
            err(file, p + "/name", "bad name")
        if fl["expect"] != "fail":
            err(file, p + "/expect", "expected \"fail\"")
        check_steps(file, p + "/steps", fl["steps"])
        for j, n in enumerate(fl.get("failing", [])):
            if n not in names and not n.startswith(("delivered:", "integrity:")):
                err(file, "%s/failing/%d" % (p, j), "names no assertion")
    for k, n in t.get("resources", {}).items():
        if not isinstance(n, int) or n < 1:
            err(file, "/resources/" + k, "expected a positive integer")
    return t


# ---------------------------------------------------------------- ccx .dat
BLOCK_RE = re.compile(r"^\s*(displacements|forces) \([^)]*\) for set (\S+) and time\s+(\S+)\s*$")


def read_dat(path):
    """{(quantity, SET): rows of the last time printed}"""
    out = {}
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            m = BLOCK_RE.match(line)
            if m:
                cur = (m.group(1), m.group(2).upper())
                out[cur] = []
                continue
            parts = line.split()
            if cur and len(parts) == 4:
                try:
                    out[cur].append([float(x) for x in parts[1:]])
                    continue
                except ValueError:
                    pass
            if cur and parts and out[cur]:
                cur = None
    return out


def reduce_vals(vals, how):
    if how == "mean":
        return sum(vals) / len(vals)
    if how == "sum":
        return sum(vals)
    if how == "min":
        return min(vals)
    if how == "max":
        return max(vals)
    return max(abs(v) for v in vals)


# ---------------------------------------------------------------- verdicts
def compare(c, x):
    if "equals" in c:
        return x == c["equals"], c["equals"]
    ok = True
    exp = float("nan")
    if "value" in c:
        rel_default = 0.01 if ("tol_abs" not in c or LOOSE) else 0.0
        tol = max(c.get("tol_abs", 0.0), c.get("tol_rel", rel_default) * abs(c["value"]))
        ok = abs(x - c["value"]) <= tol
        exp = c["value"]
    if "min" in c:
        ok = ok and x >= c["min"]
        exp = c["min"]
    if "max" in c:
        ok = ok and x <= c["max"]
        exp = c["max"] if "min" not in c else exp
    return ok, exp


def verify(task, outdir):
    v = task["verifier"]
    if v["kind"] == "structural":
        return check_frame.verify(v, HERE, outdir), {}
    if v["kind"] == "fe_solid":
        return check_frame.verify_fe(v, outdir, compare), {}
    target = os.path.join(outdir, v["file"])
    asserts = []  # (name, state, required, measured, expected)
    metrics = {}
    delivered = os.path.isfile(target) and os.path.getsize(target) > 0
    data = None
    if delivered:
        try:
            if v["kind"] == "mesh":
                tris = measure_stl.read_stl(target)
                if len(tris) == 0:
                    raise ValueError("no triangles")
                beam_axes = {c["beam_axis"] for c in v["criteria"] if c.get("check") == "section_inertia"}
                data = {}
                for ax in beam_axes or [None]:
                    data[ax] = measure_stl.analyze(tris, v.get("weld_tol", 1e-6), ax)
                base = next(iter(data.values()))
                for k in ("volume", "area", "shells", "genus", "span_x", "span_y", "span_z"):
                    metrics[k] = base[k]
            else:
                data = read_dat(target)
        except (ValueError, OSError) as e:
            delivered = False
            data = None
    asserts.append(("delivered:" + v["file"], "pass" if delivered else "fail", True, None, None))
    for c in v["criteria"]:
        req = c.get("required", True)
        if data is None:
            asserts.append((c["name"], "unavailable", req, None, None))
            continue
        if v["kind"] == "mesh":
            ch = c["check"]
            r = data.get(c.get("beam_axis")) or next(iter(data.values()))
            if ch in ("watertight", "oriented"):
                ok = bool(r[ch])
                asserts.append((c["name"], "pass" if ok else "fail", req, ok, True))
                continue
            x = {"shells": r["shells"], "genus": r["genus"], "volume": r["volume"], "area": r["area"]}.get(ch)
            if ch == "bbox_span":
                x = r["span_" + c["axis"]]
            if ch == "section_inertia":
                x = r["section_inertia_about_" + c["about"]]
        else:
            rows = data.get((c["quantity"], c["set"]))
            if not rows:
                asserts.append((c["name"], "unavailable", req, None, None))
                continue
            col = "xyz".find(c["component"])
            vals = [math.sqrt(sum(q * q for q in r)) if col < 0 else r[col] for r in rows]
            x = reduce_vals(vals, c["reduce"])
            metrics[c["name"]] = x
        ok, exp = compare(c, x)
        asserts.append((c["name"], "pass" if ok else "fail", req, x, exp))
    return asserts, metrics


def score(task, asserts, metrics):
    feasible = all(s == "pass" for n, s, req, *_ in asserts if req)
    if task["type"] != "optimization":
        return feasible, feasible, 1.0 if feasible else 0.0
    o = task["verifier"]["objective"]
    m = metrics.get(o["metric"])
    if not feasible or m is None:
        return False, False, 0.0
    if "lambda" in o:
        q = max(0.0, 1.0 - o["lambda"] * m)
    else:
        q = (m - o["baseline"]) / (o["reference"] - o["baseline"])
        q = min(1.0, max(0.0, q))
    return feasible and q > 0, feasible, q


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def play(task, steps, keep=None, label=""):
    work = tempfile.mkdtemp(prefix="engidemo.")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": work, "LANG": "C"}
    hashes = {}
    for inp in task.get("inputs", []):
        dst = os.path.join(work, inp["env"])
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(HERE, inp["host"]), dst)
        if inp.get("protected"):
            hashes[inp["env"]] = sha(dst)
    t0 = time.time()
    log = []
    for s in steps:
        if "run" in s:
            p = subprocess.run(["sh", "-c", s["run"]], cwd=work, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
            log.append("$ %s -> %d" % (s["run"], p.returncode))
        elif "write" in s:
            dst = os.path.join(work, s["write"])
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if "from" in s:
                shutil.copyfile(os.path.join(HERE, s["from"]), dst)
            else:
                with open(dst, "w") as f:
                    f.write(s["text"])
        else:
            break
    wall = time.time() - t0
    outdir = tempfile.mkdtemp(prefix="engidemo-out.")
    for d in task["deliverables"]:
        src = os.path.join(work, d["path"])
        if os.path.isfile(src) and not os.path.islink(src) and os.path.getsize(src) <= d.get("max_bytes", 64 << 20):
            dst = os.path.join(outdir, d["path"])
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
    asserts, metrics = verify(task, outdir)
    for envp, h in hashes.items():
        p = os.path.join(work, envp)
        ok = os.path.isfile(p) and sha(p) == h
        asserts.insert(1, ("integrity:" + envp, "pass" if ok else "fail", True, None, None))
    if keep:
        dst = os.path.join(keep, task["id"], label)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(work, dst)
    shutil.rmtree(work)
    shutil.rmtree(outdir)
    return asserts, metrics, wall, log


def fmt(x):
    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    if x != x:
        return "-"
    return "%.7g" % x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--keep", help="copy every working folder under this directory")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every assertion")
    ap.add_argument("--loose", action="store_true",
                    help="apply the default tol_rel 0.01 also to criteria that give tol_abs")
    args = ap.parse_args()
    global LOOSE
    LOOSE = args.loose
    files = sorted(f for f in os.listdir(HERE) if f.endswith(".json"))
    tasks = []
    bad = 0
    ids = set()
    for f in files:
        try:
            t = load_task(os.path.join(HERE, f))
        except FormatError as e:
            print("FORMAT", e)
            bad += 1
            continue
        if t["id"] in ids:
            print("FORMAT %s: /id: duplicate" % f)
            bad += 1
        ids.add(t["id"])
        if not args.ids or t["id"] in args.ids:
            tasks.append(t)
    for t in tasks:
        runs = [("reference", t["reference"], "success", [])]
        runs += [(fl["name"], fl["steps"], "fail", fl.get("failing", [])) for fl in t.get("flawed", [])]
        runs += [("noop", [{"done": "nothing"}], "fail", ["delivered:" + t["verifier"]["file"]])]
        for name, steps, expect, failing in runs:
            asserts, metrics, wall, log = play(t, steps, args.keep, name)
            success, feasible, q = score(t, asserts, metrics)
            failed = [a[0] for a in asserts if a[1] != "pass" and a[2]]
            got = "success" if success else "fail"
            ok = got == expect and all(n in failed for n in failing)
            bad += not ok
            extra = ""
            if t["type"] == "optimization":
                extra = " feasible=%s q=%.3f" % (feasible, q)
            print("%-4s %-18s %-22s %-7s %5.2fs%s failed=[%s]" % (
                "ok" if ok else "BAD", t["id"], name, got, wall, extra, ", ".join(failed)))
            if args.verbose or not ok:
                for a in asserts:
                    print("       %-26s %-11s measured=%s expected=%s" % (a[0], a[1], fmt(a[3]), fmt(a[4])))
                for line in log:
                    print("       " + line)
    print("%d problem(s)" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
