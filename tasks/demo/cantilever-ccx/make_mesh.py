#!/usr/bin/python3
"""Writes inputs/mesh.inp: a steel cantilever 200 x 20 x 30 mm (x along the
span, y the width, z the depth) meshed with 20 x 2 x 3 quadratic hexahedra
(C3D20R, 10 mm cubes). Node sets: FIX (face x = 0), TIP (face x = 200).
Element set: EALL. Run from this folder: /usr/bin/python3 make_mesh.py"""
import os

L, B, H = 200.0, 20.0, 30.0
NX, NY, NZ = 20, 2, 3

# node grid at half-element spacing; a node exists where at most one index is odd
ids = {}
nodes = []
for k in range(2 * NZ + 1):
    for j in range(2 * NY + 1):
        for i in range(2 * NX + 1):
            if (i % 2) + (j % 2) + (k % 2) > 1:
                continue
            ids[(i, j, k)] = len(nodes) + 1
            nodes.append((i * L / (2 * NX), j * B / (2 * NY), k * H / (2 * NZ)))

corner = [(0, 0, 0), (2, 0, 0), (2, 2, 0), (0, 2, 0),
          (0, 0, 2), (2, 0, 2), (2, 2, 2), (0, 2, 2)]
mid = [(1, 0, 0), (2, 1, 0), (1, 2, 0), (0, 1, 0),
       (1, 0, 2), (2, 1, 2), (1, 2, 2), (0, 1, 2),
       (0, 0, 1), (2, 0, 1), (2, 2, 1), (0, 2, 1)]
elems = []
for ez in range(NZ):
    for ey in range(NY):
        for ex in range(NX):
            conn = [ids[(2 * ex + a, 2 * ey + b, 2 * ez + c)] for a, b, c in corner + mid]
            elems.append(conn)


def idlist(sel):
    out = []
    for key, nid in sorted(ids.items(), key=lambda kv: kv[1]):
        if sel(key):
            out.append(nid)
    return out


def write_set(f, name, members):
    f.write("*NSET, NSET=%s\n" % name)
    for i in range(0, len(members), 10):
        f.write(", ".join(str(n) for n in members[i:i + 10]) + ",\n")


os.makedirs("inputs", exist_ok=True)
with open("inputs/mesh.inp", "w") as f:
    f.write("** Cantilever 200 x 20 x 30 mm, %d C3D20R elements, %d nodes, units mm\n"
            % (len(elems), len(nodes)))
    f.write("*NODE, NSET=NALL\n")
    for n, (x, y, z) in enumerate(nodes, 1):
        f.write("%d, %.6g, %.6g, %.6g\n" % (n, x, y, z))
    f.write("*ELEMENT, TYPE=C3D20R, ELSET=EALL\n")
    for e, c in enumerate(elems, 1):
        f.write("%d, %s,\n%s\n" % (e, ", ".join(map(str, c[:15])), ", ".join(map(str, c[15:]))))
    write_set(f, "FIX", idlist(lambda k: k[0] == 0))
    write_set(f, "TIP", idlist(lambda k: k[0] == 2 * NX))
print("inputs/mesh.inp: %d nodes, %d elements, TIP %d nodes"
      % (len(nodes), len(elems), len(idlist(lambda k: k[0] == 2 * NX))))
