#include "child.h"

#include "engi/alloc.h"
#include "secrets.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Our environment with extra entries appended (the array is ours, the
 * strings are not). */
static char **merged_env(char *const *extra)
{
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	while (extra[k])
		k++;
	char **e = engi_calloc(n + k + 1, sizeof(*e));
	if (!e)
		return NULL;
	memcpy(e, environ, n * sizeof(*e));
	memcpy(e + n, extra, k * sizeof(*e));
	return e;
}

pid_t child_spawn(const struct spawn_opts *o, struct engi_error *err)
{
	char **env = NULL;
	if (!o->envp && o->add_env && !(env = merged_env(o->add_env)))
		RAISE(err, ENGI_ENOMEM, "out of memory starting %s", o->path);
	/* no child (a verifier, a tool, QEMU, an episode's command) sees an
	 * API key: the api_key_env variables and any variable holding a
	 * secret are left out */
	char **clean = secrets_filter_env(o->envp ? o->envp : env ? env : environ);
	engi_free(env);
	if (!clean)
		RAISE(err, ENGI_ENOMEM, "out of memory starting %s", o->path);
	env = clean;
	char *const *envp = env;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		engi_free(env);
		RAISE(err, ENGI_EENV, "cannot start %s: fork: %s", o->path, strerror(e));
	}
	if (pid == 0) {
		if (o->group == SPAWN_SESSION) {
			setsid();
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(125); /* we died before the line above */
		} else if (o->group == SPAWN_GROUP) {
			setpgid(0, 0);
		}
		int in = open("/dev/null", O_RDONLY);
		int out = o->out_fd >= 0 ? o->out_fd
			  : o->out_path	 ? open(o->out_path, O_WRONLY | O_CREAT | O_APPEND, 0600)
					 : open("/dev/null", O_WRONLY);
		if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 ||
		    (o->cwd_fd >= 0 && fchdir(o->cwd_fd) < 0))
			_exit(126);
		syscall(SYS_close_range, 3u, ~0u, 0u);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (o->search)
			execvpe(o->path, o->argv, envp);
		else
			execve(o->path, o->argv, envp);
		_exit(127);
	}
	if (o->group == SPAWN_GROUP)
		setpgid(pid, pid); /* also here: no race with a first kill of the group */
	engi_free(env);
	return pid;
}

int child_find_program(const char *name, char *out, size_t n)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		if (len && snprintf(out, n, "%.*s/%s", (int)len, path, name) < (int)n &&
		    out[0] == '/' && access(out, X_OK) == 0)
			return 0;
		path += len + (path[len] == ':');
	}
	return -1;
}

int child_wait(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}
