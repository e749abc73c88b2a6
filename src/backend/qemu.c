/*
 * The qemu backend: a clean QEMU virtual machine per episode.
 *
 * Images (image.h) are built once; the first episode of each machine shape
 * (accelerator, CPUs, memory) boots the image cold and saves a "ready"
 * memory state beside it, under a lock, so concurrent ranks wait for one
 * builder. Every later episode starts from that state:
 *
 *   incoming (default): a fresh qcow2 overlay on the frozen ready disk and
 *     `-incoming "exec:cat state"` from the saved migration stream;
 *   loadvm: a copy of the ready disk, which holds the same state as an
 *     internal snapshot, started with `-loadvm ready`;
 *   cold: a fresh overlay on the image and a full boot (for measurements).
 *
 * Why incoming: both restore in about the same time on this kind of host
 * (0.35-0.5 s to guest-ping under TCG, bench/qemu_start.sh), but loadvm
 * must copy the whole ready disk, RAM state included (~100 MB and more per
 * episode), because internal snapshots live only in the top image of a
 * chain; an overlay costs 30 ms and a few hundred KiB. -snapshot cannot be
 * combined with -loadvm at all. ENGI_QEMU_RESTORE=loadvm|cold selects the
 * others.
 *
 * Per episode: sockets, log and screen dumps in a private 0700 folder
 * (mkdtemp under $TMPDIR or /tmp, since a Unix socket path is limited to
 * 108 bytes), the overlay under the episode's work folder; no network
 * device unless the task asks (then QEMU's user-mode NAT, see docs/virtual-machines.md); KVM
 * when a probe guest runs under it, TCG otherwise (see "the accelerator";
 * ENGI_QEMU_ACCEL=kvm|tcg forces). QEMU runs in its own session (setsid) and dies with us
 * (PR_SET_PDEATHSIG); stop quits it over QMP, then TERM, then KILL to the
 * group, and deletes the overlay and the private folder.
 */
#include "backend.h"

#include "engi/alloc.h"
#include "child.h"
#include "fsutil.h"
#include "image.h"
#include "qchan.h"
#include "qemu.h"
#include "screen_action.h"
#include "screen_image.h"
#include "vcpu.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/kvm.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GUEST_WORKDIR	    "/work"
#define COLD_BOOT_TIMEOUT_S 600.0
#define RESTORE_TIMEOUT_S   120.0
#define SCREEN_CAP	    ((size_t)64 << 20)

struct vmconf {
	char imgdir[PATH_MAX];
	char append[1024];
	char ready_command[512];
	int cpus, memory_mb, network, display;
	const char *accel;
};

struct qemu_env {
	char dir[PATH_MAX];
	char disk[PATH_MAX];
	pid_t pid;
	int status, exited;
	struct qmp qmp;
	struct qga qga;
	int display, screen_w, screen_h;
	double scale;
	int paused;
	double boot_s;
	int kvm;			/* started under KVM: its sign of life is watched */
	int no_life;			/* ... and it showed none */
	int fake_hang;			/* ENGI_QEMU_FAKE_KVM=hang: never continue the guest */
	char workdir[ENV_PATH_MAX + 1]; /* the agent's working folder in the guest */
	struct backend_folders folders; /* the task's folders, made at start */
	struct vcpu_set vcpus;		/* the vCPU threads, for paced input */
	int vcpus_known;		/* 1 read, -1 not to be had (input unpaced) */
};

/* ---- small helpers ---- */

static const char *qemu_binary(void)
{
	const char *b = getenv("ENGI_QEMU");
	return b && *b ? b : "qemu-system-x86_64";
}

static const char *qemu_img_binary(void)
{
	const char *b = getenv("ENGI_QEMU_IMG");
	return b && *b ? b : "qemu-img";
}

struct argv {
	char *v[96];
	int n;
	char store[16384];
	size_t used;
};

