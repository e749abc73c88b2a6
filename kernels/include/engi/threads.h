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

#endif
