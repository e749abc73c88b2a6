/*
 * Paced input (vcpu.h): the /proc state letter behind names with spaces
 * and parentheses, the decision whether a guest took its input on made-up
 * samples, and the samples of real threads of this process: one that
 * spins, one that sleeps and one woken once.
 */
#include "check.h"
#include "vcpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
}

static void test_stat_state(void)
{
	const char *a = "4242 (CPU 0/KVM) S 1 2 3";
	CHECK_INT(vcpu_stat_state(a, strlen(a)), 'S');
	const char *b = "7 (a) R (b)) R 1 2";
	CHECK_INT(vcpu_stat_state(b, strlen(b)), 'R');
	CHECK_INT(vcpu_stat_state("7 (a", 4), 0);
	CHECK_INT(vcpu_stat_state("7 (a)", 5), 0);
	CHECK_INT(vcpu_stat_state("7 (a) s", 7), 0);
	CHECK_INT(vcpu_stat_state("", 0), 0);
}

static struct vcpu_sample sample(int n, const unsigned long long *run, const char *state)
{
	struct vcpu_sample s = {.n = n};
	for (int i = 0; i < n; i++) {
		s.run_ns[i] = run[i];
		s.state[i] = state[i];
	}
	return s;
}

static void test_taken(void)
{
	unsigned long long r0[2] = {1000, 5000};
	struct vcpu_sample b = sample(2, r0, "SS");
	/* nothing ran: not taken, however idle */
	struct vcpu_sample a = sample(2, r0, "SS");
	CHECK_INT(vcpu_input_taken(&b, &a), 0);
	/* one ran and both are idle again: taken */
	unsigned long long r1[2] = {1500, 5000};
	a = sample(2, r1, "SS");
	CHECK_INT(vcpu_input_taken(&b, &a), 1);
	/* one ran but another is runnable without having run long: not yet
	 * (it may be the one the interrupt went to) */
	a = sample(2, r1, "SR");
	CHECK_INT(vcpu_input_taken(&b, &a), 0);
	/* a busy vCPU that ran VCPU_BUSY_NS has had its chance */
	unsigned long long r2[2] = {1500, 5000 + VCPU_BUSY_NS};
	a = sample(2, r2, "SR");
	CHECK_INT(vcpu_input_taken(&b, &a), 1);
	unsigned long long r3[2] = {1500, 5000 + VCPU_BUSY_NS - 1};
	a = sample(2, r3, "SR");
	CHECK_INT(vcpu_input_taken(&b, &a), 0);
	/* a run time that went backwards (another thread) counts as none */
	unsigned long long r4[2] = {10, 5000};
	a = sample(2, r4, "SS");
	CHECK_INT(vcpu_input_taken(&b, &a), 0);
	/* samples of different sets never match */
	a = sample(1, r1, "S");
	CHECK_INT(vcpu_input_taken(&b, &a), 0);
	struct vcpu_sample none = {.n = 0};
	CHECK_INT(vcpu_input_taken(&none, &none), 0);
}

static atomic_int stop, spinner_tid, sleeper_tid;
static int wake_pipe[2];

static void *spinner(void *arg)
{
	(void)arg;
	atomic_store(&spinner_tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&stop))
		;
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	atomic_store(&sleeper_tid, (int)syscall(SYS_gettid));
	char c;
	while (read(wake_pipe[0], &c, 1) == 1 && c != 'q') {
		/* a little work per wake-up, as a guest handling an interrupt */
		volatile unsigned long x = 0;
		for (unsigned long i = 0; i < 200000; i++)
			x += i;
	}
	return NULL;
}