static void arg(struct argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void arg(struct argv *a, const char *fmt, ...)
{
	if (a->n >= (int)(sizeof(a->v) / sizeof(a->v[0])) - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(a->store + a->used, sizeof(a->store) - a->used, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof(a->store) - a->used)
		return;
	a->v[a->n++] = a->store + a->used;
	a->v[a->n] = NULL;
	a->used += (size_t)w + 1;
}

/* The options every QEMU of this backend starts with, the accelerator
 * probe's and a guest's: no default devices nor user configuration, the
 * machine, the accelerator, the memory, no display window; threads named
 * ("CPU 0/KVM", "CPU 0/TCG") so that the vCPUs can be told apart. */
static void qemu_args(struct argv *a, const char *machine, const char *accel, int memory_mb)
{
	arg(a, "%s", qemu_binary());
	arg(a, "-nodefaults");
	arg(a, "-no-user-config");
	arg(a, "-machine");
	arg(a, "%s", machine);
	arg(a, "-accel");
	arg(a, "%s", accel);
	arg(a, "-m");
	arg(a, "%d", memory_mb);
	arg(a, "-display");
	arg(a, "none");
	arg(a, "-name");
	arg(a, "engisweep,debug-threads=on");
}

/* Starts a's QEMU in a session of its own (killed as a group), its output
 * to log_path. */
static pid_t qemu_spawn(struct argv *a, const char *log_path, struct engi_error *err)
{
	struct spawn_opts so = {.path = a->v[0],
				.search = 1,
				.argv = a->v,
				.out_fd = -1,
				.out_path = log_path,
				.cwd_fd = -1,
				.group = SPAWN_SESSION};
	return child_spawn(&so, err);
}

/* Runs argv to completion with output to log_path (or /dev/null). */
static int run_tool(char *const argv[], const char *log_path, struct engi_error *err)
{
	struct spawn_opts so = {.path = argv[0],
				.search = 1,
				.argv = argv,
				.out_fd = -1,
				.out_path = log_path,
				.cwd_fd = -1};
	pid_t pid = child_spawn(&so, err);
	if (pid < 0)
		return (int)pid;
	int st;
	if (child_wait(pid, &st) < 0)
		RAISE(err, ENGI_EENV, "waiting for %s: %s", argv[0], strerror(errno));
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		RAISE(err, ENGI_EENV, "%s failed (%s %d)%s", argv[0],
		      WIFEXITED(st) ? "exit" : "signal",
		      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
		      WIFEXITED(st) && WEXITSTATUS(st) == 127
			  ? ": is it installed (apt-get install "
			    "qemu-utils qemu-system-x86)?"
			  : "");
	return 0;
}

/* ---- the accelerator ----
 *
 * Machines of our kind differ: some have no /dev/kvm, on some QEMU aborts
 * under KVM, and on some /dev/kvm opens, KVM_CREATE_VM works and QEMU
 * starts, but a vCPU never runs guest code. Only a guest that ran tells
 * them apart, so the probe boots a 64 KiB firmware of our own at the reset
 * vector that writes a marker to the serial port and leaves through
 * isa-debug-exit (QEMU exits with status 0x10 << 1 | 1); a working KVM
 * does that in about 0.1 s. KVM is chosen when the marker is there within
 * ENGI_QEMU_PROBE_S seconds (default 5), TCG otherwise. Some hosts run the
 * probe but not a Linux guest: a guest that still shows no sign of life
 * under KVM within ENGI_QEMU_LIFE_S (default 20 for a cold boot, 8 for a
 * restore) is started again under TCG, the process keeps TCG from then on,
 * and a marker in the image cache (kvm-no-life-<host>, holding the boot id)
 * makes later processes on that host choose TCG until it reboots.
 *
 * Test-only overrides: ENGI_QEMU_PROBE_ROM names another firmware file
 * (one that never reports, to exercise the deadline), ENGI_QEMU_PROBE_ACCEL
 * the accelerator the probe itself uses, and ENGI_QEMU_FAKE_KVM=hang|abort
 * makes the probe pass and every "KVM" guest behave like those hosts' (TCG
 * started with -S and never continued; a QEMU that exits at once).
 * ENGI_QEMU_ACCEL=kvm|tcg forces the choice. */

#define PROBE_EXIT_STATUS 33 /* isa-debug-exit: (0x10 << 1) | 1 */
#define PROBE_MARK	  "engisweep-probe-ok"

static pthread_mutex_t accel_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *accel_chosen; /* "kvm" or "tcg" once decided */
static char accel_why[256];

static double env_seconds(const char *name, double dflt)
{
	const char *v = getenv(name);
	char *end;
	double d = v && *v ? strtod(v, &end) : dflt;
	return v && *v && (*end || !(d > 0) || d > 3600) ? dflt : d;
}

static const char *fake_kvm(void)
{
	const char *f = getenv("ENGI_QEMU_FAKE_KVM");
	return f && (!strcmp(f, "hang") || !strcmp(f, "abort")) ? f : NULL;
}

/* The probe firmware: real-mode code at 0xFFFF0 (the reset vector). */
static int write_probe_rom(const char *path, struct engi_error *err)
{
	static unsigned char rom[65536];
	static const unsigned char code[] = {
	    0xBA, 0xF8, 0x03, /* mov dx, 0x3f8 */
	    0xBE, 0x00, 0xFF, /* mov si, 0xff00 (the marker) */
	    0x2E, 0xAC,	      /* lodsb cs: */
	    0x84, 0xC0,	      /* test al, al */
	    0x74, 0x03,	      /* jz +3 */
	    0xEE,	      /* out dx, al */
	    0xEB, 0xF7,	      /* jmp back to lodsb */
	    0xB0, 0x10,	      /* mov al, 0x10 */
	    0xE6, 0xF4,	      /* out 0xf4, al: isa-debug-exit */
	    0xF4,	      /* hlt */
	    0xEB, 0xFD,	      /* jmp hlt */
	};
	memset(rom, 0xF4, sizeof(rom));
	/* the reset vector jumps to the code at 0xF000:0xFE00 */
	memcpy(rom + 0xFE00, code, sizeof(code));
	snprintf((char *)rom + 0xFF00, 64, "%s\n", PROBE_MARK);
	static const unsigned char reset[] = {0xEA, 0x00, 0xFE, 0x00, 0xF0}; /* jmp far */
	memcpy(rom + 0xFFF0, reset, sizeof(reset));
	return fs_write_file_atomic(path, rom, sizeof(rom), err);
}

/* Runs the probe guest; 1 when it reported, 0 otherwise (why says how). */
static int kvm_probe(char *why, size_t n)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, n, "/dev/kvm cannot be opened (%s)", strerror(errno));
		return 0;
	}
	int ok = ioctl(fd, KVM_GET_API_VERSION, 0) == KVM_API_VERSION;
	int vm = ok ? ioctl(fd, KVM_CREATE_VM, 0) : -1;
	if (vm >= 0)
		close(vm);
	close(fd);
	if (!ok || vm < 0) {
		snprintf(why, n, "/dev/kvm cannot create a VM");
		return 0;
	}
	const char *fake = fake_kvm();
	if (fake) {
		snprintf(why, n, "test override ENGI_QEMU_FAKE_KVM=%s", fake);
		return 1;
	}
	const char *t = getenv("TMPDIR");
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/engiprobe.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/engiprobe.XXXXXX");
		if (!mkdtemp(dir)) {
			snprintf(why, n, "cannot create a folder for the probe: %s",
				 strerror(errno));
			return 0;
		}
	}
	char rom[PATH_MAX], console[PATH_MAX], logp[PATH_MAX];
	snprintf(rom, sizeof(rom), "%s/probe.rom", dir);
	snprintf(console, sizeof(console), "%s/console", dir);
	snprintf(logp, sizeof(logp), "%s/qemu.log", dir);
	struct engi_error e;
	engi_error_init(&e);
	const char *rom_override = getenv("ENGI_QEMU_PROBE_ROM");
	int rc = rom_override && *rom_override ? 0 : write_probe_rom(rom, &e);
	const char *accel = getenv("ENGI_QEMU_PROBE_ACCEL");
	accel = accel && !strcmp(accel, "tcg") ? "tcg" : "kvm";
	double limit = env_seconds("ENGI_QEMU_PROBE_S", 5.0);
	struct argv a = {0};
	qemu_args(&a, "pc", accel, 16);
	arg(&a, "-bios");
	arg(&a, "%s", rom_override && *rom_override ? rom_override : rom);
	arg(&a, "-serial");
	arg(&a, "file:%s", console);
	arg(&a, "-device");
	arg(&a, "isa-debug-exit,iobase=0xf4,iosize=0x04");
	double t0 = clk_now_mono();
	pid_t pid = -1;
	if (rc == 0)
		pid = qemu_spawn(&a, logp, &e);
	int st = 0, exited = 0;
	while (pid > 0 && !exited && clk_now_mono() - t0 < limit) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			exited = 1;
		else
			clk_sleep_seconds(0.01);
	}
	if (pid > 0 && !exited) {
		kill(-pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	double took = clk_now_mono() - t0;
	char *out = NULL;
	size_t len = 0;
	int marked = fs_read_file(console, 4096, &out, &len, NULL) == 0 && len &&
		     memmem(out, len, PROBE_MARK, strlen(PROBE_MARK));
	engi_free(out);
	char tail[200] = "";
	if (exited && !marked) {
		FILE *f = fopen(logp, "r");
		char line[200];
		while (f && fgets(line, sizeof(line), f))
			if (line[0] != '\n' && !strstr(line, "warning:"))
				snprintf(tail, sizeof(tail), ": %.*s", (int)strcspn(line, "\n"),
					 line);
		if (f)
			fclose(f);
	}
	fs_rm_rf(dir, NULL);
	if (rc < 0 || pid < 0) {
		snprintf(why, n, "the KVM probe could not start: %s", e.msg);
		return 0;
	}
	if (!exited) {
		/* the deadline, not the time measured (a loaded host overshoots) */
		snprintf(why, n, "the probe guest showed no sign of life under %s in %.1f s", accel,
			 limit);
		return 0;
	}
	if (!marked || !WIFEXITED(st) || WEXITSTATUS(st) != PROBE_EXIT_STATUS) {
		snprintf(why, n, "QEMU under %s %s %d before the probe guest reported%s", accel,
			 WIFSIGNALED(st) ? "died of signal" : "exited with status",
			 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), tail);
		return 0;
	}
	snprintf(why, n, "the probe guest ran under %s and reported in %.2f s", accel, took);
	return 1;
}

