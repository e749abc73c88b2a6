/*
 * threads.h - how many threads the kernels' OpenMP regions use in the
 * calling thread. An MPI rank that shares a node with other ranks, or rank
 * 0 running several episodes in threads, must not let every kernel take
 * every core: oversubscribed OpenMP teams spin and run many times slower.
 * engi_threads_set applies to parallel regions started later by the calling
 * thread only (OpenMP's per-thread nthreads-var).
 */
#ifndef ENGI_THREADS_H
#define ENGI_THREADS_H

/* Cores the OpenMP runtime sees. */
int engi_threads_available(void);
/* Threads for the calling thread's later parallel regions (at least 1). */
void engi_threads_set(int n);
/*
 * OpenBLAS's own thread pool, process-wide (1 when it is another BLAS: 0
 * returned). A process that runs episodes in several threads must keep it
 * at 1: OpenBLAS's fork handler stops the pool in the parent, so a fork in
 * one thread (a command of an episode) while another thread is inside a
 * threaded BLAS call (a verifier's factorisation) leaves that call with
 * wrong results or waiting forever (seen with Debian's OpenBLAS 0.3.21).
 */
int engi_blas_threads_set(int n);

#endif
