#!/usr/bin/python3
"""Writes inputs/mesh.inp: a steel bracket arm 120 x 20 x 10 mm (x along the
arm, z the thin direction) meshed with 24 x 4 x 2 linear hexahedra (C3D8,
5 mm cubes). Node sets: FIX (face x = 0), END (face x = 120); element set
EALL. Run from this folder: /usr/bin/python3 make_mesh.py"""
import os

L, B, H = 120.0, 20.0, 10.0
NX, NY, NZ = 24, 4, 2


def nid(i, j, k):
    return 1 + i + (NX + 1) * (j + (NY + 1) * k)


os.makedirs("inputs", exist_ok=True)
with open("inputs/mesh.inp", "w") as f:
    f.write("** Bracket arm 120 x 20 x 10 mm, %d C3D8 elements, %d nodes, units mm\n"
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
print("inputs/mesh.inp written")