static int accel_quiet; /* inspect prints the choice itself */

static void accel_note(const char *chosen, const char *why)
{
	accel_chosen = chosen;
	snprintf(accel_why, sizeof(accel_why), "%s", why);
	if (!accel_quiet)
		fprintf(stderr, "engisweep: qemu: accelerator %s: %s\n", chosen, why);
}

/* Where a guest that showed no sign of life under KVM is remembered for
 * the host's current boot: <image cache>/kvm-no-life-<host>, holding the
 * boot id (other nodes sharing the cache have their own file). */
static int no_life_marker(char *path, size_t n, char *boot, size_t bn)
{
	char dir[PATH_MAX], host[128] = "host";
	struct engi_error e;
	engi_error_init(&e);
	if (image_cache_dir(dir, sizeof(dir), &e) < 0)
		return -1;
	gethostname(host, sizeof(host) - 1);
	for (char *c = host; *c; c++)
		if (*c == '/')
			*c = '_';
	if (snprintf(path, n, "%s/kvm-no-life-%s", dir, host) >= (int)n)
		return -1;
	/* a /proc file has no size to read by: one line */
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	char line[80] = "";
	int ok = f && fgets(line, sizeof(line), f);
	if (f)
		fclose(f);
	line[strcspn(line, "\n")] = '\0';
	if (!ok || strlen(line) < 16)
		return -1;
	snprintf(boot, bn, "%s", line);
	return 0;
}

static int kvm_known_lifeless(void)
{
	char p[PATH_MAX], boot[64];
	/* the test overrides probe afresh */
	if (getenv("ENGI_QEMU_FAKE_KVM") || getenv("ENGI_QEMU_PROBE_ROM") ||
	    getenv("ENGI_QEMU_PROBE_ACCEL") || no_life_marker(p, sizeof(p), boot, sizeof(boot)) < 0)
		return 0;
	char *text = NULL;
	size_t len = 0;
	int known = fs_read_file(p, 256, &text, &len, NULL) == 0 && len >= strlen(boot) &&
		    !strncmp(text, boot, strlen(boot));
	engi_free(text);
	return known;
}

static const char *pick_accel(void)
{
	const char *f = getenv("ENGI_QEMU_ACCEL");
	if (f && (!strcmp(f, "kvm") || !strcmp(f, "tcg")))
		return f;
	pthread_mutex_lock(&accel_lock);
	if (!accel_chosen && kvm_known_lifeless()) {
		accel_note("tcg",
			   "a guest under KVM showed no sign of life earlier since this host "
			   "booted (kvm-no-life marker in the image cache)");
	} else if (!accel_chosen) {
		char why[256];
		int ok = kvm_probe(why, sizeof(why));
		accel_note(ok ? "kvm" : "tcg", why);
	}
	const char *r = accel_chosen;
	pthread_mutex_unlock(&accel_lock);
	return r;
}

/* A guest showed no sign of life under KVM: TCG for the rest of the process. */
static void kvm_give_up(const char *why)
{
	pthread_mutex_lock(&accel_lock);
	if (!accel_chosen || !strcmp(accel_chosen, "kvm")) {
		char w[256];
		snprintf(w, sizeof(w), "a guest under KVM %s; TCG from now on", why);
		accel_note("tcg", w);
		/* and for the next processes on this host until it reboots */
		char p[PATH_MAX], boot[64];
		if (!getenv("ENGI_QEMU_FAKE_KVM") &&
		    no_life_marker(p, sizeof(p), boot, sizeof(boot)) == 0) {
			char line[128];
			int n = snprintf(line, sizeof(line), "%s\n", boot);
			fs_mkdir_parents(p, 0755, NULL);
			fs_write_file_atomic(p, line, (size_t)n, NULL);
		}
	}
	pthread_mutex_unlock(&accel_lock);
}

const char *qemu_accel(char *why, size_t n)
{
	const char *f = getenv("ENGI_QEMU_ACCEL");
	if (f && (!strcmp(f, "kvm") || !strcmp(f, "tcg"))) {
		snprintf(why, n, "forced by ENGI_QEMU_ACCEL");
		return f;
	}
	accel_quiet = 1;
	const char *r = pick_accel();
	accel_quiet = 0;
	pthread_mutex_lock(&accel_lock);
	snprintf(why, n, "%s", accel_why);
	pthread_mutex_unlock(&accel_lock);
	return r;
}

static int make_overlay(const char *base, const char *overlay, struct engi_error *err)
{
	char *argv[] = {(char *)qemu_img_binary(),
			"create",
			"-q",
			"-f",
			"qcow2",
			"-F",
			"qcow2",
			"-b",
			(char *)base,
			(char *)overlay,
			NULL};
	unlink(overlay);
	return run_tool(argv, NULL, err);
}

static int load_conf(const char *image, const struct env_spec *spec, struct vmconf *c,
		     struct engi_error *err)
{
	memset(c, 0, sizeof(*c));
	TRY(image_find(image, c->imgdir, sizeof(c->imgdir), err));
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/image.json", c->imgdir);
	json_error_t je;
	json_t *j = json_load_file(p, 0, &je);
	if (!j)
		RAISE(err, ENGI_EPARSE, "'%s' line %d: %s", p, je.line, je.text);
	const char *append = json_string_value(json_object_get(j, "append"));
	const char *ready = json_string_value(json_object_get(j, "ready_command"));
	json_int_t mem = json_integer_value(json_object_get(j, "memory_mb"));
	snprintf(c->append, sizeof(c->append), "%s", append ? append : "console=ttyS0");
	snprintf(c->ready_command, sizeof(c->ready_command), "%s", ready ? ready : "");
	c->display = json_is_true(json_object_get(j, "display"));
	json_decref(j);
	c->cpus = spec && spec->cpus > 0 ? spec->cpus : 1;
	c->memory_mb = spec && spec->memory_mb > 0 ? spec->memory_mb : (int)(mem > 0 ? mem : 512);
	c->network = spec ? spec->network : 0;
	c->accel = pick_accel();
	return 0;
}

