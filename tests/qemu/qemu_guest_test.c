/*
 * qemu_guest_test - drives the qemu backend against real guests.
 *
 *   qemu_guest_test tiny WORKDIR     boot, exec, files, limits, hostile guest
 *   qemu_guest_test hang WORKDIR     a guest agent that stops answering
 *   qemu_guest_test respawn WORKDIR  a guest agent restarted under a command
 *   qemu_guest_test gui WORKDIR      screenshots and input on the desktop image
 *   qemu_guest_test net WORKDIR PORT network only when asked; PORT serves
 *                                    "engisweep-net-ok" on the host's loopback
 *
 * Timings go to stdout as "time <what> <seconds>" lines (the test log).
 * Exit status 0 when every check holds; each failure is printed.
 */
#include "backend.h"
#include "engi/alloc.h"
#include "fsutil.h"
#include "screen_image.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

static const struct backend_desc *qemu;

static int network;

static struct backend_env *start(const char *image, const char *work, const char *name,
				 double *secs)
{
	struct env_spec s = {.image = image,
			     .cpus = 1,
			     .memory_mb = 0,
			     .work_root = work,
			     .name = name,
			     .network = network};
	struct backend_env *env = NULL;
	struct engi_error e;
	engi_error_init(&e);
	double t0 = clk_now_mono();
	int rc = backend_start(qemu, &s, &env, &e);
	if (secs)
		*secs = clk_now_mono() - t0;
	CHECK(rc == 0, "start %s: %s", image, e.msg);
	return rc == 0 ? env : NULL;
}

static int run(struct backend_env *env, const char *cmd, double timeout, size_t cap,
	       struct exec_result *r)
{
	struct exec_opts o = {.timeout_s = timeout, .out_cap = cap};
	struct engi_error e;
	engi_error_init(&e);
	int rc = backend_exec(env, cmd, &o, r, &e);
	if (rc < 0)
		printf("  exec '%s': %s\n", cmd, e.msg);
	return rc;
}

static int count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static int private_dirs(void)
{
	const char *t = getenv("TMPDIR");
	return count_entries(t && *t ? t : "/tmp", "engiq.");
}

