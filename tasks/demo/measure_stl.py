#!/usr/bin/python3
"""measure_stl.py - mass properties and topology of an STL file.

Used to freeze the criterion values of the demo tasks: run the reference
solution, then measure what it produced.

    /usr/bin/python3 measure_stl.py part.stl
    /usr/bin/python3 measure_stl.py --json --beam-axis x beam.stl

Reads ASCII or binary STL (detected from content), welds exactly duplicated
vertices (or vertices closer than --weld-tol), and prints

  triangles, vertices, edges
  boundary / non-manifold / inconsistently oriented edges
  watertight, oriented (watertight + consistent + positive volume)
  shells (edge-connected components), Euler characteristic V - E + F,
  genus (sum over closed shells of (2 - chi) / 2; -1 when not watertight)
  volume (divergence theorem, signed), area, bbox min / max / spans
  section inertia of a prism along --beam-axis:
      I_about_<b> = integral of (c - cbar)^2 dV / span_<beam axis>
  where b is one of the two cross-section axes and c is the other one
  (engineering convention: I_about_y = integral z^2 dA).

Only numpy is needed (Debian's python3-numpy).
"""
import argparse
import json
import struct
import sys

import numpy as np

AXES = "xyz"


def read_stl(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) >= 84:
        (n,) = struct.unpack_from("<I", data, 80)
        if 84 + 50 * n == len(data):
            rec = np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
            arr = np.frombuffer(data, dtype=rec, count=n, offset=84)
            return arr["v"].astype(np.float64)
    text = data.decode("ascii", errors="replace")
    verts = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0].lower() == "vertex":
            verts.append([float(parts[1]), float(parts[2]), float(parts[3])])
    if len(verts) % 3:
        raise ValueError("%s: vertex count %d is not a multiple of 3" % (path, len(verts)))
    return np.array(verts, dtype=np.float64).reshape(-1, 3, 3)


def weld(tris, tol):
    pts = tris.reshape(-1, 3)
    if tol > 0:
        key = np.round(pts / tol).astype(np.int64)
    else:
        key = pts
    uniq, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    xyz = np.zeros((len(uniq), 3))
    xyz[inv] = pts  # any representative of each cluster
    return xyz, inv.reshape(-1, 3)


class DSU:
    def __init__(self, n):
        self.p = list(range(n))

    def find(self, a):
        p = self.p
        while p[a] != a:
            p[a] = p[p[a]]
            a = p[a]
        return a

    def union(self, a, b):
        a, b = self.find(a), self.find(b)
        if a != b:
            self.p[max(a, b)] = min(a, b)