/* ---- the QEMU process ---- */

enum restore { RESTORE_COLD, RESTORE_INCOMING, RESTORE_LOADVM };

static int launch(struct qemu_env *q, const struct vmconf *c, enum restore how, const char *state,
		  struct engi_error *err)
{
	q->kvm = !strcmp(c->accel, "kvm");
	const char *fake = q->kvm ? fake_kvm() : NULL;
	q->fake_hang = fake && !strcmp(fake, "hang");
	const char *accel = c->accel;
	if (fake)
		/* test-only: a vCPU that never runs, or a QEMU that aborts */
		accel = q->fake_hang ? "tcg" : "engisweep-fake-kvm-abort";
	struct argv a = {0};
	qemu_args(&a, "q35", accel, c->memory_mb);
	if (q->fake_hang)
		arg(&a, "-S");
	if (q->kvm && !fake) {
		arg(&a, "-cpu");
		arg(&a, "host");
	}
	arg(&a, "-smp");
	arg(&a, "%d", c->cpus);
	arg(&a, "-kernel");
	arg(&a, "%s/vmlinuz", c->imgdir);
	arg(&a, "-initrd");
	arg(&a, "%s/initrd.img", c->imgdir);
	arg(&a, "-append");
	arg(&a, "%s", c->append);
	arg(&a, "-drive");
	arg(&a, "file=%s,if=none,id=d0,format=qcow2", q->disk);
	arg(&a, "-device");
	arg(&a, "virtio-blk-pci,drive=d0");
	arg(&a, "-device");
	arg(&a, "virtio-serial-pci");
	arg(&a, "-chardev");
	arg(&a, "socket,id=qga,path=%s/qga.sock,server=on,wait=off", q->dir);
	arg(&a, "-device");
	arg(&a, "virtserialport,chardev=qga,name=org.qemu.guest_agent.0");
	arg(&a, "-qmp");
	arg(&a, "unix:%s/qmp.sock,server=on,wait=off", q->dir);
	arg(&a, "-vga");
	arg(&a, "%s", c->display ? "std" : "none");
	if (c->display) {
		arg(&a, "-device");
		arg(&a, "qemu-xhci");
		arg(&a, "-device");
		arg(&a, "usb-tablet");
	}
	arg(&a, "-nic");
	/* user-mode NAT without host forwards; docs/virtual-machines.md says
	 * what it reaches */
	arg(&a, "%s", c->network ? "user,model=virtio-net-pci" : "none");
	arg(&a, "-serial");
	arg(&a, "file:%s/console.log", q->dir);
	if (how == RESTORE_INCOMING) {
		arg(&a, "-incoming");
		arg(&a, "exec:cat '%s'", state);
	} else if (how == RESTORE_LOADVM) {
		arg(&a, "-loadvm");
		arg(&a, "ready");
	}
	if (a.used >= sizeof(a.store) - 256)
		RAISE(err, ENGI_EINVALID, "QEMU command line too long (paths under '%s')",
		      c->imgdir);

	char logp[PATH_MAX];
	snprintf(logp, sizeof(logp), "%s/qemu.log", q->dir);
	if (getenv("ENGI_QEMU_DEBUG")) {
		fprintf(stderr, "qemu:");
		for (int i = 0; i < a.n; i++)
			fprintf(stderr, " %s", a.v[i]);
		fprintf(stderr, "\n");
	}
	pid_t pid = qemu_spawn(&a, logp, err);
	if (pid < 0)
		return (int)pid;
	q->pid = pid;
	q->exited = 0;
	return 0;
}

/* Non-zero when QEMU has exited; reaps it once. */
static int vm_gone(struct qemu_env *q)
{
	if (q->pid <= 0)
		return 1;
	if (!q->exited && waitpid(q->pid, &q->status, WNOHANG) == q->pid)
		q->exited = 1;
	return q->exited;
}

/* The last non-empty line of QEMU's own log, for messages. */
static void log_tail(const struct qemu_env *q, char *buf, size_t n)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/qemu.log", q->dir);
	fs_file_last_line(p, buf, n);
}

/* Turns a failure into an environment failure when QEMU is gone, saying
 * how it ended. */
static int env_fail(struct qemu_env *q, int rc, struct engi_error *err)
{
	/* a broken connection usually means QEMU is on its way out */
	double until = clk_now_mono() + (rc == ENGI_EENV ? 1.0 : 0.0);
	while (!vm_gone(q) && clk_now_mono() < until)
		clk_sleep_seconds(0.01);
	if (!vm_gone(q))
		return rc;
	char tail[512];
	log_tail(q, tail, sizeof(tail));
	int st = q->status;
	engi_error_prefix(err, "QEMU exited (%s %d)%s%s", WIFSIGNALED(st) ? "signal" : "status",
			  WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), tail[0] ? ": " : "",
			  tail);
	if (err)
		err->code = ENGI_EENV;
	return ENGI_EENV;
}

static void vm_kill(struct qemu_env *q)
{
	if (q->pid <= 0)
		return;
	if (!vm_gone(q) && q->qmp.ch.fd >= 0) {
		struct engi_error e;
		engi_error_init(&e);
		/* wait for quit's reply, or QEMU may drop it */
		qmp_call(&q->qmp, "quit", NULL, 2, NULL, &e);
	}
	static const int sigs[] = {0, SIGTERM, SIGKILL};
	for (int s = 0; s < 3 && !vm_gone(q); s++) {
		if (sigs[s])
			kill(-q->pid, sigs[s]);
		double until = clk_now_mono() + (s == 2 ? 10.0 : 2.0);
		while (!vm_gone(q) && clk_now_mono() < until)
			clk_sleep_seconds(0.005);
	}
	if (!vm_gone(q)) {
		kill(-q->pid, SIGKILL);
		waitpid(q->pid, &q->status, 0);
	}
	kill(-q->pid, SIGKILL); /* anything QEMU started (exec:cat) */
	q->pid = 0;
}

static int make_private_dir(struct qemu_env *q, struct engi_error *err)
{
	const char *t = getenv("TMPDIR");
	/* the socket paths inside must fit in sun_path (108 bytes) */
	if (!t || !*t || strlen(t) + sizeof("/engiq.XXXXXX/qmp.sock") > 107)
		t = "/tmp";
	snprintf(q->dir, sizeof(q->dir), "%s/engiq.XXXXXX", t);
	if (!mkdtemp(q->dir)) {
		int e = errno;
		q->dir[0] = '\0';
		RAISE(err, ENGI_EENV, "cannot create a private folder in '%s': %s", t, strerror(e));
	}
	chmod(q->dir, 0700);
	return 0;
}

static void cleanup(struct qemu_env *q)
{
	vm_kill(q);
	qmp_close(&q->qmp);
	qga_close(&q->qga);
	if (q->dir[0])
		fs_rm_rf(q->dir, NULL);
	if (q->disk[0])
		unlink(q->disk);
	q->dir[0] = q->disk[0] = '\0';
}

