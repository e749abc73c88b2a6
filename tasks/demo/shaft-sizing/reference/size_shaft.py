#!/usr/bin/python3
"""Sizes a solid shaft for the governing load case of loads.csv (maximum-shear
criterion: tau = 16 sqrt(M^2 + T^2) / (pi d^3)) and writes shaft_d.scad."""
import csv
import math

TAU_ALLOW = 40.0  # MPa = N/mm^2

with open("loads.csv", newline="") as f:
    rows = list(csv.DictReader(f))
te = []
for r in rows:
    m = float(r["bending_moment_Nm"]) * 1e3  # N mm
    t = float(r["torque_Nm"]) * 1e3
    te.append((math.hypot(m, t), r["case"]))
te_max, case = max(te)
d_min = (16.0 * te_max / (math.pi * TAU_ALLOW)) ** (1.0 / 3.0)
d = math.ceil(d_min - 1e-9)
with open("sizing.txt", "w") as f:
    f.write("governing case: %s\n" % case)
    f.write("equivalent torque: %.1f N m\n" % (te_max / 1e3))
    f.write("minimum diameter: %.2f mm\n" % d_min)
    f.write("selected diameter: %d mm\n" % d)
with open("shaft_d.scad", "w") as f:
    f.write("d = %d;\n" % d)
print(open("sizing.txt").read(), end="")
