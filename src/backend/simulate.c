/*
 * The simulate backend: an environment that only takes time. For scale
 * tests of the scheduler, the journal and the store (a 27,321-cell sweep in
 * minutes on one machine), never for results.
 *
 * Files written into it live in memory (at most SIM_FILES files of at most
 * SIM_FILE_CAP bytes) and can be copied out. Every command sleeps for the
 * episode's duration and prints "simulated <seconds>"; a command `fail`
 * exits 1. Durations are heavy-tailed as real sweeps' are, and like theirs
 * they belong to a task and a model more than to a trial: a Pareto draw
 * (shape 1.5) from the hash of "TASK/MODEL", times a log-normal factor
 * (sigma ENGISWEEP_SIM_SPREAD, default 0.25) from the hash of the cell id,
 * scaled by ENGISWEEP_SIM_SCALE_S (default 0.01 s, the median-ish minimum)
 * and capped at 100 times the scale. ENGISWEEP_SIM_SPREAD=iid draws every
 * cell on its own instead (nothing to learn from earlier trials).
 */
#include "backend.h"

#include "engi/alloc.h"
#include "engi/sha256.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SIM_FILES      16
#define SIM_FILE_CAP   ((size_t)1 << 20)
#define SIM_SHAPE      1.5
#define SIM_MAX_FACTOR 100.0

struct sim_file {
	char path[ENV_PATH_MAX + 1];
	char *data;
	size_t len;
};

struct sim_env {
	double duration_s;
	struct sim_file files[SIM_FILES];
	size_t nfiles;
};

/* A uniform number in (0,1) from the hash of s[0..n). */
static double hash_uniform(const char *s, size_t n)
{
	char hex[65];
	engi_sha256_str(s, n, hex);
	unsigned long long h = 0;
	for (int i = 0; i < 13; i++)
		h = h * 16 + (unsigned long long)(hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
	return ((double)h + 0.5) / 4503599627370496.0; /* 16^13 */
}

static int sim_start(struct backend_env *env, const struct env_spec *spec, struct engi_error *err)
{
	struct sim_env *se = env->priv;
	const char *sc = getenv("ENGISWEEP_SIM_SCALE_S");
	double scale = sc && *sc ? strtod(sc, NULL) : 0.01;
	if (!(scale >= 0) || !isfinite(scale))
		RAISE(err, ENGI_EINVALID, "ENGISWEEP_SIM_SCALE_S='%s' is not a duration", sc);
	const char *sp = getenv("ENGISWEEP_SIM_SPREAD");
	int iid = sp && !strcmp(sp, "iid");
	double sigma = sp && *sp && !iid ? strtod(sp, NULL) : 0.25;
	if (!(sigma >= 0) || sigma > 3)
		RAISE(err, ENGI_EINVALID,
		      "ENGISWEEP_SIM_SPREAD='%s' is not 'iid' or a sigma in [0, 3]", sp);
	/* the cell id is the name up to its first '-' */
	size_t n = strcspn(spec->name, "-");
	double u_cell = hash_uniform(spec->name, n);
	double d;
	if (iid || !spec->key) {
		d = scale * pow(u_cell, -1.0 / SIM_SHAPE);
	} else {
		double u_pair = hash_uniform(spec->key, strlen(spec->key));
		/* a standard normal from two hashes of the cell id (Box-Muller) */
		char alt[80];
		int an =
		    snprintf(alt, sizeof(alt), "%.*s:angle", (int)(n < 64 ? n : 64), spec->name);
		double z =
		    sqrt(-2.0 * log(u_cell)) * cos(2.0 * M_PI * hash_uniform(alt, (size_t)an));
		d = scale * pow(u_pair, -1.0 / SIM_SHAPE) * exp(sigma * z - 0.5 * sigma * sigma);
	}
	se->duration_s = fmin(d, scale * SIM_MAX_FACTOR);
	return 0;
}

static void sim_stop(struct backend_env *env)
{
	struct sim_env *se = env->priv;
	for (size_t i = 0; i < se->nfiles; i++)
		engi_free(se->files[i].data);
	se->nfiles = 0;
}

static int sim_exec(struct backend_env *env, const char *command, const struct exec_opts *o,
		    struct exec_result *r, struct engi_error *err)
{
	struct sim_env *se = env->priv;
	double d = fmin(se->duration_s, o->timeout_s);
	double t0 = clk_now_mono();
	while (clk_now_mono() - t0 < d) {
		if (o->cancel && o->cancel(o->cancel_ctx)) {
			r->cancelled = 1;
			break;
		}
		double left = d - (clk_now_mono() - t0);
		struct timespec ts = {0, (long)(fmin(left, 0.05) * 1e9)};
		nanosleep(&ts, NULL);
	}
	r->timed_out = !r->cancelled && se->duration_s > o->timeout_s;
	r->exit_code = r->timed_out || r->cancelled ? -1 : !strcmp(command, "fail") ? 1 : 0;
	r->wall_s = clk_now_mono() - t0;
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "simulated %.6f", d);
	size_t keep = (size_t)n < o->out_cap ? (size_t)n : o->out_cap;
	r->out = engi_strndup(buf, keep);
	if (!r->out)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	r->out_len = keep;
	r->out_total = (uint64_t)n;
	return 0;
}