/* Polls a migration (what names it in messages)
 * until QEMU says it completed; a status not there yet means not started. */
static int wait_migration(struct qemu_env *q, const char *what, double deadline,
			  struct engi_error *err)
{
	for (;;) {
		json_t *ret;
		TRY(qmp_call(&q->qmp, "query-migrate", NULL, 30, &ret, err));
		const char *st = json_string_value(json_object_get(ret, "status"));
		char why[64];
		snprintf(why, sizeof(why), "%s", st ? st : "");
		json_decref(ret);
		if (!strcmp(why, "completed"))
			return 0;
		if (!strcmp(why, "failed") || !strcmp(why, "cancelled"))
			RAISE(err, ENGI_EENV, "%s: migration %s", what, why);
		if (clk_now_mono() > deadline || vm_gone(q))
			RAISE(err, ENGI_EENV, "%s did not finish in time", what);
		clk_sleep_seconds(0.005);
	}
}

/* The state was saved from a stopped guest, and QEMU keeps a guest paused
 * when its source was: wait for the stream to load, then continue. */
static int finish_incoming(struct qemu_env *q, double deadline, struct engi_error *err)
{
	TRY(wait_migration(q, "loading the saved memory state", deadline, err));
	if (q->fake_hang)
		return 0;
	return qmp_call(&q->qmp, "cont", NULL, 30, NULL, err);
}

/* Bytes the guest has written to its serial console. */
static long long console_bytes(const struct qemu_env *q)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/console.log", q->dir);
	struct stat st;
	return stat(p, &st) == 0 ? (long long)st.st_size : 0;
}

/* Connects QMP and waits for the guest agent. Under KVM the guest must show
 * a sign of life (console output on a cold boot, the agent's answer) within
 * ENGI_QEMU_LIFE_S, or QEMU must not have died before it did: otherwise
 * no_life is set and the caller starts it again under TCG. */
static int connect_vm(struct qemu_env *q, enum restore how, double timeout_s,
		      struct engi_error *err)
{
	double t0 = clk_now_mono();
	double deadline = t0 + timeout_s;
	double life_s =
	    q->kvm ? env_seconds("ENGI_QEMU_LIFE_S", how == RESTORE_COLD ? 20.0 : 8.0) : 0;
	int alive = !q->kvm;
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/qmp.sock", q->dir);
	/* in short tries, so that a QEMU that died (an aborting KVM) is seen at
	 * once rather than at the deadline */
	int rc;
	struct engi_error oe;
	for (;;) {
		engi_error_init(&oe);
		rc = qmp_open(&q->qmp, p, fmin(deadline, clk_now_mono() + 0.5), &oe);
		if (rc == 0 || vm_gone(q) || clk_now_mono() >= deadline)
			break;
		qchan_close(&q->qmp.ch);
		clk_sleep_seconds(0.02);
	}
	if (rc < 0)
		engi_raise(err, rc, "%s", oe.msg);
	if (rc == 0 && how == RESTORE_INCOMING)
		rc = finish_incoming(q, deadline, err);
	if (rc < 0) {
		rc = env_fail(q, rc == ENGI_ETIMEOUT ? ENGI_EENV : rc, err);
		q->no_life = !alive && vm_gone(q);
		return rc;
	}
	snprintf(p, sizeof(p), "%s/qga.sock", q->dir);
	for (;;) {
		double until = deadline;
		if (!alive && t0 + life_s < until)
			until = t0 + life_s;
		rc = qga_open(&q->qga, p, until, err);
		if (rc == 0)
			return 0;
		if (vm_gone(q))
			break;
		if (!alive && clk_now_mono() >= t0 + life_s) {
			if (how == RESTORE_COLD && console_bytes(q) > 0) {
				alive = 1;
			} else {
				q->no_life = 1;
				engi_error_init(err);
				RAISE(err, ENGI_EENV, "showed no sign of life in %.0f s", life_s);
			}
		}
		if (clk_now_mono() >= deadline)
			break;
		qga_close(&q->qga); /* the connection broke: try again */
		clk_sleep_seconds(0.05);
	}
	rc = env_fail(q, ENGI_EENV, err);
	if (!alive && vm_gone(q)) {
		q->no_life = 1;
		return rc;
	}
	engi_error_prefix(err, "guest did not become ready in %.0f s", timeout_s);
	return rc;
}

/* Polls the image's readiness command (e.g. the X session is up). */
static int wait_ready_command(struct qemu_env *q, const char *cmd, double deadline,
			      struct engi_error *err)
{
	while (cmd[0]) {
		int code = qga_run(&q->qga, cmd, 30, err);
		if (code < 0)
			return env_fail(q, code, err);
		if (code == 0)
			return 0;
		if (clk_now_mono() > deadline)
			RAISE(err, ENGI_EENV,
			      "the image's ready_command did not succeed in time: %s", cmd);
		clk_sleep_seconds(0.5);
	}
	return 0;
}

static int dump_screen(struct qemu_env *q, char **ppm, size_t *len, struct engi_error *err);

/* A display image is ready when its screen shows something and has stopped
 * changing: two identical, not all-black dumps a second apart (an X
 * session under TCG paints seconds after its processes start). */
static int wait_screen_settled(struct qemu_env *q, double deadline, struct engi_error *err)
{
	char *prev = NULL;
	size_t prev_len = 0;
	for (;;) {
		char *ppm;
		size_t n;
		int rc = dump_screen(q, &ppm, &n, err);
		if (rc < 0) {
			engi_free(prev);
			return rc;
		}
		int lit = 0;
		for (size_t i = n > 64 ? 64 : 0; i < n && !lit; i++)
			lit = (unsigned char)ppm[i] > 16;
		int same = prev && prev_len == n && !memcmp(prev, ppm, n);
		engi_free(prev);
		prev = ppm;
		prev_len = n;
		if (lit && same)
			break;
		if (clk_now_mono() > deadline) {
			engi_free(prev);
			RAISE(err, ENGI_EENV, "the guest's screen did not settle in time");
		}
		clk_sleep_seconds(1.0);
	}
	engi_free(prev);
	return 0;
}

/* ---- ready states ---- */

static void ready_key(const struct vmconf *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s-c%d-m%d%s", c->accel, c->cpus, c->memory_mb, c->network ? "-net" : "");
}

static int ready_paths(const struct vmconf *c, char *dir, size_t n, struct engi_error *err)
{
	char key[64];
	ready_key(c, key, sizeof(key));
	if (snprintf(dir, n, "%s/ready/%s", c->imgdir, key) >= (int)n)
		RAISE(err, ENGI_EINVALID, "image folder path too long");
	return 0;
}

