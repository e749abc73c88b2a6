/*
 * fe_stress_tool DECK.inp RESULTS.frd|RESULTS.dat: re-solves the deck and
 * compares every stress CalculiX wrote with the re-solve's, component by
 * component, for the ccx comparison test. A .frd holds nodal stresses: each
 * is compared with the mean over the elements around the node of the
 * re-solve's stress extrapolated to it. A .dat holds integration-point
 * stresses: their mean per element is compared with the re-solve's element
 * stress. Prints the number of values compared and
 * max |ccx - ours| / max |ours| over all components; exit 1 on an error.
 */
#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/fe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Index of id in the deck's numbers (sorted copy with indices), or -1. */
static int64_t find(const int64_t *pairs, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pairs[2 * mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && pairs[2 * lo] == id ? pairs[2 * lo + 1] : -1;
}

static int64_t *index_of(const int64_t *ids, size_t n)
{
	int64_t *p = malloc(2 * (n + 1) * sizeof(*p));
	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++)
		p[2 * i] = ids[i], p[2 * i + 1] = (int64_t)i;
	qsort(p, n, 2 * sizeof(*p), cmp_i64);
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fe_stress_tool DECK.inp RESULTS.frd|RESULTS.dat\n");
		return 2;
	}
	struct engi_error err;
	struct engi_fe_solid m;
	struct engi_fe_solid_result r;
	struct engi_ccx_stress st;
	engi_error_init(&err);
	engi_fe_solid_init(&m);
	engi_fe_solid_result_init(&r);
	engi_ccx_stress_init(&st);
	size_t n = strlen(argv[2]);
	int frd = n > 4 && !strcmp(argv[2] + n - 4, ".frd");
	if (engi_inp_read(argv[1], &m, &err) < 0 || engi_fe_solid_solve(&m, NULL, &r, &err) < 0 ||
	    (frd ? engi_ccx_frd_stress(argv[2], &st, &err)
		 : engi_ccx_dat_stress(argv[2], &st, &err)) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	size_t nn = m.nnodes, ne = m.nelems;
	double *ours = calloc(6 * (frd ? nn : ne) + 1, sizeof(double));
	double *theirs = calloc(6 * (frd ? nn : ne) + 1, sizeof(double));
	size_t *cnt = calloc((frd ? nn : ne) + 1, sizeof(size_t));
	size_t *got = calloc((frd ? nn : ne) + 1, sizeof(size_t));
	int64_t *idx = index_of(frd ? m.node_id : m.elem_id, frd ? nn : ne);
	if (!ours || !theirs || !cnt || !got || !idx) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (size_t e = 0; e < ne; e++) {
		double s[6];
		if (!frd) {
			engi_fe_solid_stress(&m, r.u, e, ours + 6 * e, NULL);
			continue;
		}
		for (size_t q = m.off[e]; q < m.off[e + 1]; q++) {
			engi_fe_solid_stress_node(&m, r.u, e, (int)(q - m.off[e]), s);
			for (int k = 0; k < 6; k++)
				ours[6 * m.conn[q] + (size_t)k] += s[k];
			cnt[m.conn[q]]++;
		}
	}
	for (size_t i = 0; i < st.n; i++) {
		int64_t k = find(idx, frd ? nn : ne, st.rec[i].id);
		if (k < 0) {
			fprintf(stderr, "%s: %s %lld is not in the deck\n", argv[2],
				frd ? "node" : "element", (long long)st.rec[i].id);
			return 1;
		}
		for (int c = 0; c < 6; c++)
			theirs[6 * (size_t)k + (size_t)c] += st.rec[i].s[c];
		got[k]++;
	}
	double dmax = 0, smax = 0;
	size_t compared = 0;
	for (size_t i = 0; i < (frd ? nn : ne); i++) {
		if (!got[i] || (frd && !cnt[i]))
			continue;
		for (int c = 0; c < 6; c++) {
			double a = ours[6 * i + (size_t)c] / (double)(frd ? cnt[i] : 1);
			double b = theirs[6 * i + (size_t)c] / (double)got[i];
			dmax = fmax(dmax, fabs(a - b));
			smax = fmax(smax, fabs(a));
		}
		compared++;
	}
	printf("%s %zu %s compared, max difference %.3e of max |stress| %.6e: %.3e\n", argv[2],
	       compared, frd ? "nodes" : "elements", dmax, smax, smax > 0 ? dmax / smax : dmax);
	free(ours);
	free(theirs);
	free(cnt);
	free(got);
	free(idx);
	engi_ccx_stress_release(&st);
	engi_fe_solid_result_release(&r);
	engi_fe_solid_release(&m);
	return compared ? 0 : 1;
}