static int sim_put(struct backend_env *env, const void *data, size_t len, const char *env_path,
		   struct engi_error *err)
{
	struct sim_env *se = env->priv;
	TRY(fs_env_path_check(env_path, err));
	if (len > SIM_FILE_CAP)
		RAISE(err, ENGI_ETOOBIG, "'%s' is over the simulated file cap", env_path);
	struct sim_file *f = NULL;
	for (size_t i = 0; i < se->nfiles && !f; i++)
		if (!strcmp(se->files[i].path, env_path))
			f = &se->files[i];
	if (!f) {
		if (se->nfiles == SIM_FILES)
			RAISE(err, ENGI_ETOOBIG, "the simulated environment holds %d files at most",
			      SIM_FILES);
		f = &se->files[se->nfiles++];
		snprintf(f->path, sizeof(f->path), "%s", env_path);
		f->data = NULL;
	}
	char *copy = engi_malloc(len ? len : 1);
	if (!copy)
		RAISE(err, ENGI_ENOMEM, "out of memory");
	memcpy(copy, data, len);
	engi_free(f->data);
	f->data = copy;
	f->len = len;
	return 0;
}

static int sim_get(struct backend_env *env, const char *env_path, const char *host_path,
		   uint64_t max_bytes, uint64_t *bytes, struct engi_error *err)
{
	struct sim_env *se = env->priv;
	for (size_t i = 0; i < se->nfiles; i++) {
		if (strcmp(se->files[i].path, env_path))
			continue;
		if (se->files[i].len > max_bytes)
			RAISE(err, ENGI_ETOOBIG, "'%s' is %zu bytes, over the cap of %llu",
			      env_path, se->files[i].len, (unsigned long long)max_bytes);
		int fd =
		    open(host_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			RAISE(err, ENGI_EIO, "cannot create '%s': %s", host_path, strerror(errno));
		int bad = fs_write_all_fd(fd, se->files[i].data, se->files[i].len) < 0;
		if (close(fd) < 0 || bad)
			RAISE(err, ENGI_EIO, "cannot write '%s'", host_path);
		if (bytes)
			*bytes = se->files[i].len;
		return 0;
	}
	RAISE(err, ENGI_EIO, "cannot open '%s': No such file or directory", env_path);
}

static const struct backend_ops sim_ops = {
    .start = sim_start,
    .exec = sim_exec,
    .put = sim_put,
    .get = sim_get,
    .stop = sim_stop,
};

const struct backend_desc backend_simulate = {
    .name = "simulate",
    .summary = "an environment that only takes time (heavy-tailed), for scale tests",
    .caps = BACKEND_CAP_EXEC | BACKEND_CAP_FILES,
    .priv_size = sizeof(struct sim_env),
    .ops = &sim_ops,
};