static int ready_complete(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/state", dir);
	if (!fs_path_is_file(p))
		return 0;
	snprintf(p, sizeof(p), "%s/disk.qcow2", dir);
	return fs_path_is_file(p);
}

/* Boots the image cold, waits for the agent (and the ready command), saves
 * an internal snapshot "ready" in the disk and a migration stream "state". */
static int ready_save(const struct vmconf *c, const char *tmp, FILE *log, struct engi_error *err)
{
	struct qemu_env q;
	memset(&q, 0, sizeof(q));
	qmp_init(&q.qmp);
	qga_init(&q.qga);
	char base[PATH_MAX];
	snprintf(base, sizeof(base), "%s/disk.qcow2", c->imgdir);
	snprintf(q.disk, sizeof(q.disk), "%s/disk.qcow2", tmp);
	double t0 = clk_now_mono();
	int rc = make_private_dir(&q, err);
	if (rc == 0)
		rc = make_overlay(base, q.disk, err);
	if (rc == 0)
		rc = launch(&q, c, RESTORE_COLD, NULL, err);
	if (rc == 0)
		rc = connect_vm(&q, RESTORE_COLD, COLD_BOOT_TIMEOUT_S, err);
	if (rc == 0)
		rc = wait_ready_command(&q, c->ready_command, t0 + COLD_BOOT_TIMEOUT_S, err);
	q.display = c->display;
	if (rc == 0 && c->display)
		rc = wait_screen_settled(&q, t0 + COLD_BOOT_TIMEOUT_S, err);
	if (rc == 0 && log)
		fprintf(log, "ready state: guest answered %.1f s after a cold boot; saving\n",
			clk_now_mono() - t0);
	if (rc == 0) {
		/* smaller state: clean page cache */
		qga_run(&q.qga, "sync; echo 3 > /proc/sys/vm/drop_caches", 30, err);
		engi_error_init(err);
		rc = qmp_call(&q.qmp, "stop", NULL, 30, NULL, err);
	}
	json_t *ret = NULL;
	if (rc == 0)
		rc = qmp_call(&q.qmp, "human-monitor-command",
			      json_pack("{s:s}", "command-line", "savevm ready"), 300, &ret, err);
	if (rc == 0 && json_string_length(ret) > 0)
		rc = engi_raise(err, ENGI_EENV, "savevm: %s", json_string_value(ret));
	json_decref(ret);
	char uri[PATH_MAX + 32];
	snprintf(uri, sizeof(uri), "exec:cat > '%s/state'", tmp);
	if (rc == 0)
		rc = qmp_call(&q.qmp, "migrate", json_pack("{s:s}", "uri", uri), 30, NULL, err);
	if (rc == 0)
		rc = wait_migration(&q, "saving the memory state", t0 + COLD_BOOT_TIMEOUT_S, err);
	if (rc < 0)
		rc = env_fail(&q, rc, err);
	if (rc < 0 && q.no_life)
		kvm_give_up(err && err->msg[0] ? err->msg : "showed no sign of life");
	q.disk[0] = '\0'; /* keep it */
	cleanup(&q);
	if (rc == 0) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/disk.qcow2", tmp);
		chmod(p, 0444);
		if (log)
			fprintf(log, "ready state saved in %.1f s\n", clk_now_mono() - t0);
	}
	return rc;
}

static int ready_ensure(const struct vmconf *c, char *dir, size_t n, FILE *log,
			struct engi_error *err)
{
	TRY(ready_paths(c, dir, n, err));
	if (ready_complete(dir))
		return 0;
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/ready", c->imgdir);
	TRY(fs_mkdir_p(p, 0755, err));
	snprintf(p, sizeof(p), "%s.lock", dir);
	int lock = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock < 0)
		RAISE(err, ENGI_EENV, "cannot open lock '%s': %s", p, strerror(errno));
	if (flock(lock, LOCK_EX) < 0) {
		close(lock);
		RAISE(err, ENGI_EENV, "cannot lock '%s': %s", p, strerror(errno));
	}
	int rc = 0;
	if (!ready_complete(dir)) {
		char tmp[PATH_MAX];
		snprintf(tmp, sizeof(tmp), "%s.tmp", dir);
		rc = fs_rm_rf(tmp, err);
		if (rc == 0)
			rc = fs_mkdir_p(tmp, 0755, err);
		if (rc == 0)
			rc = ready_save(c, tmp, log, err);
		if (rc == 0 && rename(tmp, dir) < 0)
			rc = engi_raise(err, ENGI_EENV, "cannot rename '%s': %s", tmp,
					strerror(errno));
		if (rc < 0) {
			fs_rm_rf(tmp, NULL);
			engi_error_prefix(err, "saving the ready state of '%s'", c->imgdir);
		}
	}
	close(lock);
	return rc;
}

int qemu_prepare(const char *image, const struct env_spec *spec, FILE *log, struct engi_error *err)
{
	struct vmconf c;
	int rc = load_conf(image, spec, &c, err);
	if (rc == ENGI_ENOTFOUND && !getenv("ENGI_QEMU_NO_BUILD")) {
		/* first use: build it (minutes; the cache keeps it) */
		fprintf(log ? log : stderr,
			"engisweep: image '%s' is not built yet; building it now\n", image);
		engi_error_init(err);
		TRY(image_build(image, 0, log ? log : stderr, err));
		rc = load_conf(image, spec, &c, err);
	}
	if (rc < 0)
		return rc;
	char dir[PATH_MAX];
	rc = ready_ensure(&c, dir, sizeof(dir), log, err);
	if (rc < 0 && !strcmp(c.accel, "kvm") && strcmp(pick_accel(), "kvm")) {
		/* no sign of life under KVM: the same under TCG */
		engi_error_init(err);
		c.accel = pick_accel();
		rc = ready_ensure(&c, dir, sizeof(dir), log, err);
	}
	return rc;
}

static enum restore restore_mode(void)
{
	const char *m = getenv("ENGI_QEMU_RESTORE");
	if (m && !strcmp(m, "loadvm"))
		return RESTORE_LOADVM;
	if (m && !strcmp(m, "cold"))
		return RESTORE_COLD;
	return RESTORE_INCOMING;
}

/* ---- backend ops ---- */

/* The task's own working folder (an absolute guest path, checked by the
 * loader: no quote can reach the shell) made in the guest. */
static int make_workdir(struct qemu_env *q, struct engi_error *err)
{
	char script[2 * ENV_PATH_MAX];
	snprintf(script, sizeof(script), "mkdir -p -- '%s'", q->workdir);
	int rc = qga_run(&q->qga, script, 30, err);
	if (rc < 0)
		return rc;
	if (rc != 0)
		RAISE(err, ENGI_EENV, "cannot make the working folder '%s' in the guest (exit %d)",
		      q->workdir, rc);
	return 0;
}

/* The task's folders (checked by the loader and backend_folders_copy: no
 * quote can reach the shell) made in the guest, one command for all. */