static int test_tiny(const char *work)
{
	int dirs_before = private_dirs();
	double cold, restore;
	setenv("ENGI_QEMU_RESTORE", "cold", 1);
	struct backend_env *env = start("tiny", work, "cold", &cold);
	unsetenv("ENGI_QEMU_RESTORE");
	if (!env)
		return 1;
	printf("time cold_boot %.3f\n", cold);
	backend_stop(&env);

	for (int i = 0; i < 3; i++) {
		env = start("tiny", work, "restore", &restore);
		if (!env)
			return 1;
		printf("time restore %.3f\n", restore);
		if (i < 2)
			backend_stop(&env);
	}

	/* exec: output, exit code, stderr interleaved, working folder */
	struct exec_result r;
	double t0 = clk_now_mono();
	if (run(env, "echo hello; echo oops >&2; pwd; exit 3", 10, 4096, &r) == 0) {
		printf("time exec_echo %.3f\n", clk_now_mono() - t0);
		CHECK(r.exit_code == 3, "exit code %d, want 3", r.exit_code);
		CHECK(strstr(r.out, "hello\n") && strstr(r.out, "oops\n") &&
			  strstr(r.out, "/work\n"),
		      "output '%s'", r.out);
		backend_exec_result_release(&r);
	} else {
		failures++;
	}
	/* the clock was set after the restore */
	if (run(env, "date +%s", 10, 64, &r) == 0) {
		double guest = atof(r.out);
		CHECK(guest > clk_now_wall() - 30 && guest < clk_now_wall() + 30, "guest clock %s",
		      r.out);
		backend_exec_result_release(&r);
	}

	/* 1 MiB in and out, byte for byte */
	size_t n = 1 << 20;
	unsigned char *data = engi_malloc(n);
	unsigned s = 12345;
	for (size_t i = 0; i < n; i++) {
		s = s * 1103515245u + 12345u;
		data[i] = (unsigned char)(s >> 16);
	}
	struct engi_error e;
	engi_error_init(&e);
	t0 = clk_now_mono();
	int rc = backend_put(env, data, n, "sub/dir/blob.bin", &e);
	double put_s = clk_now_mono() - t0;
	CHECK(rc == 0, "put 1 MiB: %s", e.msg);
	char host[PATH_MAX];
	snprintf(host, sizeof(host), "%s/blob.out", work);
	uint64_t got = 0;
	t0 = clk_now_mono();
	rc = backend_get(env, "sub/dir/blob.bin", host, n, &got, &e);
	printf("time put_1mib %.3f\ntime get_1mib %.3f\n", put_s, clk_now_mono() - t0);
	CHECK(rc == 0 && got == n, "get 1 MiB: rc %d, %llu bytes: %s", rc, (unsigned long long)got,
	      e.msg);
	char *back = NULL;
	size_t blen = 0;
	if (rc == 0 && fs_read_file(host, n + 1, &back, &blen, &e) == 0)
		CHECK(blen == n && !memcmp(back, data, n), "1 MiB round trip differs");
	engi_free(back);
	engi_free(data);
	unlink(host);

	/* a command over its time limit is killed with its children */
	t0 = clk_now_mono();
	if (run(env, "sleep 300 & sleep 300; echo never", 1.5, 4096, &r) == 0) {
		CHECK(r.timed_out && r.exit_code == -1, "timed_out %d exit %d", r.timed_out,
		      r.exit_code);
		CHECK(clk_now_mono() - t0 < 30, "timeout took %.1f s", clk_now_mono() - t0);
		backend_exec_result_release(&r);
	}
	if (run(env, "ps 2>/dev/null | grep -c '[s]leep 300' || true", 10, 64, &r) == 0) {
		CHECK(atoi(r.out) == 0, "sleep processes left: %s", r.out);
		backend_exec_result_release(&r);
	}
	/* endless output: capped, counted, the guest still answers */
	if (run(env, "yes", 2, 1000, &r) == 0) {
		CHECK(r.out_len == 1000 && r.out_total > 1000, "kept %zu of %llu", r.out_len,
		      (unsigned long long)r.out_total);
		backend_exec_result_release(&r);
	}
	/* hostile deliverables: a 2 GiB file, a link, a device, bad names */
	run(env, "truncate -s 2G huge.bin && ln -s /etc/passwd link.txt && ln -s /dev/zero zero",
	    20, 64, &r);
	backend_exec_result_release(&r);
	snprintf(host, sizeof(host), "%s/huge.out", work);
	engi_error_init(&e);
	t0 = clk_now_mono();
	rc = backend_get(env, "huge.bin", host, 64 << 20, &got, &e);
	CHECK(rc == ENGI_ETOOBIG && clk_now_mono() - t0 < 20, "2 GiB file: rc %d in %.1f s: %s", rc,
	      clk_now_mono() - t0, e.msg);
	CHECK(!fs_path_is_file(host), "a refused file was left on the host");
	engi_error_init(&e);
	rc = backend_get(env, "link.txt", host, 1 << 20, &got, &e);
	CHECK(rc == ENGI_EIO, "link deliverable: rc %d: %s", rc, e.msg);
	engi_error_init(&e);
	rc = backend_get(env, "zero", host, 1 << 20, &got, &e);
	CHECK(rc == ENGI_EIO, "device deliverable: rc %d: %s", rc, e.msg);
	static const char *const bad[] = {"../escape", "/etc/passwd", "a/../../b", "", NULL};
	for (const char *const *b = bad; *b; b++) {
		engi_error_init(&e);
		rc = backend_put(env, "x", 1, *b, &e);
		CHECK(rc == ENGI_EINVALID, "put '%s': rc %d", *b, rc);
		rc = backend_get(env, *b, host, 10, &got, &e);
		CHECK(rc == ENGI_EINVALID, "get '%s': rc %d", *b, rc);
	}
	CHECK(!fs_path_is_file(host), "something was written for a refused name");
	/* no display on tiny */
	unsigned char *png;
	size_t plen;
	engi_error_init(&e);
	CHECK(backend_screenshot(env, 1.0, &png, &plen, &e) == ENGI_ENOTSUP, "screenshot on tiny");

	/* pause and resume (QMP stop/cont) */
	engi_error_init(&e);
	CHECK(backend_pause(env, 1, &e) == 0 && backend_pause(env, 0, &e) == 0, "pause: %s", e.msg);
	if (run(env, "echo alive", 10, 64, &r) == 0) {
		CHECK(!strcmp(r.out, "alive\n"), "after resume: '%s'", r.out);
		backend_exec_result_release(&r);
	}

	/* the VM dies under the agent: an environment failure, not a hang */
	run(env, "echo o > /proc/sysrq-trigger", 5, 64, &r);
	backend_exec_result_release(&r);
	engi_error_init(&e);
	t0 = clk_now_mono();
	struct exec_opts o = {.timeout_s = 10, .out_cap = 64};
	rc = backend_exec(env, "echo still here", &o, &r, &e);
	if (rc == 0)
		backend_exec_result_release(&r);
	CHECK(rc == ENGI_EENV, "exec after power-off: rc %d: %s", rc, e.msg);
	printf("  after power-off: %s\n", e.msg);
	backend_stop(&env);
	CHECK(private_dirs() == dirs_before, "private folders left: %d before, %d after",
	      dirs_before, private_dirs());
	CHECK(count_entries(work, "") == 2, "work folder not empty (overlays left?)");
	return 0;
}

