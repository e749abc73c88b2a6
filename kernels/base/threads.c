#include "engi/threads.h"

#include <dlfcn.h>
#include <omp.h>

int engi_threads_available(void)
{
	return omp_get_num_procs();
}

void engi_threads_set(int n)
{
	omp_set_num_threads(n > 0 ? n : 1);
}

int engi_blas_threads_set(int n)
{
	/* looked up at run time: libblas.so.3 may be OpenBLAS or another BLAS */
	void (*set)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
	if (!set)
		return 0;
	set(n > 0 ? n : 1);
	return 1;
}
