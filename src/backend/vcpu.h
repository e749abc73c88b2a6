/*
 * Whether a guest has taken the input it was sent. QEMU's emulated PS/2
 * keyboard and USB tablet hold a few events only (the PS/2 queue 16 bytes,
 * a key press and release 2 or more of them) and drop the rest without a
 * word; a guest whose vCPU does not run, because the host is loaded or the
 * accelerator is TCG, then loses keystrokes ("cp tetra.stl out.stl" arrived
 * as "cp tetra.tl"). So the backend sends one key or pointer event group at
 * a time and, before the next, waits until the guest has run since: its
 * vCPU threads' run time (/proc/<pid>/task/<tid>/schedstat) has grown and
 * each of them has gone idle again (a vCPU halts only with no interrupt
 * pending) or has run long enough to have taken it.
 */
#ifndef ENGI_BACKEND_VCPU_H
#define ENGI_BACKEND_VCPU_H

#include <jansson.h>
#include <sys/types.h>

#define VCPU_MAX 64
/* a vCPU that ran this long since the event was sent has taken it, idle or
 * not (a busy guest never halts) */
#define VCPU_BUSY_NS 2000000ULL

struct vcpu_set {
	pid_t pid;
	int n;
	pid_t tid[VCPU_MAX];
};

struct vcpu_sample {
	int n;
	unsigned long long run_ns[VCPU_MAX];
	char state[VCPU_MAX]; /* /proc's state letter: 'S' sleeping (halted), 'R' ... */
};

/* The threads of QMP's query-cpus-fast reply (its "thread-id"s, duplicates
 * dropped: one TCG thread may run every vCPU); -1 when the reply names
 * none or one is not a thread of pid. */
int vcpu_set_from_qmp(struct vcpu_set *s, pid_t pid, const json_t *cpus);
/* Reads each thread's run time and state; -1 when one cannot be read (the
 * guest is gone). */
int vcpu_sample_read(const struct vcpu_set *s, struct vcpu_sample *out);
/* 1 when the guest has taken what was sent between before and after: some
 * vCPU ran, and every vCPU is idle or ran at least VCPU_BUSY_NS. */
int vcpu_input_taken(const struct vcpu_sample *before, const struct vcpu_sample *after);
/* Parses one /proc/<pid>/task/<tid>/stat line's state letter (after the
 * last ')': the name may hold spaces and parentheses); 0 when malformed. */
char vcpu_stat_state(const char *stat, size_t len);

#endif
