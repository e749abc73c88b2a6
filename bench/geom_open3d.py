"""Open3D on the inputs of bench_mesh and bench_icp, for bench/geom_anchors.
usage: geom_open3d.py TORUS.stl TORUS80K.stl SRC.ply DST.ply OTHER.ply"""
import math
import sys
import time

import numpy as np
import open3d as o3d

torus, torus80k, src_path, dst_path, other_path = sys.argv[1:6]
reg = o3d.pipelines.registration


def clock(f):
    t = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t


mesh, load_s = clock(lambda: o3d.io.read_triangle_mesh(torus))
def topology():
    mesh.remove_duplicated_vertices()
    # neither is_watertight() nor get_volume(): both run the all-pairs
    # self-intersection test, which does not finish at a million triangles
    return (mesh.is_edge_manifold(), mesh.is_vertex_manifold(), mesh.is_orientable(),
            mesh.get_surface_area())
_, topo_s = clock(topology)
print("open3d_topology_s %.3f" % (load_s + topo_s))
small = o3d.io.read_triangle_mesh(torus80k)
small.remove_duplicated_vertices()
_, sx_s = clock(small.is_self_intersecting)
print("open3d_self_intersections_80k_s %.3f" % sx_s)

src = o3d.io.read_point_cloud(src_path)
dst = o3d.io.read_point_cloud(dst_path)
crit = reg.ICPConvergenceCriteria(relative_fitness=1e-12, relative_rmse=1e-12, max_iteration=2000)
def p2l():
    dst.estimate_normals(o3d.geometry.KDTreeSearchParamKNN(10))
    return reg.registration_icp(src, dst, 1e9, np.eye(4), reg.TransformationEstimationPointToPlane(), crit)
r, s = clock(p2l)
print("open3d_icp_point_to_plane_s %.3f" % s)
r2, s2 = clock(lambda: reg.registration_icp(src, dst, 1e9, np.eye(4),
                                            reg.TransformationEstimationPointToPoint(), crit))
print("open3d_icp_point_to_point_s %.3f" % s2)
for name, res in (("point_to_plane", r), ("point_to_point", r2)):
    R = np.asarray(res.transformation)[:3, :3]
    print("open3d_icp_%s_angle_deg %.9f" % (name, math.degrees(math.acos(min(1, (np.trace(R) - 1) / 2)))))
other = o3d.io.read_point_cloud(other_path)
def dists():
    a = np.asarray(src.compute_point_cloud_distance(other))
    b = np.asarray(other.compute_point_cloud_distance(src))
    return a.mean() + b.mean(), max(a.max(), b.max())
(ch, hd), s3 = clock(dists)
print("open3d_chamfer_hausdorff_s %.3f" % s3)
print("open3d_chamfer %.9g" % ch)
print("open3d_hausdorff %.9g" % hd)
