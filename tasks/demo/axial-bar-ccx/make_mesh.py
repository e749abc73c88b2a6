#!/usr/bin/python3
"""Writes inputs/mesh.inp: an aluminium tie bar 400 x 20 x 20 mm (x along the
bar) meshed with 40 x 2 x 2 linear hexahedra (C3D8, 10 mm cubes).
Node sets: FIX (face x = 0), PIN (node at x = y = z = 0), ROLL (node at
x = 0, y = 20, z = 0), END (face x = 400). Element set: EALL.
Run from this folder: /usr/bin/python3 make_mesh.py"""
import os

L, B, H = 400.0, 20.0, 20.0
NX, NY, NZ = 40, 2, 2


def nid(i, j, k):
    return 1 + i + (NX + 1) * (j + (NY + 1) * k)


os.makedirs("inputs", exist_ok=True)
with open("inputs/mesh.inp", "w") as f:
    f.write("** Tie bar 400 x 20 x 20 mm, %d C3D8 elements, %d nodes, units mm\n"
            % (NX * NY * NZ, (NX + 1) * (NY + 1) * (NZ + 1)))
    f.write("*NODE, NSET=NALL\n")
    for k in range(NZ + 1):
        for j in range(NY + 1):
            for i in range(NX + 1):
                f.write("%d, %.6g, %.6g, %.6g\n"
                        % (nid(i, j, k), i * L / NX, j * B / NY, k * H / NZ))
    f.write("*ELEMENT, TYPE=C3D8, ELSET=EALL\n")
    e = 0
    for k in range(NZ):
        for j in range(NY):
            for i in range(NX):
                e += 1
                c = [nid(i, j, k), nid(i + 1, j, k), nid(i + 1, j + 1, k), nid(i, j + 1, k),
                     nid(i, j, k + 1), nid(i + 1, j, k + 1), nid(i + 1, j + 1, k + 1),
                     nid(i, j + 1, k + 1)]
                f.write("%d, %s\n" % (e, ", ".join(map(str, c))))
    for name, i in (("FIX", 0), ("END", NX)):
        members = [nid(i, j, k) for k in range(NZ + 1) for j in range(NY + 1)]
        f.write("*NSET, NSET=%s\n%s,\n" % (name, ", ".join(map(str, members))))
    f.write("*NSET, NSET=PIN\n%d,\n" % nid(0, 0, 0))
    f.write("*NSET, NSET=ROLL\n%d,\n" % nid(0, NY, 0))
print("inputs/mesh.inp written")
