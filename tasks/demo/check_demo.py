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

Kind param_spec (tasks/SCHEMA-cad.md) is evaluated here in full: every named
parameter by measure_stl.py's own methods (bounding box, volume, area,
shells and genus from the welded mesh; hole_diameter as the distance from
the hole's line to the nearest triangle; void and material from the
material length of columns through the region, found by the crossings of
the surface), spec_consistency = max(0, 1 - failed / min(failure_budget,
number of parameters)) as the schema defines it, and geometry_similarity
by the schema's formula on this script's own measurements: volume, area and
principal moments from the mesh; the oriented-box gate from the smaller of
the axis-aligned box and the box along the solid's principal axes (an
approximation of the minimum box; exact for the axis-aligned plates of this
suite, and the gate decides a verdict here only on a part 25 times too
small); the count gate from the triangle and welded vertex counts; q_ICP
from a plain point-to-point ICP of the face centres (identity start and the
four sign-matched principal-axes starts, the lowest RMS kept; scipy's k-d
tree when present, else brute force), which may differ from engisweep's ICP
in the last digits but not in whether a delivery identical to the reference
gets full credit. The continuous reward is the harmonic mean of the two, 0
when a required assertion fails; success means a reward of 1.

    /usr/bin/python3 check_demo.py [TASK_ID ...] [--keep DIR] [-v] [--loose] [--table]

--table prints the runs as one Markdown table (task, run, expected and
actual verdict, score, failed assertions) after the per-run lines.

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

import numpy as np

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
SPEC_CRIT = {"name", "measure", "axis", "at", "diameter", "region", "equals", "value",
             "tol_rel", "tol_abs", "min", "max", "required"}
# measure -> (its own arguments, comparators it takes)
SPEC_MEASURES = {
    "bbox_span": ({"axis"}, {"value", "range"}),
    "volume": (set(), {"value", "range"}),
    "area": (set(), {"value", "range"}),
    "shells": (set(), {"equals", "value", "range"}),
    "genus": (set(), {"equals", "value", "range"}),
    "hole_diameter": ({"axis", "at"}, {"value"}),
    "void": ({"axis", "at", "diameter"}, {"range"}),
    "material": ({"region"}, {"value", "range"}),
}
SPEC_ARGS = {"axis", "at", "diameter", "region"}
SPEC_PREFIX = "param:"
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


def check_spec_param(file, ptr, c):
    check_keys(file, ptr, c, SPEC_CRIT, ["name", "measure"])
    if not ID_RE.match(c["name"]) or len(c["name"]) > 57:
        err(file, ptr + "/name", "bad parameter name")
    m = c["measure"]
    if m not in SPEC_MEASURES:
        err(file, ptr + "/measure", "unknown measure")
    args, cmps = SPEC_MEASURES[m]
    for k in SPEC_ARGS:
        if k in c and k not in args:
            err(file, "%s/%s" % (ptr, k), "does not apply to measure %r" % m)
        if k not in c and k in args:
            err(file, "%s/%s" % (ptr, k), "missing")
    if "equals" in c and not isinstance(c["equals"], int):
        err(file, ptr + "/equals", "expected an integer")
    for k in ("value", "tol_rel", "tol_abs", "min", "max", "diameter"):
        if k in c and not is_num(c[k]):
            err(file, "%s/%s" % (ptr, k), "expected a number")
    given = {"equals" if "equals" in c else None, "value" if "value" in c else None,
             "range" if ("min" in c or "max" in c) else None} - {None}
    if len(given) > 1 or given - cmps or (not given and m != "void"):
        err(file, ptr, "measure %r takes one comparator of %s" % (m, sorted(cmps)))
    if "axis" in c and c["axis"] not in ("x", "y", "z"):
        err(file, ptr + "/axis", "expected x, y or z")
    if "at" in c and not (isinstance(c["at"], list) and len(c["at"]) == 2 and all(map(is_num, c["at"]))):
        err(file, ptr + "/at", "expected 2 numbers")
    if m == "hole_diameter" and not c["value"] > 0:
        err(file, ptr + "/value", "must be greater than 0")
    if m == "material":
        reg = c["region"]
        if not isinstance(reg, dict) or len(reg) != 1 or not {"box", "cylinder"} >= set(reg):
            err(file, ptr + "/region", "expected {\"box\": ...} or {\"cylinder\": ...}")
        if "box" in reg:
            check_keys(file, ptr + "/region/box", reg["box"], {"min", "max"}, ["min", "max"])
        else:
            check_keys(file, ptr + "/region/cylinder", reg["cylinder"],
                       {"base", "axis", "radius", "length"}, ["base", "axis", "radius", "length"])


