#include "backend.h"
#include "child.h"

#include "base64.h"
#include "engi/alloc.h"
#include "engi/dynbuf.h"
#include "fsutil.h"
#include "screen_image.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef ENGI_WITH_QEMU
#error "ENGI_WITH_QEMU (1 or 0) comes from src/CMakeLists.txt, the ENGI_QEMU option"
#endif

extern const struct backend_desc backend_local;
extern const struct backend_desc backend_simulate;
extern const struct backend_desc backend_podman;
#if ENGI_WITH_QEMU
extern const struct backend_desc backend_qemu;
#else
/* configured out (-DENGI_QEMU=OFF): named so that asking for it says so */
static const struct backend_desc backend_qemu_absent = {
    .name = "qemu",
    .summary = "clean QEMU virtual machine per episode",
    .not_built_hint = "configure with -DENGI_QEMU=ON",
};
#endif

static const struct backend_desc *const registry[] = {&backend_local,
#if ENGI_WITH_QEMU
						      &backend_qemu,
#endif
						      &backend_podman, &backend_simulate, NULL};

/* the backends this binary was configured without (docs/building.md) */
static const struct backend_desc *const absent[] = {
#if !ENGI_WITH_QEMU
    &backend_qemu_absent,
#endif
    NULL};

const struct backend_desc *const *backend_all(void)
{
	return registry;
}

const struct backend_desc *const *backend_not_built(void)
{
	return absent;
}

const struct backend_desc *backend_lookup(const char *name, struct engi_error *err)
{
	for (const struct backend_desc *const *d = absent; *d; d++) {
		if (!strcmp((*d)->name, name)) {
			engi_raise(err, ENGI_ENOTSUP,
				   "the %s backend is not built into this binary (%s)", name,
				   (*d)->not_built_hint);
			return NULL;
		}
	}
	char names[256] = "";
	for (const struct backend_desc *const *d = registry; *d; d++) {
		if (!strcmp((*d)->name, name)) {
			if (!(*d)->ops) {
				engi_raise(err, ENGI_ENOTSUP,
					   "backend '%s' is not built into this binary%s%s", name,
					   (*d)->not_built_hint ? ": " : "",
					   (*d)->not_built_hint ? (*d)->not_built_hint : "");
				return NULL;
			}
			return *d;
		}
		if (names[0])
			strncat(names, ", ", sizeof(names) - strlen(names) - 1);
		strncat(names, (*d)->name, sizeof(names) - strlen(names) - 1);
	}
	engi_raise(err, ENGI_ENOTFOUND, "unknown backend '%s' (valid: %s)", name, names);
	return NULL;
}

void backend_exec_result_release(struct exec_result *r)
{
	engi_free(r->out);
	memset(r, 0, sizeof(*r));
}

int backend_start(const struct backend_desc *d, const struct env_spec *spec,
		  struct backend_env **out, struct engi_error *err)
{
	*out = NULL;
	struct backend_env *env = engi_calloc(1, sizeof(*env));
	if (!env)
		RAISE(err, ENGI_ENOMEM, "out of memory starting backend '%s'", d->name);
	env->desc = d;
	if (d->priv_size) {
		env->priv = engi_calloc(1, d->priv_size);
		if (!env->priv) {
			engi_free(env);
			RAISE(err, ENGI_ENOMEM, "out of memory starting backend '%s'", d->name);
		}
	}
	int rc = d->ops->start(env, spec, err);
	if (rc < 0) {
		engi_free(env->priv);
		engi_free(env);
		return rc;
	}
	*out = env;
	return 0;
}

#define NOT_SUPPORTED(env, what)                                                                   \
	engi_raise(err, ENGI_ENOTSUP, "backend '%s' does not support %s", (env)->desc->name, what)

int backend_exec(struct backend_env *env, const char *command, const struct exec_opts *o,
		 struct exec_result *r, struct engi_error *err)
{
	memset(r, 0, sizeof(*r));
	if (!env->desc->ops->exec)
		return NOT_SUPPORTED(env, "commands");
	if (o && o->detach && !(env->desc->caps & BACKEND_CAP_DETACH))
		return NOT_SUPPORTED(env, "commands left running in the background");
	return env->desc->ops->exec(env, command, o, r, err);
}

int backend_put(struct backend_env *env, const void *data, size_t len, const char *env_path,
		struct engi_error *err)
{
	if (!env->desc->ops->put)
		return NOT_SUPPORTED(env, "copying files in");
	return env->desc->ops->put(env, data, len, env_path, err);
}

int backend_get(struct backend_env *env, const char *env_path, const char *host_path,
		uint64_t max_bytes, uint64_t *bytes, struct engi_error *err)
{
	if (!env->desc->ops->get)
		return NOT_SUPPORTED(env, "copying files out");
	return env->desc->ops->get(env, env_path, host_path, max_bytes, bytes, err);
}

