#!/usr/bin/python3
"""Writes a structural model (tasks/SCHEMA-structural.md) for the benchmarks:
a 3D lattice of nx x ny x nz nodes, bars along the grid lines and one
diagonal per face cell, fixed on the plane z = 0 and loaded at the top.
--type truss: pin-jointed bars (3 dof per node count); --type frame: rigid
beams (6 dof per node). --no-braces leaves the diagonals out: with
--type frame, a moment frame like a building's."""
import argparse
import json

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--nodes", type=int, nargs=3, default=[60, 20, 20])
ap.add_argument("--type", default="truss", choices=["truss", "frame"])
ap.add_argument("--spacing", type=float, default=1.0)
ap.add_argument("--no-braces", action="store_true",
                help="grid lines only (a building frame), no face diagonals")
a = ap.parse_args()
nx, ny, nz = a.nodes
h = a.spacing


def nid(i, j, k):
    return (k * ny + j) * nx + i + 1


nodes = [{"id": nid(i, j, k), "xyz": [i * h, j * h, k * h]}
         for k in range(nz) for j in range(ny) for i in range(nx)]
elems = []
for k in range(nz):
    for j in range(ny):
        for i in range(nx):
            a0 = nid(i, j, k)
            dirs = [(1, 0, 0), (0, 1, 0), (0, 0, 1)]
            if not a.no_braces:
                dirs += [(1, 1, 0), (1, 0, 1), (0, 1, 1)]
            for di, dj, dk in dirs:
                if i + di < nx and j + dj < ny and k + dk < nz:
                    elems.append([a0, nid(i + di, j + dj, k + dk)])
kind = "truss" if a.type == "truss" else "beam"
model = {
    "format": "structural/1", "dim": 3, "units": {"length": "m", "force": "N"},
    "materials": [{"id": "steel", "E": 210e9, "nu": 0.3}],
    "sections": [{"id": "tube", "A": 1e-3, "Iy": 2e-6, "Iz": 2e-6, "J": 4e-6}],
    "nodes": nodes,
    "elements": [{"id": n + 1, "type": kind, "nodes": e, "material": "steel", "section": "tube"}
                 for n, e in enumerate(elems)],
    "supports": [{"node": nid(i, j, 0), "restrain": "all"} for j in range(ny) for i in range(nx)],
    "load_cases": [{"id": "top", "nodal": [{"node": nid(i, j, nz - 1), "F": [1e3, 0, -2e3]}
                                           for j in range(ny) for i in range(nx)]}],
}
with open(a.out, "w") as f:
    json.dump(model, f)