def check_crit(file, ptr, c, kind):
    if kind == "param_spec":
        return check_spec_param(file, ptr, c)
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
    elif v.get("kind") == "param_spec":
        check_keys(file, "/verifier", v, {"kind", "file", "criteria", "reference", "reward",
                                          "failure_budget", "resolution"}, ["kind", "file", "criteria"])
        if "reference" in v:
            host_path(file, "/verifier/reference", v["reference"])
        fb = v.get("failure_budget", 10)
        if not isinstance(fb, int) or isinstance(fb, bool) or not 1 <= fb <= 256:
            err(file, "/verifier/failure_budget", "expected an integer from 1 to 256")
        if not 1 <= len(v["criteria"]) <= 256:
            err(file, "/verifier/criteria", "1 to 256 parameters")
    else:
        check_keys(file, "/verifier", v, {"kind", "file", "criteria", "objective", "reward", "weld_tol"},
                   ["kind", "file", "criteria"])
    if "reward" in v:
        check_keys(file, "/verifier/reward", v["reward"], {"geometry", "spec"}, ["geometry", "spec"])
        if "objective" in v:
            err(file, "/verifier", "objective and reward exclude each other")
    if v["kind"] not in ("mesh", "ccx_dat", "fe_solid", "structural", "param_spec"):
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
        name = SPEC_PREFIX + c["name"] if v["kind"] == "param_spec" else c["name"]
        if name in names:
            err(file, "/verifier/criteria/%d/name" % i, "duplicate")
        names.add(name)
    if v["kind"] == "param_spec" and "reference" in v:
        names.add("geometry_similarity")
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
    if x != x:  # a measure that could not be taken
        return False, c.get("equals", c.get("value", c.get("max", c.get("min", float("nan")))))
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
    if v["kind"] == "param_spec":
        return verify_spec(v, outdir)
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


# ---------------------------------------------------------------- param_spec
def spec_measure(c, tris, r):
    """The parameter's measured value on the mesh (r: measure_stl.analyze)."""
    m = c["measure"]
    if m in ("genus", "hole_diameter", "void", "material") and not r["watertight"]:
        raise ValueError("%s undefined: not watertight" % m)
    if m == "bbox_span":
        return r["span_" + c["axis"]]
    if m in ("volume", "area", "shells", "genus"):
        return r[m]
    if m == "hole_diameter":
        return measure_stl.hole_diameter(tris, c["axis"], c["at"])
    if m == "void":
        return measure_stl.void_fraction(tris, c["axis"], c["at"], c["diameter"])
    return measure_stl.material_volume(tris, c["region"])


def spec_consistency(v, states):
    failed = sum(1 for s in states if s != "pass")
    budget = min(v.get("failure_budget", 10), len(v["criteria"]))
    return max(0.0, 1.0 - failed / budget), failed, budget


def log_credit(e, full, zero):
    if e != e:
        return 0.0
    if e <= full:
        return 1.0
    if e >= zero:
        return 0.0
    return math.log(zero / e) / math.log(zero / full)


def rel_err(a, ref):
    return abs(a - ref) / abs(ref) if ref != 0 else (0.0 if a == 0 else float("inf"))


def shape(path):
    """What the geometry similarity needs of one mesh."""
    tris = measure_stl.read_stl(path)
    if len(tris) == 0:
        raise ValueError("no triangles")
    r = measure_stl.analyze(tris, 1e-6)
    xyz, f = measure_stl.weld(tris, 1e-6)
    pts = xyz[np.unique(f.reshape(-1))]
    # oriented box: the smaller of the axis-aligned one and the one along the
    # solid's principal axes; half extents descending
    sc = r["second_moment_centroidal"]
    C = np.array([[sc["xx"], sc["xy"], sc["xz"]], [sc["xy"], sc["yy"], sc["yz"]],
                  [sc["xz"], sc["yz"], sc["zz"]]])
    best = None
    for frame in (np.eye(3), np.linalg.eigh(C)[1]):
        q = pts @ frame
        half = (q.max(axis=0) - q.min(axis=0)) / 2
        if best is None or np.prod(half) < np.prod(best):
            best = half
    step = len(tris) // 20000 + 1
    return {"r": r, "half": sorted(best.tolist(), reverse=True), "ntris": len(tris),
            "nverts": r["welded_vertices"], "centres": tris[::step].mean(axis=1)}