static int make_folders(struct qemu_env *q, struct engi_error *err)
{
	if (!q->folders.n)
		return 0;
	char script[BACKEND_FOLDERS_MAX * (BACKEND_FOLDER_MAX + 3) + 16] = "mkdir -p --";
	for (size_t i = 0; i < q->folders.n; i++) {
		strcat(script, " '");
		strcat(script, q->folders.path[i]);
		strcat(script, "'");
	}
	int rc = qga_run(&q->qga, script, 30, err);
	if (rc < 0)
		return rc;
	if (rc != 0)
		RAISE(err, ENGI_EENV, "cannot make the task's folders in the guest (%s: exit %d)",
		      script + 12, rc);
	return 0;
}

static int set_guest_clock(struct qemu_env *q, struct engi_error *err)
{
	char script[96];
	snprintf(script, sizeof(script), "date -u -s @%lld >/dev/null", (long long)clk_now_wall());
	int code = qga_run(&q->qga, script, 30, err);
	return code < 0 ? code : 0;
}

static int start_once(struct qemu_env *q, const struct env_spec *spec, const char **accel,
		      struct engi_error *err)
{
	qmp_init(&q->qmp);
	qga_init(&q->qga);
	TRY(backend_folders_copy(&q->folders, spec, err));
	const char *image = spec->image && strcmp(spec->image, "host") ? spec->image : "tiny";
	struct vmconf c;
	int rc = load_conf(image, spec, &c, err);
	if (rc < 0)
		return rc == ENGI_ENOTFOUND ? rc : ENGI_EENV;
	*accel = c.accel;
	q->display = c.display;
	enum restore how = restore_mode();
	char ready[PATH_MAX], state[PATH_MAX], src[PATH_MAX];
	if (how != RESTORE_COLD)
		TRY(ready_ensure(&c, ready, sizeof(ready), NULL, err));
	TRY(fs_mkdir_p(spec->work_root, 0700, err));
	if (snprintf(q->disk, sizeof(q->disk), "%s/%s.qcow2", spec->work_root, spec->name) >=
	    (int)sizeof(q->disk))
		RAISE(err, ENGI_EINVALID, "work folder path too long: '%s'", spec->work_root);
	double t0 = clk_now_mono();
	rc = make_private_dir(q, err);
	if (rc == 0) {
		if (how == RESTORE_LOADVM) {
			snprintf(src, sizeof(src), "%s/disk.qcow2", ready);
			uint64_t copied;
			unlink(q->disk);
			rc = fs_copy_file_capped(src, q->disk, UINT64_MAX, &copied, err);
			if (rc == 0)
				chmod(q->disk, 0600);
		} else {
			if (how == RESTORE_INCOMING)
				snprintf(src, sizeof(src), "%s/disk.qcow2", ready);
			else
				snprintf(src, sizeof(src), "%s/disk.qcow2", c.imgdir);
			rc = make_overlay(src, q->disk, err);
		}
	}
	snprintf(state, sizeof(state), "%s/state", ready);
	if (rc == 0)
		rc = launch(q, &c, how, state, err);
	if (rc == 0)
		rc = connect_vm(q, how,
				how == RESTORE_COLD ? COLD_BOOT_TIMEOUT_S : RESTORE_TIMEOUT_S, err);
	if (rc == 0 && how == RESTORE_COLD)
		rc = wait_ready_command(q, c.ready_command, t0 + COLD_BOOT_TIMEOUT_S, err);
	if (rc == 0 && how == RESTORE_COLD && c.display)
		rc = wait_screen_settled(q, t0 + COLD_BOOT_TIMEOUT_S, err);
	q->boot_s = clk_now_mono() - t0;
	/* a restored guest's clock is as old as its state */
	if (rc == 0 && how != RESTORE_COLD)
		rc = set_guest_clock(q, err);
	snprintf(q->workdir, sizeof(q->workdir), "%s",
		 spec->workdir ? spec->workdir : GUEST_WORKDIR);
	if (rc == 0 && spec->workdir)
		rc = make_workdir(q, err);
	if (rc == 0)
		rc = make_folders(q, err);
	if (rc < 0 && q->no_life)
		kvm_give_up(err && err->msg[0] ? err->msg : "showed no sign of life");
	if (rc < 0) {
		cleanup(q);
		return rc == ENGI_EINVALID ? rc : ENGI_EENV;
	}
	return 0;
}

static int qemu_start(struct backend_env *env, const struct env_spec *spec, struct engi_error *err)
{
	struct qemu_env *q = env->priv;
	const char *accel = NULL;
	int rc = start_once(q, spec, &accel, err);
	if (rc < 0 && accel && !strcmp(accel, "kvm") && strcmp(pick_accel(), "kvm")) {
		/* no sign of life under KVM: start it again under TCG */
		engi_error_init(err);
		qmp_close(&q->qmp);
		qga_close(&q->qga);
		memset(q, 0, sizeof(*q));
		rc = start_once(q, spec, &accel, err);
	}
	if (rc < 0) {
		/* start_once's early exits leave the channels' buffers */
		qmp_close(&q->qmp);
		qga_close(&q->qga);
	}
	return rc;
}

static void qemu_stop(struct backend_env *env)
{
	cleanup(env->priv);
}

/* An environment path in the guest: relative to the working folder, or
 * absolute inside one of the task's folders, as it is. */
static int guest_path(const struct qemu_env *q, const char *rel, char *buf, size_t n,
		      struct engi_error *err)
{
	if (rel[0] == '/') {
		const char *rest;
		TRY(backend_folders_find(&q->folders, rel, &rest, err));
		if (snprintf(buf, n, "%s", rel) >= (int)n)
			RAISE(err, ENGI_EINVALID, "guest path '%s' is too long", rel);
		return 0;
	}
	TRY(fs_env_path_check(rel, err));
	if (snprintf(buf, n, "%s/%s", q->workdir, rel) >= (int)n)
		RAISE(err, ENGI_EINVALID, "guest path '%s/%s' is too long", q->workdir, rel);
	return 0;
}

static int qemu_exec(struct backend_env *env, const char *command, const struct exec_opts *o,
		     struct exec_result *r, struct engi_error *err)
{
	struct qemu_env *q = env->priv;
	int rc = qga_exec(&q->qga, q->workdir, command, o, r, err);
	return rc < 0 ? env_fail(q, rc, err) : 0;
}

static int qemu_put(struct backend_env *env, const void *data, size_t len, const char *env_path,
		    struct engi_error *err)
{
	struct qemu_env *q = env->priv;
	char p[2 * ENV_PATH_MAX + 4];
	TRY(guest_path(q, env_path, p, sizeof(p), err));
	int rc = qga_put(&q->qga, data, len, p, err);
	return rc < 0 ? env_fail(q, rc, err) : 0;
}

