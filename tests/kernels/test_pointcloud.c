/* kd-tree against brute force, PCA normals on a sphere, ICP recovering known
 * rigid transforms, and Chamfer / Hausdorff distances with known answers. */
#include "check.h"
#include "kernels/cloudgen.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/pointcloud.h"

#include <omp.h>
#include <stdlib.h>

#define DEG (3.14159265358979323846 / 180)

static void brute_nearest(const double *p, size_t n, const double q[3], uint32_t *id, double *d2)
{
	*d2 = INFINITY;
	*id = UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		double dx = p[3 * i] - q[0], dy = p[3 * i + 1] - q[1], dz = p[3 * i + 2] - q[2];
		double e = dx * dx + dy * dy + dz * dz;
		if (e < *d2) {
			*d2 = e;
			*id = (uint32_t)i;
		}
	}
}

static void test_kdtree(void)
{
	size_t n = 5000;
	double *p = gen_egg_cloud(n, 1);
	/* exact duplicates: ties go to the smaller id */
	for (size_t i = 0; i < 50; i++)
		memcpy(p + 3 * (n - 1 - i), p + 3 * i, 3 * sizeof(double));
	struct engi_kdtree t;
	CHECK_INT(engi_kdtree_build(&t, p, n, NULL), 0);
	uint64_t s = 7;
	int same = 1, knn_ok = 1;
	for (int k = 0; k < 300; k++) {
		double q[3] = {80 * gen_rand01(&s) - 40, 60 * gen_rand01(&s) - 30,
			       40 * gen_rand01(&s) - 20};
		if (k < 50)
			memcpy(q, p + 3 * (size_t)k, sizeof(q));
		uint32_t id, bid;
		double d2, bd2;
		engi_kdtree_nearest(&t, q, &id, &d2);
		brute_nearest(p, n, q, &bid, &bd2);
		same &= id == bid && d2 == bd2;
		uint32_t ids[16];
		double kd2[16];
		size_t m = engi_kdtree_knn(&t, q, 16, ids, kd2);
		knn_ok &= m == 16 && ids[0] == bid && kd2[0] == bd2;
		/* the 16th is no farther than any point outside the set */
		for (size_t i = 0; i < n && knn_ok; i++) {
			int in = 0;
			for (size_t j = 0; j < m; j++)
				in |= ids[j] == i;
			double dx = p[3 * i] - q[0], dy = p[3 * i + 1] - q[1],
			       dz = p[3 * i + 2] - q[2];
			if (!in && dx * dx + dy * dy + dz * dz < kd2[m - 1])
				knn_ok = 0;
		}
		for (size_t j = 1; j < m; j++)
			knn_ok &= kd2[j] >= kd2[j - 1];
	}
	CHECK(same);
	CHECK(knn_ok);
	engi_kdtree_release(&t);

	/* a tree large enough to be built by tasks: the same layout on one
	 * thread, and bottom-up queries from far and near against brute force */
	size_t nl = 60000;
	double *pl = gen_egg_cloud(nl, 2);
	for (size_t i = 0; i < 500; i++)
		memcpy(pl + 3 * (nl - 1 - i), pl + 3 * (7 * i), 3 * sizeof(double));
	struct engi_kdtree t1, t2;
	CHECK_INT(engi_kdtree_build(&t1, pl, nl, NULL), 0);
	int threads = omp_get_max_threads();
	omp_set_num_threads(1);
	CHECK_INT(engi_kdtree_build(&t2, pl, nl, NULL), 0);
	omp_set_num_threads(threads);
	CHECK(t1.nnodes == t2.nnodes && !memcmp(t1.perm, t2.perm, nl * sizeof(*t1.perm)));
	same = knn_ok = 1;
	for (int k = 0; k < 200; k++) {
		double q[3] = {90 * gen_rand01(&s) - 45, 70 * gen_rand01(&s) - 35,
			       50 * gen_rand01(&s) - 25};
		if (k < 60)
			memcpy(q, pl + 3 * (size_t)(7 * k), sizeof(q));
		uint32_t id, bid, ids[12];
		double d2, bd2, kd2[12];
		engi_kdtree_nearest(&t1, q, &id, &d2);
		brute_nearest(pl, nl, q, &bid, &bd2);
		same &= id == bid && d2 == bd2;
		size_t m = engi_kdtree_knn(&t1, q, 12, ids, kd2);
		knn_ok &= m == 12 && ids[0] == bid;
		for (size_t i = 0; i < nl && knn_ok; i++) {
			int in = 0;
			for (size_t j = 0; j < m; j++)
				in |= ids[j] == i;
			double dx = pl[3 * i] - q[0], dy = pl[3 * i + 1] - q[1],
			       dz = pl[3 * i + 2] - q[2];
			double e2 = dx * dx + dy * dy + dz * dz;
			if (!in && (e2 < kd2[m - 1] || (e2 == kd2[m - 1] && i < ids[m - 1])))
				knn_ok = 0;
		}
	}
	CHECK(same);
	CHECK(knn_ok);
	engi_kdtree_release(&t1);
	engi_kdtree_release(&t2);
	free(pl);

	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(engi_kdtree_build(&t, p, 0, &e), ENGI_EINVALID);
	p[3 * 17 + 1] = NAN;
	engi_error_init(&e);
	CHECK_INT(engi_kdtree_build(&t, p, n, &e), ENGI_EINVALID);
	CHECK_STR(e.msg, "point 17: coordinate y = nan is not finite");
	free(p);
}

