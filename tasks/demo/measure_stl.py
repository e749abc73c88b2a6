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
  (engineering convention: I_about_y = integral z^2 dA);
  principal moments of inertia of the solid about its centroid (ascending).

Named parameters of parametric-CAD tasks (tasks/SCHEMA-cad.md), measured here
by methods of their own, not the ones engisweep's kernels use:

  hole_diameter(tris, axis, at): twice the smallest distance from the line
      through `at` along `axis` to the triangles. Every triangle lies within
      the part's extent along the axis, so this is the distance in the plane
      across the axis from the point `at` to each triangle's projection:
      0 when a projection with area covers the point (material on the line),
      else the distance to the nearest projected edge. When the line runs
      through empty space the nearest material is on the surface, so this is
      exactly the largest empty cylinder (for a tessellated hole, the
      polygon's inradius).
  column_lengths(tris, axis, pts, lo, hi): material length inside [lo, hi]
      of each column along `axis` through the points `pts`, from the sorted
      heights where the column crosses the triangles (inside between the
      first and second crossing, the third and fourth, ...). The points get
      a tiny irrational offset so that no column runs exactly along an edge;
      a column with an odd number of crossings is moved again.
  void_fraction / material_volume: the mean column length times the
      cross-section, columns on a sunflower (Vogel) pattern over a disc or a
      midpoint grid over a box; regions along a coordinate axis only.

    /usr/bin/python3 measure_stl.py --hole z,70,45 --hole z,15,15 part.stl

Only numpy is needed (Debian's python3-numpy).
"""
import argparse
import json
import math
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
        "principal_moments": principal_moments(second_c * (1.0 if volume >= 0 else -1.0)),
        "welded_vertices": int(len(xyz)),
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


def principal_moments(second_c):
    """Eigenvalues (ascending) of the inertia tensor I = tr(C) 1 - C, C the
    centroidal second moments (integral of x_i x_j dV)."""
    inertia = np.trace(second_c) * np.eye(3) - second_c
    return [float(x) for x in np.linalg.eigvalsh(inertia)]


def across(axis):
    """The two coordinates across `axis`, in x, y, z order (SCHEMA-cad `at`)."""
    a = AXES.index(axis) if isinstance(axis, str) else axis
    return a, [k for k in range(3) if k != a]


def hole_diameter(tris, axis, at):
    """Twice the distance from the line through `at` along `axis` to the
    nearest triangle; 0 when material lies on the line (see the header)."""
    a, (u, w) = across(axis)
    p = tris[:, :, [u, w]] - np.asarray(at, dtype=np.float64)  # (n, 3, 2), origin = the line
    e = np.roll(p, -1, axis=1) - p  # edges A->B, B->C, C->A
    cross = p[:, :, 0] * e[:, :, 1] - p[:, :, 1] * e[:, :, 0]  # sign of the origin per edge
    area2 = (p[:, 1, 0] - p[:, 0, 0]) * (p[:, 2, 1] - p[:, 0, 1]) - \
        (p[:, 1, 1] - p[:, 0, 1]) * (p[:, 2, 0] - p[:, 0, 0])
    scale = max(float(np.abs(p).max()), 1.0)
    flat = np.abs(area2) > 1e-12 * scale * scale
    covers = flat & (np.all(cross * np.sign(area2)[:, None] >= 0, axis=1))
    if np.any(covers):
        return 0.0
    ee = np.einsum("ijk,ijk->ij", e, e)
    t = np.clip(-np.einsum("ijk,ijk->ij", p, e) / np.where(ee > 0, ee, 1.0), 0.0, 1.0)
    q = p + t[:, :, None] * e
    return 2.0 * float(np.sqrt(np.min(np.einsum("ijk,ijk->ij", q, q))))


def _crossings(tris2, heights, pts):
    """For each point, the heights where its column crosses a triangle
    (strictly inside the projection). Returns (point index, height) arrays."""
    out_i, out_z = [], []
    lo = pts.min(axis=0)
    hi = pts.max(axis=0)
    keep = np.all(tris2.max(axis=1) >= lo, axis=1) & np.all(tris2.min(axis=1) <= hi, axis=1)
    tris2, heights = tris2[keep], heights[keep]
    A, B, C = tris2[:, 0], tris2[:, 1], tris2[:, 2]
    area2 = (B[:, 0] - A[:, 0]) * (C[:, 1] - A[:, 1]) - (B[:, 1] - A[:, 1]) * (C[:, 0] - A[:, 0])
    ok = area2 != 0
    A, B, C, area2, heights = A[ok], B[ok], C[ok], area2[ok], heights[ok]
    chunk = max(1, 2000000 // max(1, len(pts)))
    for s in range(0, len(A), chunk):
        a, b, c, ar, h = A[s:s + chunk], B[s:s + chunk], C[s:s + chunk], area2[s:s + chunk], heights[s:s + chunk]
        px = pts[:, None, 0]
        py = pts[:, None, 1]
        wa = ((c[:, 0] - b[:, 0]) * (py - b[:, 1]) - (c[:, 1] - b[:, 1]) * (px - b[:, 0])) / ar
        wb = ((a[:, 0] - c[:, 0]) * (py - c[:, 1]) - (a[:, 1] - c[:, 1]) * (px - c[:, 0])) / ar
        wc = 1.0 - wa - wb
        ii, jj = np.nonzero((wa > 0) & (wb > 0) & (wc > 0))
        out_i.append(ii)
        out_z.append(wa[ii, jj] * h[jj, 0] + wb[ii, jj] * h[jj, 1] + wc[ii, jj] * h[jj, 2])
    if not out_i:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate(out_i), np.concatenate(out_z)


def column_lengths(tris, axis, pts, lo, hi):
    """Material length within [lo, hi] of the column along `axis` through
    each point of pts (n, 2), by the crossings of the closed surface."""
    a, (u, w) = across(axis)
    tris2 = tris[:, :, [u, w]]
    heights = tris[:, :, a]
    pts = np.asarray(pts, dtype=np.float64)
    span = max(float(np.ptp(tris2.reshape(-1, 2), axis=0).max()), 1.0)
    lengths = np.zeros(len(pts))
    todo = np.arange(len(pts))
    for attempt in range(4):
        # an offset no vertex coordinate shares, so no column runs along an edge
        off = span * 1e-9 * (attempt + 1) * np.array([math.sqrt(2), math.sqrt(3)])
        ii, zz = _crossings(tris2, heights, pts[todo] + off)
        order = np.lexsort((zz, ii))
        ii, zz = ii[order], zz[order]
        counts = np.bincount(ii, minlength=len(todo))
        odd = counts % 2 == 1
        zc = np.clip(zz, lo, hi)
        rank = np.arange(len(ii)) - np.repeat(np.cumsum(counts) - counts, counts)
        sign = np.where(rank % 2 == 0, -1.0, 1.0)
        lengths[todo] = np.bincount(ii, weights=sign * zc, minlength=len(todo))
        if not odd.any():
            return lengths
        todo = todo[odd]
    raise ValueError("%d column(s) cross the surface an odd number of times: not a closed mesh?" % len(todo))


def disc_points(centre, radius, n=4096):
    """n points evenly over a disc (Vogel's sunflower pattern)."""
    k = np.arange(n) + 0.5
    r = radius * np.sqrt(k / n)
    t = k * math.pi * (3.0 - math.sqrt(5.0))
    return np.column_stack([centre[0] + r * np.cos(t), centre[1] + r * np.sin(t)])


def void_fraction(tris, axis, at, diameter, n=4096):
    """Material fraction of the cylinder of `diameter` around the line
    through `at` along `axis`, over the part's extent along the axis."""
    a, _ = across(axis)
    lo, hi = float(tris[:, :, a].min()), float(tris[:, :, a].max())
    if hi <= lo:
        return 0.0
    return float(np.mean(column_lengths(tris, a, disc_points(at, diameter / 2.0, n), lo, hi)) / (hi - lo))


def material_volume(tris, region, n=128):
    """Material volume in a region of tasks/SCHEMA-cad.md: an axis-aligned
    box (n x n columns along z) or a cylinder whose axis is a coordinate
    axis (n * n columns over its disc)."""
    if "box" in region:
        bmin = np.asarray(region["box"]["min"], dtype=np.float64)
        bmax = np.asarray(region["box"]["max"], dtype=np.float64)
        gx = bmin[0] + (np.arange(n) + 0.5) * (bmax[0] - bmin[0]) / n
        gy = bmin[1] + (np.arange(n) + 0.5) * (bmax[1] - bmin[1]) / n
        pts = np.array(np.meshgrid(gx, gy, indexing="ij")).reshape(2, -1).T
        length = column_lengths(tris, 2, pts, bmin[2], bmax[2])
        return float(np.mean(length) * (bmax[0] - bmin[0]) * (bmax[1] - bmin[1]))
    cyl = region["cylinder"]
    ax = np.asarray(cyl["axis"], dtype=np.float64)
    nz = np.nonzero(ax)[0]
    if len(nz) != 1:
        raise ValueError("cylinder regions along a coordinate axis only")
    a, (u, w) = across(int(nz[0]))
    base = np.asarray(cyl["base"], dtype=np.float64)
    lo, hi = sorted((base[a], base[a] + math.copysign(cyl["length"], ax[a])))
    pts = disc_points((base[u], base[w]), cyl["radius"], n * n)
    return float(np.mean(column_lengths(tris, a, pts, lo, hi)) * math.pi * cyl["radius"] ** 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stl")
    ap.add_argument("--weld-tol", type=float, default=0.0,
                    help="merge vertices closer than this (default: exact duplicates only)")
    ap.add_argument("--beam-axis", choices=list(AXES),
                    help="report section inertia of a prism along this axis")
    ap.add_argument("--hole", action="append", default=[], metavar="AXIS,U,W",
                    help="also report the hole diameter along AXIS through (U, W), e.g. z,70,45")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    tris = read_stl(args.stl)
    if len(tris) == 0:
        print("%s: no triangles" % args.stl, file=sys.stderr)
        return 1
    r = analyze(tris, args.weld_tol, args.beam_axis)
    for h in args.hole:
        ax, cu, cw = h.split(",")
        r["hole_diameter_%s_%s_%s" % (ax, cu, cw)] = hole_diameter(tris, ax, (float(cu), float(cw)))
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