int backend_read_image(struct backend_env *env, const char *env_path, const char *scratch_dir,
		       char **b64, char *note, size_t note_len, struct engi_error *err)
{
	*b64 = NULL;
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s/read_image-XXXXXX", scratch_dir ? scratch_dir : "/tmp");
	int fd = mkstemp(tmp);
	if (fd < 0)
		RAISE(err, ENGI_EIO, "cannot make a scratch file in '%s'", scratch_dir);
	close(fd);
	uint64_t bytes = 0;
	char *data = NULL;
	size_t len = 0;
	int rc = backend_get(env, env_path, tmp, BACKEND_IMAGE_FILE_CAP, &bytes, err);
	if (rc == 0)
		rc = fs_read_file(tmp, BACKEND_IMAGE_FILE_CAP, &data, &len, err);
	unlink(tmp);
	if (rc < 0)
		return rc;
	struct screen_image im;
	rc = screen_image_fit((const unsigned char *)data, len, BACKEND_IMAGE_SIDE_MAX,
			      BACKEND_IMAGE_BYTES_MAX, &im, err);
	engi_free(data);
	if (rc < 0) {
		engi_error_prefix(err, "'%s'", env_path);
		return rc;
	}
	size_t n = base64_encoded_len(im.len);
	*b64 = n == SIZE_MAX ? NULL : engi_malloc(n + 1);
	if (!*b64) {
		engi_free(im.data);
		RAISE(err, ENGI_ENOMEM, "out of memory");
	}
	base64_encode(im.data, im.len, *b64);
	engi_free(im.data);
	if (im.w && (im.w != im.src_w || im.h != im.src_h))
		snprintf(note, note_len, "'%s': %s, %zu bytes, %dx%d (scaled down from %dx%d)",
			 env_path, im.type, im.len, im.w, im.h, im.src_w, im.src_h);
	else if (im.w)
		snprintf(note, note_len, "'%s': %s, %zu bytes, %dx%d", env_path, im.type, im.len,
			 im.w, im.h);
	else
		snprintf(note, note_len, "'%s': %s, %zu bytes", env_path, im.type, im.len);
	return 0;
}

int backend_screenshot(struct backend_env *env, double scale, unsigned char **png, size_t *len,
		       struct engi_error *err)
{
	if (!env->desc->ops->screenshot)
		return NOT_SUPPORTED(env, "screenshots");
	return env->desc->ops->screenshot(env, scale, png, len, err);
}

int backend_input(struct backend_env *env, const char *event_json, struct engi_error *err)
{
	if (!env->desc->ops->input)
		return NOT_SUPPORTED(env, "input events");
	return env->desc->ops->input(env, event_json, err);
}

int backend_pause(struct backend_env *env, int pause, struct engi_error *err)
{
	return env->desc->ops->pause ? env->desc->ops->pause(env, pause, err) : 0;
}

char *backend_events(struct backend_env *env)
{
	return env->desc->ops->events ? env->desc->ops->events(env) : NULL;
}

int backend_can_run(const struct backend_desc *d, const struct env_spec *spec,
		    struct engi_error *err)
{
	if (spec->workdir && !(d->caps & BACKEND_CAP_WORKDIR))
		RAISE(err, ENGI_EINVALID,
		      "backend '%s' cannot give an episode the working folder '%s' the task needs "
		      "(its paths are the guest's): use a backend that runs a guest, such as qemu",
		      d->name, spec->workdir);
	if (spec->nfolders && !(d->caps & BACKEND_CAP_FOLDERS))
		RAISE(err, ENGI_EINVALID,
		      "backend '%s' cannot give an episode the folder '%s' the task needs (a guest "
		      "path, environment.folders): use a backend that makes it, such as local or "
		      "qemu",
		      d->name, spec->folders[0]);
	if (spec->detach && !(d->caps & BACKEND_CAP_DETACH))
		RAISE(err, ENGI_EINVALID,
		      "backend '%s' cannot leave a command running in the background (the task's "
		      "setup step 'launch'): its commands end with everything they started; use a "
		      "backend that runs a guest, such as qemu",
		      d->name);
	return 0;
}

int backend_prepare(const struct backend_desc *d, const struct env_spec *spec,
		    struct engi_error *err)
{
	TRY(backend_can_run(d, spec, err));
	return d->ops->prepare ? d->ops->prepare(spec, err) : 0;
}

#define FOLDER_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/-"

