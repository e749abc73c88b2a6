/*
 * parallel.h - when the mesh kernels start an OpenMP team (private to
 * kernels/mesh). Loops over fewer items than MESH_PAR_MIN run on the
 * calling thread: for a small mesh, starting and joining a team costs more
 * than the loop itself.
 */
#ifndef ENGI_MESH_PARALLEL_H
#define ENGI_MESH_PARALLEL_H

#define MESH_PAR_MIN 4096

#endif
