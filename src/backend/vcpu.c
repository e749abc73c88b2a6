/*
 * Whether a guest has taken the input it was sent (vcpu.h): the run time
 * and state of its vCPU threads, read from /proc.
 */
#include "vcpu.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int vcpu_set_from_qmp(struct vcpu_set *s, pid_t pid, const json_t *cpus)
{
	s->pid = pid;
	s->n = 0;
	if (!json_is_array(cpus) || !json_array_size(cpus))
		return -1;
	size_t i;
	const json_t *c;
	json_array_foreach(cpus, i, c)
	{
		json_t *t = json_object_get(c, "thread-id");
		if (!json_is_integer(t) || json_integer_value(t) <= 0 ||
		    json_integer_value(t) > 0x7fffffff)
			return s->n = 0, -1;
		pid_t tid = (pid_t)json_integer_value(t);
		int dup = 0;
		for (int k = 0; k < s->n; k++)
			dup |= s->tid[k] == tid;
		if (dup)
			continue;
		if (s->n == VCPU_MAX)
			return s->n = 0, -1;
		char p[64];
		snprintf(p, sizeof(p), "/proc/%d/task/%d", (int)pid, (int)tid);
		if (access(p, F_OK) < 0)
			return s->n = 0, -1;
		s->tid[s->n++] = tid;
	}
	return 0;
}

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

char vcpu_stat_state(const char *stat, size_t len)
{
	const char *close = NULL;
	for (size_t i = 0; i < len; i++)
		if (stat[i] == ')')
			close = stat + i;
	if (!close || (size_t)(close - stat) + 3 > len || close[1] != ' ')
		return 0;
	char c = close[2];
	return c >= 'A' && c <= 'Z' ? c : 0;
}

int vcpu_sample_read(const struct vcpu_set *s, struct vcpu_sample *out)
{
	out->n = s->n;
	for (int i = 0; i < s->n; i++) {
		char p[96], buf[1024];
		snprintf(p, sizeof(p), "/proc/%d/task/%d/schedstat", (int)s->pid, (int)s->tid[i]);
		if (read_small(p, buf, sizeof(buf)) <= 0)
			return -1;
		char *end;
		out->run_ns[i] = strtoull(buf, &end, 10);
		if (end == buf)
			return -1;
		snprintf(p, sizeof(p), "/proc/%d/task/%d/stat", (int)s->pid, (int)s->tid[i]);
		ssize_t n = read_small(p, buf, sizeof(buf));
		if (n <= 0 || !(out->state[i] = vcpu_stat_state(buf, (size_t)n)))
			return -1;
	}
	return 0;
}

int vcpu_input_taken(const struct vcpu_sample *before, const struct vcpu_sample *after)
{
	if (before->n != after->n || !after->n)
		return 0;
	int ran = 0;
	for (int i = 0; i < after->n; i++) {
		unsigned long long d =
		    after->run_ns[i] > before->run_ns[i] ? after->run_ns[i] - before->run_ns[i] : 0;
		ran |= d > 0;
		if (after->state[i] != 'S' && d < VCPU_BUSY_NS)
			return 0;
	}
	return ran;
}
