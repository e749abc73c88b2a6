/*
 * STEP through gmsh: the STEP file is tessellated by the `gmsh` program (a
 * host tool, Debian package gmsh) into an STL in a private temporary
 * folder, which the STL reader then reads. gmsh runs with its standard
 * output and error sent to a log file in that folder, under a time limit;
 * the last line of its log ends up in the message when it fails. Dispatch
 * by file extension for all readers lives here too.
 */
#include "engi/meshio.h"

#include "engi/alloc.h"
#include "engi/error.h"
#include "engi/mesh.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GMSH_TIMEOUT_S 600
#define GMSH_LOG_TAIL  200

static int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	char buf[PATH_MAX];
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);
		if (n && n + strlen(prog) + 2 < sizeof(buf)) {
			memcpy(buf, path, n);
			buf[n] = '/';
			strcpy(buf + n + 1, prog);
			if (access(buf, X_OK) == 0)
				return 1;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return 0;
}

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

int engi_step_read(const char *path, double tol, struct engi_mesh *m, size_t max_tris,
		   struct engi_error *err)
{
	engi_mesh_release(m);
	if (!(tol >= 0))
		RAISE(err, ENGI_EINVALID,
		      "cannot tessellate STEP '%s': element size %g is negative", path, tol);
	if (access(path, R_OK) != 0)
		RAISE(err, ENGI_EIO, "cannot tessellate STEP '%s': %s", path, strerror(errno));
	if (!on_path("gmsh"))
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
	pid_t pid = fork();
	if (pid < 0) {
		rmdir(dir);
		RAISE(err, ENGI_EENV, "cannot tessellate STEP '%s': fork: %s", path,
		      strerror(errno));
	}
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execlp("gmsh", "gmsh", path, "-2", "-format", "stl", "-clmax", clmax, "-nt", "1",
		       "-o", out, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	struct timespec nap = {0, 10 * 1000 * 1000};
	long waited_ms = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			status = -1;
			break;
		}
		if (waited_ms >= GMSH_TIMEOUT_S * 1000L) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			status = -2;
			break;
		}
		nanosleep(&nap, NULL);
		waited_ms += 10;
	}
	char tail[GMSH_LOG_TAIL];
	log_tail(log, tail, sizeof(tail));
	int rc = 0;
	if (status == -2)
		rc = engi_raise(err, ENGI_ETIMEOUT,
				"cannot tessellate STEP '%s': gmsh ran over %d s", path,
				GMSH_TIMEOUT_S);
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

static const char *ext_of(const char *path)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	if (!dot || (slash && dot < slash))
		return "";
	return dot + 1;
}

int engi_mesh_read(const char *path, struct engi_mesh *m, size_t max_verts, size_t max_tris,
		   struct engi_error *err)
{
	const char *e = ext_of(path);
	if (!strcasecmp(e, "stl"))
		return engi_stl_read(path, m, max_tris, err);
	if (!strcasecmp(e, "obj"))
		return engi_obj_read(path, m, max_verts, max_tris, err);
	if (!strcasecmp(e, "ply"))
		return engi_ply_read(path, m, max_verts, max_tris, err);
	if (!strcasecmp(e, "step") || !strcasecmp(e, "stp"))
		return engi_step_read(path, 0, m, max_tris, err);
	RAISE(err, ENGI_ENOTSUP,
	      "cannot read mesh '%s': unknown extension '.%s' (valid: .stl, .obj, .ply, .step, "
	      ".stp)",
	      path, e);
}

int engi_cloud_read(const char *path, struct engi_mesh *m, size_t max_verts, struct engi_error *err)
{
	const char *e = ext_of(path);
	if (!strcasecmp(e, "xyz") || !strcasecmp(e, "txt") || !strcasecmp(e, "pts"))
		return engi_xyz_read(path, m, max_verts, err);
	return engi_mesh_read(path, m, max_verts, max_verts, err);
}