static void test_real_threads(void)
{
	CHECK(pipe(wake_pipe) == 0);
	pthread_t ts, tl;
	pthread_create(&ts, NULL, spinner, NULL);
	pthread_create(&tl, NULL, sleeper, NULL);
	while (!atomic_load(&spinner_tid) || !atomic_load(&sleeper_tid))
		sleep_ms(1);
	sleep_ms(50); /* the sleeper is blocked in read */
	pid_t pid = getpid();

	/* the reply's threads, a duplicate dropped; foreign or bogus ones refused */
	struct vcpu_set set;
	json_t *cpus =
	    json_pack("[{s:i},{s:i},{s:i}]", "thread-id", atomic_load(&sleeper_tid), "thread-id",
		      atomic_load(&spinner_tid), "thread-id", atomic_load(&sleeper_tid));
	CHECK_INT(vcpu_set_from_qmp(&set, pid, cpus), 0);
	CHECK_INT(set.n, 2);
	json_decref(cpus);
	struct vcpu_set bad;
	cpus = json_pack("[{s:i}]", "thread-id", 0x7ffffff0);
	CHECK_INT(vcpu_set_from_qmp(&bad, pid, cpus), -1);
	json_decref(cpus);
	cpus = json_pack("[{s:s}]", "thread-id", "1");
	CHECK_INT(vcpu_set_from_qmp(&bad, pid, cpus), -1);
	json_decref(cpus);
	cpus = json_array();
	CHECK_INT(vcpu_set_from_qmp(&bad, pid, cpus), -1);
	json_decref(cpus);
	CHECK_INT(vcpu_set_from_qmp(&bad, pid, NULL), -1);

	/* the sleeper alone: asleep, and nothing ran while nothing was sent */
	struct vcpu_set one = {.pid = pid, .n = 1, .tid = {atomic_load(&sleeper_tid)}};
	struct vcpu_sample b, a;
	CHECK_INT(vcpu_sample_read(&one, &b), 0);
	CHECK_INT(b.state[0], 'S');
	sleep_ms(20);
	CHECK_INT(vcpu_sample_read(&one, &a), 0);
	CHECK_INT(vcpu_input_taken(&b, &a), 0);
	/* woken once: it ran and sleeps again, so it took it */
	CHECK(write(wake_pipe[1], "k", 1) == 1);
	int taken = 0;
	for (int i = 0; i < 2000 && !taken; i++) {
		sleep_ms(1);
		CHECK_INT(vcpu_sample_read(&one, &a), 0);
		taken = vcpu_input_taken(&b, &a);
	}
	CHECK_INT(taken, 1);
	CHECK(a.run_ns[0] > b.run_ns[0]);

	/* the spinner never sleeps: taken once it has run VCPU_BUSY_NS */
	struct vcpu_set spin = {.pid = pid, .n = 1, .tid = {atomic_load(&spinner_tid)}};
	CHECK_INT(vcpu_sample_read(&spin, &b), 0);
	taken = 0;
	for (int i = 0; i < 2000 && !taken; i++) {
		sleep_ms(1);
		CHECK_INT(vcpu_sample_read(&spin, &a), 0);
		taken = vcpu_input_taken(&b, &a);
	}
	CHECK_INT(taken, 1);
	CHECK(a.run_ns[0] - b.run_ns[0] >= VCPU_BUSY_NS);

	/* both: the spinner's run alone does not do while the sleeper, which
	 * the input may be for, is runnable and has not run; here it sleeps, so
	 * the set counts as having taken it */
	CHECK_INT(vcpu_sample_read(&set, &b), 0);
	taken = 0;
	for (int i = 0; i < 2000 && !taken; i++) {
		sleep_ms(1);
		CHECK_INT(vcpu_sample_read(&set, &a), 0);
		taken = vcpu_input_taken(&b, &a);
	}
	CHECK_INT(taken, 1);

	atomic_store(&stop, 1);
	CHECK(write(wake_pipe[1], "q", 1) == 1);
	pthread_join(ts, NULL);
	pthread_join(tl, NULL);
	/* a thread that is gone cannot be read */
	CHECK_INT(vcpu_sample_read(&one, &a), -1);
	close(wake_pipe[0]);
	close(wake_pipe[1]);
}

int main(void)
{
	test_stat_state();
	test_taken();
	test_real_threads();
	return check_exit();
}