def nearest(a, b):
    """Distance from each point of a to the nearest point of b, and its index."""
    try:
        from scipy.spatial import cKDTree
        return cKDTree(b).query(a)
    except ImportError:
        d = np.empty(len(a))
        idx = np.empty(len(a), dtype=np.int64)
        for s in range(0, len(a), 512):
            d2 = ((a[s:s + 512, None, :] - b[None, :, :]) ** 2).sum(axis=2)
            idx[s:s + 512] = d2.argmin(axis=1)
            d[s:s + 512] = np.sqrt(d2[np.arange(len(d2)), idx[s:s + 512]])
        return d, idx


def pca(p):
    c = p.mean(axis=0)
    w, E = np.linalg.eigh(np.cov((p - c).T))
    if np.linalg.det(E) < 0:
        E[:, 2] = -E[:, 2]
    return c, E


def icp_distance_rel(a, ref):
    """Mean face-centre distance (both ways, halved) after point-to-point
    ICP from the identity and the principal-axes starts, relative to the
    reference's bounding-box diagonal."""
    src, dst = a["centres"], ref["centres"]
    cs, Es = pca(src)
    cd, Ed = pca(dst)
    starts = [(np.eye(3), np.zeros(3))]
    for flip in ((1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)):
        R = Ed @ np.diag(flip) @ Es.T
        starts.append((R, cd - R @ cs))
    best = None
    for R, t in starts:
        prev = None
        for _ in range(100):
            moved = src @ R.T + t
            d, idx = nearest(moved, dst)
            rms = float(np.sqrt(np.mean(d * d)))
            if prev is not None and prev - rms <= 1e-12 * (1 + prev):
                break
            prev = rms
            q = dst[idx]
            ms, mq = src.mean(axis=0), q.mean(axis=0)
            U, _, Vt = np.linalg.svd((src - ms).T @ (q - mq))
            D = np.diag([1, 1, np.sign(np.linalg.det(Vt.T @ U.T))])
            R = Vt.T @ D @ U.T
            t = mq - R @ ms
        if best is None or rms < best[0]:
            best = (rms, R, t)
    moved = src @ best[1].T + best[2]
    chamfer = float(np.mean(nearest(moved, dst)[0]) + np.mean(nearest(dst, moved)[0]))
    diag = math.sqrt(sum(s * s for s in (ref["r"]["span_x"], ref["r"]["span_y"], ref["r"]["span_z"])))
    return chamfer / 2 / diag if diag > 0 else float("inf")


def geometry_similarity(a, ref):
    """The score of tasks/SCHEMA-cad.md, "Geometry similarity"."""
    ra, rr = a["r"], ref["r"]
    e_vol = rel_err(ra["volume"], rr["volume"])
    e_area = rel_err(ra["area"], rr["area"])
    va, vr = abs(ra["volume"]) ** (5.0 / 3), abs(rr["volume"]) ** (5.0 / 3)
    e_mom = max(rel_err(pa / va if va > 0 else 0.0, pr / vr if vr > 0 else 0.0)
                for pa, pr in zip(ra["principal_moments"], rr["principal_moments"]))
    e_obb = max(rel_err(x, y) for x, y in zip(a["half"], ref["half"]))
    counts_ok = rel_err(a["ntris"], ref["ntris"]) <= 0.5 and rel_err(a["nverts"], ref["nverts"]) <= 0.5
    dist = icp_distance_rel(a, ref)
    q_icp = log_credit(dist, 0.01, 0.10)
    w = (0.175, 0.175, 0.10)
    g = (w[0] * log_credit(e_vol, 0.001, 0.01) + w[1] * log_credit(e_area, 0.01, 0.10) +
         w[2] * log_credit(e_mom, 0.01, 0.10)) / (w[0] + w[1] + w[2])
    score = g * (0.5 + 0.5 * q_icp) if e_obb < 0.10 and counts_ok else 0.0
    return {"geometry_similarity": score, "volume_rel_err": e_vol, "area_rel_err": e_area,
            "moments_rel_err": e_mom, "obb_extent_rel_err": e_obb, "icp_distance_rel": dist,
            "q_icp": q_icp}