int backend_folders_copy(struct backend_folders *f, const struct env_spec *spec,
			 struct engi_error *err)
{
	f->n = 0;
	if (spec->nfolders > BACKEND_FOLDERS_MAX)
		RAISE(err, ENGI_EINVALID, "%zu folders asked for, at most %d", spec->nfolders,
		      BACKEND_FOLDERS_MAX);
	for (size_t i = 0; i < spec->nfolders; i++) {
		const char *p = spec->folders[i];
		size_t n = strlen(p);
		if (p[0] != '/' || n > BACKEND_FOLDER_MAX || strspn(p, FOLDER_CHARS) != n ||
		    fs_env_path_check(p + 1, NULL) < 0)
			RAISE(
			    err, ENGI_EINVALID,
			    "folder '%s' is not an absolute guest path of [A-Za-z0-9._/-] without "
			    "'.', '..' or empty components",
			    p);
		memcpy(f->path[i], p, n + 1);
	}
	f->n = spec->nfolders;
	return 0;
}

int backend_folders_find(const struct backend_folders *f, const char *env_path, const char **rest,
			 struct engi_error *err)
{
	if (!f->n) {
		/* the working folder's rule, and its message */
		int rc = fs_env_path_check(env_path, err);
		return rc < 0 ? rc
			      : engi_raise(err, ENGI_EINVALID, "'%s' is not absolute", env_path);
	}
	for (size_t i = 0; i < f->n; i++) {
		size_t n = strlen(f->path[i]);
		if (strncmp(env_path, f->path[i], n) || env_path[n] != '/')
			continue;
		if (strlen(env_path) > ENV_PATH_MAX)
			RAISE(err, ENGI_EINVALID, "path longer than %d bytes", ENV_PATH_MAX);
		struct engi_error e;
		engi_error_init(&e);
		if (fs_env_path_check(env_path + n + 1, &e) < 0)
			RAISE(err, ENGI_EINVALID, "'%s' inside the folder '%s': %s", env_path,
			      f->path[i], e.msg);
		*rest = env_path + n + 1;
		return (int)i;
	}
	char list[BACKEND_FOLDERS_MAX * (BACKEND_FOLDER_MAX + 2)] = "";
	for (size_t i = 0; i < f->n; i++) {
		if (i)
			strcat(list, ", ");
		strcat(list, f->path[i]);
	}
	RAISE(err, ENGI_EINVALID,
	      "absolute path '%s' (paths are relative to the working folder, or absolute inside "
	      "one of the task's folders: %s)",
	      env_path, list);
}

void backend_stop(struct backend_env **env)
{
	if (!*env)
		return;
	(*env)->desc->ops->stop(*env);
	engi_free((*env)->priv);
	engi_free(*env);
	*env = NULL;
}

static void kill_group(pid_t pgid)
{
	if (pgid > 0)
		kill(-pgid, SIGKILL);
}

int backend_run_captured(struct spawn_opts *so, const struct exec_opts *o, struct exec_result *r,
			 struct engi_error *err)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		RAISE(err, ENGI_EENV, "cannot create a pipe: %s", strerror(errno));
	double t0 = clk_now_mono();
	so->out_fd = pfd[1];
	so->group = SPAWN_GROUP;
	pid_t pid = child_spawn(so, err);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return (int)pid;
	}

	struct engi_dynbuf out;
	engi_dynbuf_init(&out, o->out_cap);
	int status = 0, exited = 0, eof = 0;
	double exited_at = 0;
	char buf[16384];
	while (!eof || !exited) {
		double now = clk_now_mono();
		if (!exited && now - t0 > o->timeout_s) {
			r->timed_out = 1;
			kill_group(pid);
		}
		if (!exited && o->cancel && o->cancel(o->cancel_ctx)) {
			r->cancelled = 1;
			kill_group(pid);
		}
		/* the shell is gone but something it started holds the pipe */
		if (exited && !eof && now - exited_at > 0.2) {
			kill_group(pid);
			break;
		}
		if (!eof) {
			struct pollfd p = {.fd = pfd[0], .events = POLLIN};
			int pr = poll(&p, 1, 20);
			if (pr > 0) {
				ssize_t n = read(pfd[0], buf, sizeof(buf));
				if (n > 0) {
					r->out_total += (uint64_t)n;
					size_t room = out.cap - out.len;
					size_t keep = (size_t)n < room ? (size_t)n : room;
					if (keep && engi_dynbuf_add(&out, buf, keep) < 0) {
						/* out of memory: stop keeping output */
						out.cap = out.len;
					}
				} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
					eof = 1;
				}
			}
		} else {
			struct timespec ts = {0, 5 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		if (!exited) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				exited = 1;
				exited_at = clk_now_mono();
			}
		}
	}
	close(pfd[0]);
	kill_group(pid); /* nothing the command started outlives it */
	r->wall_s = clk_now_mono() - t0;
	if (WIFEXITED(status)) {
		r->exit_code = WEXITSTATUS(status);
	} else {
		r->exit_code = -1;
		r->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	}
	r->out = engi_dynbuf_take(&out, &r->out_len);
	if (!r->out)
		RAISE(err, ENGI_ENOMEM, "out of memory keeping command output");
	return 0;
}