static int qemu_get(struct backend_env *env, const char *env_path, const char *host_path,
		    uint64_t max_bytes, uint64_t *bytes, struct engi_error *err)
{
	struct qemu_env *q = env->priv;
	char p[2 * ENV_PATH_MAX + 4];
	TRY(guest_path(q, env_path, p, sizeof(p), err));
	int rc = qga_get(&q->qga, p, host_path, max_bytes, bytes, err);
	return rc < 0 ? env_fail(q, rc, err) : 0;
}

/* Screen dump as PPM in the private folder; native size noted. */
static int dump_screen(struct qemu_env *q, char **ppm, size_t *len, struct engi_error *err)
{
	if (!q->display)
		RAISE(err, ENGI_ENOTSUP, "this image has no display (use the desktop image)");
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/screen.ppm", q->dir);
	unlink(p);
	int rc = qmp_call(&q->qmp, "screendump", json_pack("{s:s}", "filename", p), 30, NULL, err);
	if (rc < 0)
		return env_fail(q, rc, err);
	rc = fs_read_file(p, SCREEN_CAP, ppm, len, err);
	unlink(p);
	if (rc < 0)
		return rc;
	int w = 0, h = 0;
	if (sscanf(*ppm, "P6 %d %d", &w, &h) == 2 && w > 0 && h > 0) {
		q->screen_w = w;
		q->screen_h = h;
	}
	return 0;
}

static int qemu_screenshot(struct backend_env *env, double scale, unsigned char **png, size_t *len,
			   struct engi_error *err)
{
	struct qemu_env *q = env->priv;
	char *ppm;
	size_t n;
	TRY(dump_screen(q, &ppm, &n, err));
	int w, h;
	int rc = screen_ppm_to_png((unsigned char *)ppm, n, scale, png, len, &w, &h, err);
	engi_free(ppm);
	if (rc == 0)
		q->scale = scale;
	return rc;
}

/* Paced input (vcpu.h): how long one event group may wait for the guest to
 * take it, and all of one action's groups together; past that the rest is
 * sent at the plain pace (a guest that does not run for so long has worse
 * trouble than lost keys). */
#define INPUT_PACE_STEP_S   1.0
#define INPUT_PACE_ACTION_S 20.0

/* The vCPU threads from QMP; a QEMU that does not say (or a stand-in)
 * leaves input unpaced. */
static void find_vcpus(struct qemu_env *q)
{
	struct engi_error e;
	engi_error_init(&e);
	json_t *ret = NULL;
	q->vcpus_known = -1;
	if (qmp_call(&q->qmp, "query-cpus-fast", NULL, 30, &ret, &e) == 0 &&
	    vcpu_set_from_qmp(&q->vcpus, q->pid, ret) == 0)
		q->vcpus_known = 1;
	json_decref(ret);
}

/* Waits until the guest has taken the event group sent after before was
 * read, or INPUT_PACE_STEP_S; returns the seconds waited. */
static double wait_input_taken(struct qemu_env *q, const struct vcpu_sample *before)
{
	double t0 = clk_now_mono(), waited = 0;
	struct vcpu_sample now;
	while (vcpu_sample_read(&q->vcpus, &now) == 0 && !vcpu_input_taken(before, &now) &&
	       (waited = clk_now_mono() - t0) < INPUT_PACE_STEP_S)
		clk_sleep_seconds(0.0005);
	return waited;
}

static int qemu_input(struct backend_env *env, const char *event_json, struct engi_error *err)
{
	struct qemu_env *q = env->priv;
	if (!q->screen_w) {
		char *ppm;
		size_t n;
		TRY(dump_screen(q, &ppm, &n, err));
		engi_free(ppm);
	}
	json_t *steps;
	TRY(screen_action_steps(event_json, q->screen_w, q->screen_h, q->scale > 0 ? q->scale : 1.0,
				&steps, err));
	if (!q->vcpus_known)
		find_vcpus(q);
	double budget = INPUT_PACE_ACTION_S;
	int rc = 0;
	size_t i;
	json_t *st;
	json_array_foreach(steps, i, st)
	{
		json_t *ev = json_object_get(st, "events");
		json_t *ms = json_object_get(st, "sleep_ms");
		if (ev) {
			struct vcpu_sample before;
			int paced = q->vcpus_known > 0 && budget > 0 &&
				    vcpu_sample_read(&q->vcpus, &before) == 0;
			rc = qmp_call(&q->qmp, "input-send-event", json_pack("{s:O}", "events", ev),
				      30, NULL, err);
			if (rc < 0) {
				rc = env_fail(q, rc, err);
				break;
			}
			if (paced)
				budget -= wait_input_taken(q, &before);
		} else if (json_is_integer(ms)) {
			clk_sleep_seconds((double)json_integer_value(ms) / 1000.0);
		}
	}
	json_decref(steps);
	return rc;
}

static int qemu_pause(struct backend_env *env, int pause, struct engi_error *err)
{
	struct qemu_env *q = env->priv;
	if (q->paused == pause)
		return 0;
	int rc = qmp_call(&q->qmp, pause ? "stop" : "cont", NULL, 30, NULL, err);
	if (rc < 0)
		return env_fail(q, rc, err);
	q->paused = pause;
	return 0;
}

static char *qemu_events(struct backend_env *env)
{
	struct qemu_env *q = env->priv;
	if (!q->qmp.events || !json_array_size(q->qmp.events))
		return NULL;
	char *s = json_dumps(q->qmp.events, JSON_COMPACT);
	json_array_clear(q->qmp.events);
	char *r = s ? engi_strdup(s) : NULL;
	free(s);
	return r;
}

static int qemu_prepare_op(const struct env_spec *spec, struct engi_error *err)
{
	const char *image = spec->image && strcmp(spec->image, "host") ? spec->image : "tiny";
	return qemu_prepare(image, spec, NULL, err);
}

static const struct backend_ops qemu_ops = {
    .start = qemu_start,
    .exec = qemu_exec,
    .put = qemu_put,
    .get = qemu_get,
    .screenshot = qemu_screenshot,
    .input = qemu_input,
    .pause = qemu_pause,
    .events = qemu_events,
    .prepare = qemu_prepare_op,
    .stop = qemu_stop,
};

const struct backend_desc backend_qemu = {
    .name = "qemu",
    .summary =
	"clean QEMU virtual machine per episode (qcow2 overlay, saved state, guest agent, QMP)",
    .caps = BACKEND_CAP_EXEC | BACKEND_CAP_FILES | BACKEND_CAP_SCREEN | BACKEND_CAP_INPUT |
	    BACKEND_CAP_WORKDIR | BACKEND_CAP_FOLDERS | BACKEND_CAP_ISOLATED | BACKEND_CAP_DETACH,
    .priv_size = sizeof(struct qemu_env),
    .ops = &qemu_ops,
};
