#!/usr/bin/python3
"""Writes a CalculiX deck of a cantilever block: a structured grid of
nx x ny x nz cells over L x W x H, each cell cut into six tetrahedra along its
main diagonal (conforming), or kept as one C3D8. The face x=0 is clamped; the
load is a shear force spread over the tip nodes (--load cload), a pressure
on the top face (--load pressure), or both. Nodes and elements can be
numbered in a shuffled order with gaps (--shuffle SEED) to exercise the
reader. Used by the tests and by bench/fe_solid.sh."""
import argparse
import itertools
import random

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--type", default="C3D10", choices=["C3D4", "C3D10", "C3D8"])
ap.add_argument("--cells", type=int, nargs=3, default=[8, 2, 2])
ap.add_argument("--size", type=float, nargs=3, default=[4.0, 1.0, 1.0])
ap.add_argument("--load", default="cload", choices=["cload", "pressure", "both"])
ap.add_argument("--force", type=float, default=-1000.0)
ap.add_argument("--pressure", type=float, default=50.0)
ap.add_argument("--young", type=float, default=210000.0)
ap.add_argument("--poisson", type=float, default=0.3)
ap.add_argument("--shuffle", type=int, default=0)
ap.add_argument("--sets", action="store_true", help="name supports and loads through sets")
ap.add_argument("--frd", action="store_true", help="also ask ccx for displacements in .frd")
ap.add_argument("--stress", action="store_true",
                help="also ask ccx for stresses: nodal in .frd, integration points in .dat")
a = ap.parse_args()

nx, ny, nz = a.cells
L, W, H = a.size
coords = {}


def corner(i, j, k):
    key = ("c", i, j, k)
    if key not in coords:
        coords[key] = (L * i / nx, W * j / ny, H * k / nz)
    return key


def midside(p, q):
    key = ("m",) + tuple(sorted([p, q]))
    if key not in coords:
        coords[key] = tuple((x + y) / 2 for x, y in zip(coords[p], coords[q]))
    return key


def vol(p):
    x = [coords[k] for k in p[:4]]
    d = [[x[i][c] - x[0][c] for c in range(3)] for i in (1, 2, 3)]
    return (d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1])
            - d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0])
            + d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]))


elems = []
for i, j, k in itertools.product(range(nx), range(ny), range(nz)):
    if a.type == "C3D8":
        c = [corner(i + di, j + dj, k + dk) for di, dj, dk in
             [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]]
        elems.append(c)
        continue
    for perm in itertools.permutations(range(3)):
        p = [0, 0, 0]
        t = [corner(i, j, k)]
        for ax in perm:
            p[ax] += 1
            t.append(corner(i + p[0], j + p[1], k + p[2]))
        if vol(t) < 0:
            t[1], t[2] = t[2], t[1]
        if a.type == "C3D10":
            e = [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]
            t += [midside(t[u], t[v]) for u, v in e]
        elems.append(t)

keys = list(coords)
ids = list(range(1, len(keys) + 1))
eids = list(range(1, len(elems) + 1))
rng = random.Random(a.shuffle)
if a.shuffle:
    ids = [3 * n + 7 for n in ids]
    eids = [2 * n + 5 for n in eids]
    rng.shuffle(ids)
    rng.shuffle(eids)
nid = dict(zip(keys, ids))
order = list(range(len(keys)))
eorder = list(range(len(elems)))
if a.shuffle:
    rng.shuffle(order)
    rng.shuffle(eorder)

fixed = [nid[k] for k in keys if abs(coords[k][0]) < 1e-12]
tip = [nid[k] for k in keys if abs(coords[k][0] - L) < 1e-12]
faces = {"C3D4": [(0, 1, 2), (0, 3, 1), (1, 3, 2), (2, 3, 0)],
         "C3D10": [(0, 1, 2), (0, 3, 1), (1, 3, 2), (2, 3, 0)],
         "C3D8": [(0, 1, 2, 3), (4, 7, 6, 5), (0, 4, 5, 1), (1, 5, 6, 2), (2, 6, 7, 3), (3, 7, 4, 0)]}
top = []
for n, e in enumerate(elems):
    for f, fn in enumerate(faces[a.type]):
        if all(abs(coords[e[q]][2] - H) < 1e-12 for q in fn):
            top.append((eids[n], f + 1))

with open(a.out, "w") as o:
    o.write("** cantilever block, generated\n*HEADING\ncantilever %s\n*NODE, NSET=NALL\n" % a.type)
    for q in order:
        x = coords[keys[q]]
        o.write("%d, %.17g, %.17g, %.17g\n" % (nid[keys[q]], x[0], x[1], x[2]))
    o.write("*ELEMENT, TYPE=%s, ELSET=EALL\n" % a.type)
    for q in eorder:
        nodes = [str(nid[k]) for k in elems[q]]
        line = ", ".join([str(eids[q])] + nodes)
        if len(nodes) > 8:  # continuation line, as CalculiX writes them
            line = ", ".join([str(eids[q])] + nodes[:8]) + ",\n" + ", ".join(nodes[8:])
        o.write(line + "\n")
    o.write("*NSET, NSET=FIX\n")
    for s in range(0, len(fixed), 8):
        o.write(", ".join(map(str, fixed[s:s + 8])) + "\n")
    o.write("*NSET, NSET=TIP\n")
    for s in range(0, len(tip), 8):
        o.write(", ".join(map(str, tip[s:s + 8])) + "\n")
    o.write("*MATERIAL, NAME=STEEL\n*ELASTIC\n%.17g, %.17g\n" % (a.young, a.poisson))
    o.write("*SOLID SECTION, ELSET=EALL, MATERIAL=STEEL\n")
    o.write("*STEP\n*STATIC\n*BOUNDARY\nFIX, 1, 3\n")
    if a.load in ("cload", "both"):
        o.write("*CLOAD\n")
        if a.sets:
            o.write("TIP, 3, %.17g\n" % (a.force / len(tip)))
        else:
            for n in tip:
                o.write("%d, 3, %.17g\n" % (n, a.force / len(tip)))
    if a.load in ("pressure", "both"):
        o.write("*DLOAD\n")
        for e, f in top:
            o.write("%d, P%d, %.17g\n" % (e, f, a.pressure))
    if a.frd:
        o.write("*NODE FILE\nU\n")
    if a.stress:
        o.write("*EL FILE\nS\n*EL PRINT, ELSET=EALL\nS\n")
    o.write("*NODE PRINT, NSET=NALL\nU\n*NODE PRINT, NSET=FIX, TOTALS=ONLY\nRF\n*END STEP\n")