def verify_spec(v, outdir):
    target = os.path.join(outdir, v["file"])
    asserts = []
    metrics = {}
    tris = r = None
    delivered = os.path.isfile(target) and os.path.getsize(target) > 0
    if delivered:
        try:
            tris = measure_stl.read_stl(target)
            if len(tris) == 0:
                raise ValueError("no triangles")
            r = measure_stl.analyze(tris, 1e-6)
        except (ValueError, OSError):
            tris = r = None
    asserts.append(("delivered:" + v["file"], "pass" if delivered else "fail", True, None, None))
    states = []
    for c in v["criteria"]:
        req = c.get("required", False)
        if c["measure"] == "void" and not any(k in c for k in ("min", "max")):
            c = dict(c, max=0.01)
        x = float("nan")
        if r is not None:
            try:
                x = float(spec_measure(c, tris, r))
            except ValueError:
                pass
        ok, exp = compare(c, x)
        states.append("pass" if ok else "fail")
        asserts.append((SPEC_PREFIX + c["name"], states[-1], req, x, exp))
    metrics["spec_consistency"], metrics["spec_failed"], metrics["spec_budget"] = spec_consistency(v, states)
    if "reference" in v:
        ref = shape(os.path.join(HERE, v["reference"]))
        g = None
        if r is not None:
            try:
                g = geometry_similarity(shape(target), ref)
            except (ValueError, np.linalg.LinAlgError):
                g = None
        if g is None:
            metrics["geometry_similarity"] = 0.0
            asserts.append(("geometry_similarity", "fail", False, None, None))
        else:
            metrics.update(g)
            asserts.append(("geometry_similarity", "pass" if g["geometry_similarity"] > 0 else "fail",
                            False, g["geometry_similarity"], None))
    return asserts, metrics


def score(task, asserts, metrics):
    feasible = all(s == "pass" for n, s, req, *_ in asserts if req)
    rw = task["verifier"].get("reward")
    if rw:
        g = min(1.0, max(0.0, metrics.get(rw["geometry"], 0.0)))
        s = min(1.0, max(0.0, metrics.get(rw["spec"], 0.0)))
        q = 2 * g * s / (g + s) if feasible and g > 0 and s > 0 else 0.0
        return q >= 1, feasible, q
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
    ap.add_argument("--table", action="store_true",
                    help="also print every run as one Markdown table")
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
    rows = []
    for t in tasks:
        runs = [("reference", t["reference"], "success", [])]
        runs += [(fl["name"], fl["steps"], "fail", fl.get("failing", [])) for fl in t.get("flawed", [])]
        runs += [("noop", [{"done": "nothing"}], "fail", ["delivered:" + t["verifier"]["file"]])]
        for name, steps, expect, failing in runs:
            asserts, metrics, wall, log = play(t, steps, args.keep, name)
            success, feasible, q = score(t, asserts, metrics)
            # as engisweep lists them: every failed assertion, and the
            # required ones that could not be evaluated
            failed = [a[0] for a in asserts if a[1] == "fail" or (a[2] and a[1] != "pass")]
            got = "success" if success else "fail"
            ok = got == expect and all(n in failed for n in failing)
            bad += not ok
            extra = ""
            if t["type"] == "optimization":
                extra = " feasible=%s q=%.3f" % (feasible, q)
            elif t["verifier"].get("reward"):
                rw = t["verifier"]["reward"]
                extra = " reward=%.4f (%s %.4f, %s %.4f)" % (
                    q, rw["geometry"], metrics.get(rw["geometry"], 0.0), rw["spec"], metrics.get(rw["spec"], 0.0))
            rows.append((t["id"], name, expect, got, q, failed, ok))
            print("%-4s %-18s %-22s %-7s %5.2fs%s failed=[%s]" % (
                "ok" if ok else "BAD", t["id"], name, got, wall, extra, ", ".join(failed)))
            if args.verbose or not ok:
                for a in asserts:
                    print("       %-26s %-11s measured=%s expected=%s" % (a[0], a[1], fmt(a[3]), fmt(a[4])))
                for line in log:
                    print("       " + line)
    if args.table:
        print("\n| task | run | must | got | score | failed | check |")
        print("|---|---|---|---|---:|---|---|")
        for tid, name, expect, got, q, failed, ok in rows:
            print("| %s | %s | %s | %s | %.4f | %s | %s |" % (
                tid, name, expect, got, q, ", ".join(failed) or "-", "ok" if ok else "BAD"))
    print("%d problem(s)" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