/* The guest agent stops answering: calls time out as environment failures
 * and stop leaves no QEMU process behind. */
static int test_hang(const char *work)
{
	setenv("ENGI_QGA_TIMEOUT", "3", 1);
	struct backend_env *env = start("tiny", work, "hang", NULL);
	if (!env)
		return 1;
	struct exec_result r;
	run(env, "kill -STOP $(pidof qemu-ga)", 5, 64, &r);
	backend_exec_result_release(&r);
	struct engi_error e;
	engi_error_init(&e);
	struct exec_opts o = {.timeout_s = 60, .out_cap = 64};
	double t0 = clk_now_mono();
	int rc = backend_exec(env, "echo hi", &o, &r, &e);
	double took = clk_now_mono() - t0;
	if (rc == 0)
		backend_exec_result_release(&r);
	CHECK(rc == ENGI_EENV, "exec with a frozen agent: rc %d: %s", rc, e.msg);
	CHECK(took < 30, "frozen agent detected after %.1f s", took);
	printf("  frozen agent: %s (%.1f s)\n", e.msg, took);
	t0 = clk_now_mono();
	backend_stop(&env);
	printf("time stop_hung %.3f\n", clk_now_mono() - t0);
	return 0;
}

/* The guest agent is killed and restarted under a running command: the
 * new agent does not know the command's pid, and that is the environment's
 * failure (ENGI_EENV, retried), not the command's. */
static int test_respawn(const char *work)
{
	struct backend_env *env = start("tiny", work, "respawn", NULL);
	if (!env)
		return 1;
	struct exec_result r;
	struct engi_error e;
	engi_error_init(&e);
	struct exec_opts o = {.timeout_s = 60, .out_cap = 64};
	int rc = backend_exec(env, "kill -9 $(pidof qemu-ga); sleep 5; echo hi", &o, &r, &e);
	if (rc == 0)
		backend_exec_result_release(&r);
	CHECK(rc == ENGI_EENV, "exec under a restarted agent: rc %d: %s", rc, e.msg);
	CHECK(strstr(e.msg, "guest agent lost the running command") != NULL, "message: %s", e.msg);
	printf("  restarted agent: %s\n", e.msg);
	backend_stop(&env);
	return 0;
}

