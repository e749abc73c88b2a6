#!/usr/bin/python3
"""Writes nut.stl (binary STL, mm): M10 hex nut blank, 17 across flats, 8 thick,
10 bore with 96 segments; axis z, bottom on z = 0, flats parallel to x."""
import math
import struct

AF, M, BORE, N = 17.0, 8.0, 10.0, 96  # N: multiple of 6, so the corners lie on rays

apothem = AF / 2.0
rays = [2.0 * math.pi * i / N for i in range(N)]


def hex_radius(a):
    # flats face +-y, so flat normals sit at 30, 90, 150, ... degrees
    # (corners at 0, 60, 120, ... degrees)
    rel = a % math.radians(60.0) - math.radians(30.0)
    return apothem / math.cos(rel)


outer = [(hex_radius(a) * math.cos(a), hex_radius(a) * math.sin(a)) for a in rays]
inner = [(BORE / 2.0 * math.cos(a), BORE / 2.0 * math.sin(a)) for a in rays]

tris = []


def quad(a, b, c, d):
    """Counter-clockwise seen from outside: a-b-c-d."""
    tris.append((a, b, c))
    tris.append((a, c, d))


for i in range(N):
    j = (i + 1) % N
    o0, o1, i0, i1 = outer[i], outer[j], inner[i], inner[j]
    # top face (z = M), normal +z: inner -> outer ring, counter-clockwise from above
    quad((*i0, M), (*o0, M), (*o1, M), (*i1, M))
    # bottom face (z = 0), normal -z
    quad((*i0, 0.0), (*i1, 0.0), (*o1, 0.0), (*o0, 0.0))
    # outer flats, normal outward
    quad((*o0, 0.0), (*o1, 0.0), (*o1, M), (*o0, M))
    # bore wall, normal towards the axis
    quad((*i0, 0.0), (*i0, M), (*i1, M), (*i1, 0.0))


def normal(t):
    (ax, ay, az), (bx, by, bz), (cx, cy, cz) = t
    ux, uy, uz = bx - ax, by - ay, bz - az
    vx, vy, vz = cx - ax, cy - ay, cz - az
    nx, ny, nz = uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx
    ln = math.sqrt(nx * nx + ny * ny + nz * nz) or 1.0
    return nx / ln, ny / ln, nz / ln


with open("nut.stl", "wb") as f:
    f.write(b"M10 hex nut blank, mm".ljust(80, b" "))
    f.write(struct.pack("<I", len(tris)))
    for t in tris:
        f.write(struct.pack("<3f", *normal(t)))
        for v in t:
            f.write(struct.pack("<3f", *v))
        f.write(struct.pack("<H", 0))
print("nut.stl: %d triangles" % len(tris))
