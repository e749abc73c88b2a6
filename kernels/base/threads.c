#include "engi/threads.h"

#include <omp.h>

int engi_threads_available(void)
{
	return omp_get_num_procs();
}

void engi_threads_set(int n)
{
	omp_set_num_threads(n > 0 ? n : 1);
}