static int test_gui(const char *work)
{
	struct backend_env *env = start("desktop", work, "gui", NULL);
	if (!env)
		return 1;
	struct engi_error e;
	engi_error_init(&e);
	unsigned char *png = NULL, *png2 = NULL;
	size_t len = 0, len2 = 0;
	static const double scales[] = {1.0, 0.6, 0.2};
	static const int widths[] = {1920, 1152, 384}, heights[] = {1080, 648, 216};
	for (int i = 0; i < 3; i++) {
		double t0 = clk_now_mono();
		int rc = backend_screenshot(env, scales[i], &png, &len, &e);
		CHECK(rc == 0, "screenshot %.1f: %s", scales[i], e.msg);
		if (rc < 0)
			break;
		printf("time screenshot_%.1f %.3f\n", scales[i], clk_now_mono() - t0);
		int w = 0, h = 0;
		CHECK(len > 8 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8), "not a PNG");
		CHECK(screen_png_size(png, len, &w, &h) == 0 && w == widths[i] && h == heights[i],
		      "screenshot at %.1f is %dx%d", scales[i], w, h);
		if (i == 0) {
			char p[PATH_MAX];
			snprintf(p, sizeof(p), "%s/../screen-before.png", work);
			fs_write_file_atomic(p, png, len, &e);
		}
		if (i < 2)
			engi_free(png);
	}
	/* png holds the 0.2 screenshot; type into the focused terminal */
	static const char *const actions[] = {
	    "{\"action\":\"click\",\"x\":80,\"y\":60}",
	    "{\"action\":\"type\",\"text\":\"echo ENGISWEEP GUI TEST 1234567890\"}",
	    "{\"action\":\"key\",\"keys\":\"Return\"}", NULL};
	for (const char *const *a = actions; *a; a++) {
		engi_error_init(&e);
		CHECK(backend_input(env, *a, &e) == 0, "input %s: %s", *a, e.msg);
	}
	struct timespec ts = {1, 0};
	nanosleep(&ts, NULL);
	engi_error_init(&e);
	int rc = backend_screenshot(env, 0.2, &png2, &len2, &e);
	CHECK(rc == 0, "screenshot after input: %s", e.msg);
	CHECK(rc != 0 || len != len2 || memcmp(png, png2, len), "input did not change the screen");
	if (failures) {
		struct exec_result r;
		if (run(env,
			"cat /sys/class/drm/*/dpms; x=$(pidof Xorg); ps -o pid,stat,wchan:30,args "
			"-p $x; "
			"DISPLAY=:0 xprop -root _NET_CLIENT_LIST; tail -3 /var/log/Xorg.0.log",
			10, 8192, &r) == 0) {
			printf("  the guest's display and X server:\n%s\n", r.out);
			backend_exec_result_release(&r);
		}
	}
	if (rc == 0) {
		unsigned char *full;
		size_t flen;
		if (backend_screenshot(env, 1.0, &full, &flen, &e) == 0) {
			char p[PATH_MAX];
			snprintf(p, sizeof(p), "%s/../screen-after.png", work);
			fs_write_file_atomic(p, full, flen, &e);
			engi_free(full);
		}
	}
	engi_free(png);
	engi_free(png2);
	engi_error_init(&e);
	CHECK(backend_input(env, "{\"action\":\"click\",\"x\":5000,\"y\":1}", &e) == ENGI_EINVALID,
	      "click outside the screen accepted");
	backend_stop(&env);
	return 0;
}

/* No network device by default; with network, the host is reachable
 * through QEMU's user-mode NAT at 10.0.2.2. */
static int test_net(const char *work, const char *port)
{
	char cmd[256];
	snprintf(
	    cmd, sizeof(cmd),
	    "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 10.0.2.2 %s 2>&1; ls /sys/class/net",
	    port);
	for (int net = 0; net < 2; net++) {
		network = net;
		struct backend_env *env = start("tiny", work, net ? "net" : "nonet", NULL);
		if (!env)
			return 1;
		struct exec_result r;
		if (run(env, cmd, 30, 4096, &r) == 0) {
			printf("  network %d: %s", net, r.out);
			int reached = strstr(r.out, "engisweep-net-ok") != NULL;
			int has_card = strstr(r.out, "eth0") != NULL;
			CHECK(reached == net && has_card == net, "network %d: reached %d, card %d",
			      net, reached, has_card);
			backend_exec_result_release(&r);
		} else {
			failures++;
		}
		backend_stop(&env);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "net"))
		argc = 3; /* the port is argv[3] */
	else if (argc != 3) {
		fprintf(stderr,
			"usage: qemu_guest_test tiny|hang|respawn|gui|net WORKDIR [PORT]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	struct engi_error e;
	engi_error_init(&e);
	qemu = backend_lookup("qemu", &e);
	if (!qemu) {
		fprintf(stderr, "%s\n", e.msg);
		return 2;
	}
	/* a private TMPDIR, so the check that no private folder is left sees
	 * only this test's (other tests start guests at the same time) */
	char tmp[] = "/tmp/engiqt.XXXXXX";
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 2;
	}
	setenv("TMPDIR", tmp, 1);
	char work[PATH_MAX];
	snprintf(work, sizeof(work), "%s/work", argv[2]);
	if (fs_mkdir_p(work, 0700, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		return 2;
	}
	int rc;
	if (!strcmp(argv[1], "tiny"))
		rc = test_tiny(work);
	else if (!strcmp(argv[1], "hang"))
		rc = test_hang(work);
	else if (!strcmp(argv[1], "respawn"))
		rc = test_respawn(work);
	else if (!strcmp(argv[1], "gui"))
		rc = test_gui(work);
	else if (!strcmp(argv[1], "net") && argv[3])
		rc = test_net(work, argv[3]);
	else
		rc = 2;
	int left = private_dirs();
	CHECK(left == 0, "%d private folder(s) left in %s", left, tmp);
	fs_rm_rf(tmp, NULL);
	if (rc || failures) {
		printf("%d check(s) failed\n", failures);
		return 1;
	}
	printf("all checks passed\n");
	return 0;
}
