# engisweep kernel mesh / icp / distance on generated files: a cube and a
# pierced pair of boxes as OBJ, an egg-shaped cloud moved by a known rigid
# transform as PLY and XYZ; JSON read back with Python; usage errors.
. "$(dirname "$0")/lib.sh"
"$PY" - <<'PY'
import math, random, struct
def box(x0, y0, z0, a, b, c, base):
    v = [(x0 + a * (k & 1), y0 + b * (k >> 1 & 1), z0 + c * (k >> 2 & 1)) for k in range(8)]
    q = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    f = [tuple(base + i + 1 for i in quad) for quad in q]
    return v, f
v, f = box(0, 0, 0, 1, 1, 1, 0)
with open("cube.obj", "w") as o:
    o.writelines("v %r %r %r\n" % p for p in v)
    o.writelines("f %d %d %d %d\n" % q for q in f)
v2, f2 = box(0.5, 0.25, 0.25, 1, 0.5, 0.5, 8)
with open("pierced.obj", "w") as o:
    o.writelines("v %r %r %r\n" % p for p in v + v2)
    o.writelines("f %d %d %d %d\n" % q for q in f + f2)
rnd = random.Random(3)
pts = []
for i in range(20000):
    u = 2 * rnd.random() - 1; ph = 2 * math.pi * rnd.random(); r = math.sqrt(1 - u * u)
    x, y, z = u, r * math.cos(ph), r * math.sin(ph)
    k = 1 + 0.3 * x + 0.1 * y * y
    pts.append((30 * x, 20 * y * k, 12.5 * z * k))
th = math.radians(7); ax = (1 / math.sqrt(3),) * 3; c, s, C = math.cos(th), math.sin(th), 1 - math.cos(th)
R = [[c + ax[0]**2 * C, ax[0]*ax[1]*C - ax[2]*s, ax[0]*ax[2]*C + ax[1]*s],
     [ax[1]*ax[0]*C + ax[2]*s, c + ax[1]**2 * C, ax[1]*ax[2]*C - ax[0]*s],
     [ax[2]*ax[0]*C - ax[1]*s, ax[2]*ax[1]*C + ax[0]*s, c + ax[2]**2 * C]]
t = (1.0, -0.5, 2.0)
moved = [tuple(sum(R[i][j] * p[j] for j in range(3)) + t[i] for i in range(3)) for p in pts]
rnd.shuffle(moved)
with open("src.xyz", "w") as o:
    o.write("# source\n")
    o.writelines("%r %r %r\n" % p for p in pts)
with open("dst.ply", "wb") as o:
    o.write(b"ply\nformat binary_little_endian 1.0\nelement vertex %d\n" % len(moved))
    o.write(b"property double x\nproperty double y\nproperty double z\nend_header\n")
    for p in moved:
        o.write(struct.pack("<3d", *p))
with open("line_a.xyz", "w") as o:
    o.writelines("%d 0 0\n" % i for i in range(100))
with open("line_b.xyz", "w") as o:
    o.writelines("%d 0 0.25\n" % i for i in range(100))
PY

"$ENGISWEEP" kernel mesh --json cube.obj > cube.json
"$PY" - <<'PY' || fail "kernel mesh: cube"
import json
r = json.load(open("cube.json"))
assert r["triangles"] == 12 and r["watertight"] and r["oriented"] and r["genus"] == 0, r
assert abs(r["volume"] - 1) < 1e-14 and abs(r["area"] - 6) < 1e-14, r
assert all(abs(m - 1 / 6) < 1e-14 for m in r["principal_moments"]), r
assert r["obb"]["volume"] == 1 and "self_intersections" not in r
assert r["total_s"] >= 0
PY
"$ENGISWEEP" kernel mesh --self-intersections --json pierced.obj > pierced.json
"$PY" - <<'PY' || fail "kernel mesh: pierced boxes"
import json
r = json.load(open("pierced.json"))
assert r["shells"] == 2 and r["self_intersections"] > 0, r
assert all(a in (10, 11) and 12 <= b <= 19 for a, b in r["pairs"]), r["pairs"]
PY
says "$ENGISWEEP" kernel mesh --self-intersections pierced.obj | grep -q "^self-x .* intersecting face pairs" \
	|| fail "kernel mesh text output"

"$ENGISWEEP" kernel icp --json src.xyz dst.ply > icp.json
"$ENGISWEEP" kernel icp --method point-to-point --json src.xyz dst.ply > icp_pp.json
"$PY" - <<'PY' || fail "kernel icp"
import json, math
for name in ("icp.json", "icp_pp.json"):
    r = json.load(open(name))
    T = r["transform"]
    assert r["stop"] == "converged" and r["fitness"] == 1 and r["rmse"] < 1e-6, r
    assert abs(r["rotation_deg"] - 7) < 0.002, r["rotation_deg"]
    assert math.dist([T[3], T[7], T[11]], [1.0, -0.5, 2.0]) < 0.03, T
PY
"$ENGISWEEP" kernel distance --json line_a.xyz line_b.xyz > dist.json
"$PY" - <<'PY' || fail "kernel distance"
import json
r = json.load(open("dist.json"))
assert abs(r["chamfer"] - 0.5) < 1e-12 and abs(r["hausdorff"] - 0.25) < 1e-15, r
assert r["a_points"] == 100 and r["distance_s"] >= 0
PY

expect_rc 2 "$ENGISWEEP" kernel icp --method nearest src.xyz dst.ply
says "$ENGISWEEP" kernel icp --method nearest src.xyz dst.ply | grep -q "is not one of point-to-plane, point-to-point" \
	|| fail "bad method message"
expect_rc 1 "$ENGISWEEP" kernel mesh missing.stl
printf 'v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n' > nan.obj
expect_rc 2 "$ENGISWEEP" kernel mesh nan.obj
says "$ENGISWEEP" kernel mesh nan.obj | grep -q "cannot read OBJ 'nan.obj': line 2: vertex 2: coordinate z = nan is not finite" \
	|| fail "NaN message"
expect_rc 2 "$ENGISWEEP" kernel distance line_a.xyz
for k in mesh icp distance; do
	"$ENGISWEEP" kernel "$k" --help | grep -q "usage: engisweep kernel $k" || fail "$k --help"
done
echo "ok"
