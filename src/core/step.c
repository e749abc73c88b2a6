/*
 * STEP files through gmsh (step.h).
 */
#include "step.h"

#include "child.h"

#include "engi/mesh.h"
#include "engi/meshio.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GMSH_LOG_TAIL 200

/* The last non-empty line of the log into out. */
static void log_tail(const char *log, char *out, size_t cap)
{
	out[0] = 0;
	FILE *f = fopen(log, "r");
	if (!f)
		return;
	char line[GMSH_LOG_TAIL];
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (n)
			snprintf(out, cap, "%s", line);
	}
	fclose(f);
}

/* Waits for pid up to the time limit, then kills its group: its exit
 * status, -1 when waiting failed, -2 after the limit. */
static int wait_limited(pid_t pid)
{
	int status = 0;
	struct timespec nap = {0, 10 * 1000 * 1000};
	for (long waited_ms = 0;; waited_ms += 10) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			return status;
		if (w < 0 && errno != EINTR)
			return -1;
		if (waited_ms >= STEP_GMSH_TIMEOUT_S * 1000L) {
			kill(-pid, SIGKILL);
			child_wait(pid, &status);
			return -2;
		}
		nanosleep(&nap, NULL);
	}
}

int step_tessellate(const char *path, double tol, struct engi_mesh *m, size_t max_tris,
		    struct engi_error *err)
{
	engi_mesh_release(m);
	if (!(tol >= 0))
		RAISE(err, ENGI_EINVALID,
		      "cannot tessellate STEP '%s': element size %g is negative", path, tol);
	if (access(path, R_OK) != 0)
		RAISE(err, ENGI_EIO, "cannot tessellate STEP '%s': %s", path, strerror(errno));
	char gmsh[PATH_MAX];
	if (child_find_program("gmsh", gmsh, sizeof(gmsh)) < 0)
		RAISE(err, ENGI_EENV,
		      "cannot tessellate STEP '%s': gmsh is not installed or not on PATH (on "
		      "Debian: apt-get install gmsh)",
		      path);
	char dir[] = "/tmp/engi-step-XXXXXX";
	if (!mkdtemp(dir))
		RAISE(err, ENGI_EIO,
		      "cannot tessellate STEP '%s': cannot make a temporary folder: %s", path,
		      strerror(errno));
	char out[PATH_MAX], log[PATH_MAX], clmax[64];
	snprintf(out, sizeof(out), "%s/out.stl", dir);
	snprintf(log, sizeof(log), "%s/gmsh.log", dir);
	snprintf(clmax, sizeof(clmax), "%.17g", tol > 0 ? tol : 1e22);
	char *const argv[] = {gmsh,  (char *)path, "-2", "-format", "stl", "-clmax",
			      clmax, "-nt",	   "1",	 "-o",	    out,   NULL};
	struct spawn_opts o = {
	    .path = gmsh,
	    .argv = argv,
	    .out_fd = -1,
	    .out_path = log,
	    .cwd_fd = -1,
	    .group = SPAWN_GROUP,
	};
	pid_t pid = child_spawn(&o, err);
	if (pid < 0) {
		rmdir(dir);
		return (int)pid;
	}
	int status = wait_limited(pid);
	char tail[GMSH_LOG_TAIL];
	log_tail(log, tail, sizeof(tail));
	int rc = 0;
	if (status == -2)
		rc = engi_raise(err, ENGI_ETIMEOUT,
				"cannot tessellate STEP '%s': gmsh ran over %d s", path,
				STEP_GMSH_TIMEOUT_S);
	else if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
		 access(out, R_OK) != 0)
		rc = engi_raise(err, ENGI_EPARSE, "cannot tessellate STEP '%s': gmsh failed%s%s",
				path, tail[0] ? ": " : "", tail);
	else
		rc = engi_stl_read(out, m, max_tris, err);
	unlink(out);
	unlink(log);
	rmdir(dir);
	return rc;
}

static int step_read_mesh(const char *path, struct engi_mesh *m, size_t max_tris,
			  struct engi_error *err)
{
	return step_tessellate(path, 0, m, max_tris, err);
}

void step_install(void)
{
	engi_meshio_set_step(step_read_mesh);
}