def analyze(tris, weld_tol=0.0, beam_axis=None):
    xyz, f = weld(tris, weld_tol)
    nf = len(f)
    # drop degenerate faces (repeated index) from topology, keep count
    degenerate = int(np.sum((f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 0] == f[:, 2])))

    # directed half-edges
    he = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
    he_face = np.concatenate([np.arange(nf)] * 3)
    und = np.sort(he, axis=1)
    uedges, einv, ecount = np.unique(und, axis=0, return_inverse=True, return_counts=True)
    einv = einv.reshape(-1)
    nedges = len(uedges)
    boundary = int(np.sum(ecount == 1))
    nonmanifold = int(np.sum(ecount > 2))
    # orientation: for 2-use edges, the two uses must run opposite ways
    forward = (he[:, 0] < he[:, 1]).astype(np.int64)
    fwd_per_edge = np.bincount(einv, weights=forward, minlength=nedges)
    inconsistent = int(np.sum((ecount == 2) & (fwd_per_edge != 1)))
    watertight = boundary == 0 and nonmanifold == 0

    # shells: faces connected through shared edges
    dsu = DSU(nf)
    order = np.argsort(einv, kind="stable")
    se = einv[order]
    sf = he_face[order]
    same = np.nonzero(se[1:] == se[:-1])[0]
    for i in same:
        dsu.union(int(sf[i]), int(sf[i + 1]))
    root = np.array([dsu.find(i) for i in range(nf)])
    shell_ids, shell_of_face = np.unique(root, return_inverse=True)
    nshells = len(shell_ids)

    # Euler characteristic, total and per shell
    used_v = np.unique(f.reshape(-1))
    euler = len(used_v) - nedges + nf
    genus = 0
    closed_shells = 0
    shell_info = []
    edge_shell = shell_of_face[he_face]
    for s in range(nshells):
        fs = f[shell_of_face == s]
        vs = len(np.unique(fs.reshape(-1)))
        es_mask = edge_shell == s
        es_ids = np.unique(einv[es_mask])
        es = len(es_ids)
        chi = vs - es + len(fs)
        closed = bool(np.all(ecount[es_ids] == 2))
        g = (2 - chi) // 2 if closed else None
        if closed:
            closed_shells += 1
            genus += g
        shell_info.append({"faces": int(len(fs)), "chi": int(chi), "closed": closed, "genus": g})
    if not watertight:
        genus = -1

    # mass properties, relative to the bbox centre for accuracy
    p = xyz[f]
    bmin = xyz[used_v].min(axis=0)
    bmax = xyz[used_v].max(axis=0)
    c0 = 0.5 * (bmin + bmax)
    q = p - c0
    cr = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    area = 0.5 * float(np.sum(np.linalg.norm(cr, axis=1)))
    det = np.einsum("ij,ij->i", q[:, 0], np.cross(q[:, 1], q[:, 2]))
    volume = float(np.sum(det) / 6.0)
    S = q.sum(axis=1)  # (nf, 3)
    first = (det[:, None] * S).sum(axis=0) / 24.0
    centroid_rel = first / volume if volume != 0 else np.zeros(3)
    second = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            second[i, j] = np.sum(det * ((q[:, :, i] * q[:, :, j]).sum(axis=1) + S[:, i] * S[:, j])) / 120.0
    second_c = second - volume * np.outer(centroid_rel, centroid_rel)
    spans = bmax - bmin
    out = {
        "triangles": int(nf),
        "vertices": int(len(used_v)),
        "edges": int(nedges),
        "degenerate_faces": degenerate,
        "boundary_edges": boundary,
        "nonmanifold_edges": nonmanifold,
        "inconsistent_edges": inconsistent,
        "watertight": bool(watertight),
        "oriented": bool(watertight and inconsistent == 0 and volume > 0),
        "shells": int(nshells),
        "closed_shells": int(closed_shells),
        "euler": int(euler),
        "genus": int(genus),
        "volume": volume,
        "area": area,
        "centroid": (centroid_rel + c0).tolist(),
        "bbox_min": bmin.tolist(),
        "bbox_max": bmax.tolist(),
        "span_x": float(spans[0]),
        "span_y": float(spans[1]),
        "span_z": float(spans[2]),
        "second_moment_centroidal": {
            "xx": second_c[0, 0], "yy": second_c[1, 1], "zz": second_c[2, 2],
            "xy": second_c[0, 1], "xz": second_c[0, 2], "yz": second_c[1, 2],
        },
    }
    if beam_axis is not None:
        a = AXES.index(beam_axis)
        others = [k for k in range(3) if k != a]
        L = spans[a]
        for b in others:
            c = [k for k in others if k != b][0]
            out["section_inertia_about_" + AXES[b]] = float(second_c[c, c] / L)
        out["section_area"] = volume / L
    if len(shell_info) <= 20:
        out["shell_detail"] = shell_info
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stl")
    ap.add_argument("--weld-tol", type=float, default=0.0,
                    help="merge vertices closer than this (default: exact duplicates only)")
    ap.add_argument("--beam-axis", choices=list(AXES),
                    help="report section inertia of a prism along this axis")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    tris = read_stl(args.stl)
    if len(tris) == 0:
        print("%s: no triangles" % args.stl, file=sys.stderr)
        return 1
    r = analyze(tris, args.weld_tol, args.beam_axis)
    if args.json:
        print(json.dumps(r, indent=1, sort_keys=True))
        return 0
    for k, v in r.items():
        if k == "shell_detail":
            continue
        if isinstance(v, float):
            print("%-28s %.6f" % (k, v))
        elif isinstance(v, dict):
            for kk, vv in v.items():
                print("%-28s %.6f" % (k + "." + kk, vv))
        elif isinstance(v, list):
            print("%-28s %s" % (k, " ".join("%.6f" % x for x in v)))
        else:
            print("%-28s %s" % (k, v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