static void test_normals(void)
{
	/* Fibonacci sphere of radius 10: normals are radial and outward. */
	size_t n = 4000;
	double *p = malloc(3 * n * sizeof(double)), *nm = malloc(3 * n * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		double z = 1 - (2.0 * (double)i + 1) / (double)n, r = sqrt(1 - z * z);
		double ph = 2.399963229728653 * (double)i;
		p[3 * i] = 10 * r * cos(ph);
		p[3 * i + 1] = 10 * r * sin(ph);
		p[3 * i + 2] = 10 * z;
	}
	struct engi_kdtree t;
	CHECK_INT(engi_kdtree_build(&t, p, n, NULL), 0);
	CHECK_INT(engi_cloud_normals(&t, 10, nm, NULL), 0);
	double worst = 1;
	for (size_t i = 0; i < n; i++) {
		double d = (nm[3 * i] * p[3 * i] + nm[3 * i + 1] * p[3 * i + 1] +
			    nm[3 * i + 2] * p[3 * i + 2]) /
			   10;
		worst = d < worst ? d : worst;
	}
	CHECK(worst > 0.995);
	CHECK_INT(engi_cloud_normals(&t, 2, nm, NULL), ENGI_EINVALID);
	engi_kdtree_release(&t);
	free(p);
	free(nm);
}

/* Angle (degrees) and translation error of an estimate against the truth. */
static void transform_error(const double est[16], const double R[9], const double t[3], double *deg,
			    double *dt)
{
	double E[16] = {0};
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++)
			for (int k = 0; k < 3; k++)
				E[4 * a + b] += est[4 * a + k] * R[3 * b + k]; /* est R^T */
	*deg = engi_transform_angle(E) / DEG;
	double s = 0;
	for (int d = 0; d < 3; d++)
		s += (est[4 * d + 3] - t[d]) * (est[4 * d + 3] - t[d]);
	*dt = sqrt(s);
}

static void check_icp(int method, int init_pca, double deg, const double axis[3], size_t n)
{
	double *src = gen_egg_cloud(n, 3);
	double R[9], t[3] = {1.5, -2.0, 0.7};
	gen_rotation(deg, axis[0], axis[1], axis[2], R);
	double *dst = gen_transformed(src, n, R, t, 11);
	struct engi_icp_options o;
	engi_icp_options_default(&o);
	o.method = method;
	o.init_pca = init_pca;
	struct engi_icp_report r;
	struct engi_error e;
	engi_error_init(&e);
	CHECK_INT(engi_icp(src, n, dst, n, &o, &r, &e), 0);
	double ang, dtr;
	transform_error(r.transform, R, t, &ang, &dtr);
	printf("icp %s pca=%d %.0f deg: %d iterations, %s, fitness %.4f, rmse %.3g, "
	       "error %.3g deg %.3g mm, start %d\n",
	       method == ENGI_ICP_POINT_TO_POINT ? "point-to-point" : "point-to-plane", init_pca,
	       deg, r.iterations, engi_icp_stop_name(r.stop), r.fitness, r.rmse, ang, dtr, r.start);
	CHECK(ang <= 0.002);
	CHECK(dtr <= 0.03);
	CHECK_INT(r.stop, ENGI_ICP_CONVERGED);
	CHECK_NEAR(r.fitness, 1, 0);
	CHECK(r.rmse < 1e-6);
	/* the same bits on one thread */
	int threads = omp_get_max_threads();
	omp_set_num_threads(1);
	struct engi_icp_report r1;
	CHECK_INT(engi_icp(src, n, dst, n, &o, &r1, &e), 0);
	omp_set_num_threads(threads);
	CHECK(!memcmp(r.transform, r1.transform, sizeof(r.transform)));
	CHECK_INT(r.iterations, r1.iterations);
	free(src);
	free(dst);
}

