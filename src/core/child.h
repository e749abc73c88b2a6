/*
 * child.h - starting a child program: the one place that forks.
 *
 * The child gets /dev/null as standard input, standard output and error on
 * out_fd (or appended to out_path, or /dev/null), no descriptor above 2, an
 * empty signal mask and SIGPIPE at its default, optionally its own process
 * group (so a timeout can kill the whole tree) or its own session tied to
 * this process's life (PR_SET_PDEATHSIG: it is killed when we die). Between
 * fork and exec it only makes async-signal-safe calls: the environment is
 * built before the fork. Whatever environment it is given, the child never
 * gets the variables named by models.json api_key_env nor any variable
 * whose value holds a registered secret (secrets.h).
 */
#ifndef ENGI_CHILD_H
#define ENGI_CHILD_H

#include <stddef.h>
#include <sys/types.h>

#include "engi/error.h"

enum spawn_group {
	SPAWN_SAME = 0, /* our process group */
	SPAWN_GROUP,	/* a process group of its own (set in both processes) */
	SPAWN_SESSION,	/* a session of its own, killed when this process dies */
};

struct spawn_opts {
	const char *path; /* the program; with search, looked up in PATH */
	int search;
	char *const *argv;
	char *const *envp;    /* the whole environment; NULL: ours plus add_env */
	char *const *add_env; /* NULL-terminated "NAME=value" added to ours */
	int out_fd;	      /* standard output and error; -1: out_path */
	const char *out_path; /* appended to (created 0600); NULL: /dev/null */
	int cwd_fd;	      /* the working folder; -1: ours */
	enum spawn_group group;
};

/* The child's pid, or a negative engi error code with err set (fork or
 * memory failed). A child that cannot set itself up exits 126, one whose
 * exec fails 127. */
pid_t child_spawn(const struct spawn_opts *o, struct engi_error *err);

/* The program name as found in PATH (the absolute folders of it; /usr/bin
 * and /bin when PATH is unset or empty) into out: 0, or -1 when no folder
 * holds an executable of that name. */
int child_find_program(const char *name, char *out, size_t n);

/* waitpid through EINTR: 0 and *status, or -1 with errno. */
int child_wait(pid_t pid, int *status);

#endif