static void test_icp(void)
{
	const double ax1[3] = {1, 2, 3}, ax2[3] = {-2, 1, 0.5};
	check_icp(ENGI_ICP_POINT_TO_POINT, 0, 8, ax1, 20000);
	check_icp(ENGI_ICP_POINT_TO_PLANE, 0, 8, ax1, 20000);
	/* far from identity: only the PCA starts find it */
	check_icp(ENGI_ICP_POINT_TO_POINT, 1, 150, ax2, 4000);
	check_icp(ENGI_ICP_POINT_TO_PLANE, 1, 150, ax2, 4000);
	/* large enough to start on a subsample */
	check_icp(ENGI_ICP_POINT_TO_PLANE, 0, 10, ax1, 80000);
	check_icp(ENGI_ICP_POINT_TO_POINT, 0, 10, ax2, 80000);

	/* max_dist smaller than any pair: no correspondences */
	size_t n = 100;
	double *a = gen_egg_cloud(n, 5);
	double R[9], t[3] = {500, 0, 0};
	gen_rotation(0, 0, 0, 1, R);
	double *b = gen_transformed(a, n, R, t, 2);
	struct engi_icp_options o;
	engi_icp_options_default(&o);
	o.max_dist = 1;
	struct engi_icp_report r;
	CHECK_INT(engi_icp(a, n, b, n, &o, &r, NULL), 0);
	CHECK_INT(r.stop, ENGI_ICP_NO_CORRESPONDENCES);
	CHECK_NEAR(r.fitness, 0, 0);
	struct engi_error e;
	engi_error_init(&e);
	o.max_dist = -1;
	CHECK_INT(engi_icp(a, n, b, n, &o, &r, &e), ENGI_EINVALID);
	CHECK_STR(e.msg, "ICP max_dist -1 is not positive");
	engi_error_init(&e);
	CHECK_INT(engi_icp(a, 2, b, n, &o, &r, &e), ENGI_EINVALID);
	free(a);
	free(b);
}

static void test_distance(void)
{
	/* a: a line of points 1 apart; b: the same lifted by 0.1 plus one
	 * outlier 5 above the last point. */
	size_t n = 1000;
	double *a = malloc(3 * n * sizeof(double)), *b = malloc(3 * (n + 1) * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		a[3 * i] = (double)i;
		a[3 * i + 1] = a[3 * i + 2] = 0;
		b[3 * i] = (double)i;
		b[3 * i + 1] = 0;
		b[3 * i + 2] = 0.1;
	}
	b[3 * n] = (double)(n - 1);
	b[3 * n + 1] = 0;
	b[3 * n + 2] = 5;
	struct engi_cloud_distance d;
	CHECK_INT(engi_cloud_distance(a, n, b, n + 1, &d, NULL), 0);
	CHECK_NEAR(d.mean_ab, 0.1, 1e-13);
	CHECK_NEAR(d.max_ab, 0.1, 1e-15);
	CHECK_NEAR(d.max_ba, 5, 1e-14);
	CHECK_NEAR(d.mean_ba, (0.1 * (double)n + 5) / (double)(n + 1), 1e-13);
	CHECK_NEAR(d.hausdorff, 5, 1e-14);
	CHECK_NEAR(d.chamfer, d.mean_ab + d.mean_ba, 0);
	free(a);
	free(b);

	/* random clouds against brute force, bit for bit */
	size_t na = 3000, nb = 2000;
	a = gen_egg_cloud(na, 21);
	b = gen_egg_cloud(nb, 22);
	CHECK_INT(engi_cloud_distance(a, na, b, nb, &d, NULL), 0);
	double mx = 0;
	for (size_t i = 0; i < nb; i++) {
		uint32_t id;
		double d2;
		brute_nearest(a, na, b + 3 * i, &id, &d2);
		mx = sqrt(d2) > mx ? sqrt(d2) : mx;
	}
	CHECK_NEAR(d.max_ba, mx, 0);
	free(a);
	free(b);
}

static void test_alloc_failures(void)
{
	size_t n = 3000;
	double *a = gen_egg_cloud(n, 4);
	int failed_cleanly = 1;
	for (long k = 1; k < 12; k++) {
		struct engi_cloud_distance d;
		struct engi_error e;
		engi_error_init(&e);
		engi_alloc_fail_after(k);
		int rc = engi_cloud_distance(a, n, a, n, &d, &e);
		engi_alloc_fail_after(0);
		failed_cleanly &= rc == 0 || rc == ENGI_ENOMEM;
		struct engi_icp_options o;
		engi_icp_options_default(&o);
		o.max_iterations = 2;
		struct engi_icp_report r;
		engi_error_init(&e);
		engi_alloc_fail_after(k);
		rc = engi_icp(a, n, a, n, &o, &r, &e);
		engi_alloc_fail_after(0);
		failed_cleanly &= rc == 0 || rc == ENGI_ENOMEM;
	}
	CHECK(failed_cleanly);
	free(a);
}

int main(void)
{
	test_kdtree();
	test_normals();
	test_icp();
	test_distance();
	test_alloc_failures();
	return check_exit();
}
