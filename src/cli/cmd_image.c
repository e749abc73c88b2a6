/*
 * engisweep image: build, list and locate the guest images of the qemu
 * backend.
 */
#include "cli.h"

#include "backend.h"
#if ENGI_WITH_QEMU
#include "image.h"
#include "qemu.h"
#endif

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

static const char image_help[] =
    "usage: engisweep image build NAME... [--force] [--no-ready] [--cpus N] [--memory-mb M]\n"
    "       engisweep image list\n"
    "       engisweep image path NAME\n"
    "\n"
    "Guest images for `--backend qemu`, built from Debian packages only:\n"
    "  tiny     Debian kernel + busybox + qemu-guest-agent in an initramfs (tests)\n"
    "  tools    Debian 12 minbase root with python3, openscad, calculix-ccx, admesh\n"
    "  desktop  tools plus an X session (window manager, xterm, openscad, librecad)\n"
    "\n"
    "Each image is content-addressed by its recipe (src/backend/images/, inside\n"
    "this binary) and cached under $ENGISWEEP_IMAGES, else\n"
    "$XDG_CACHE_HOME/engisweep/images, else ~/.cache/engisweep/images. A build\n"
    "that finds its image already there does nothing (--force rebuilds). After\n"
    "building, the image is booted once and a `ready` memory state is saved for\n"
    "the given machine shape (default: 1 CPU and the image's memory), which every\n"
    "episode then starts from; other shapes get theirs on first use.\n"
    "Needs root (debootstrap) and the packages qemu-system-x86, qemu-utils,\n"
    "debootstrap, busybox-static, e2fsprogs, cpio (scripts/deps installs them).\n"
    "\n"
    "  --force         rebuild even when the image is there\n"
    "  --no-ready      do not boot the image to save its ready state\n"
    "  --cpus N        machine shape of the ready state (default 1)\n"
    "  --memory-mb M   memory of the ready state (default: the image's)\n";

#if !ENGI_WITH_QEMU
/* Configured with -DENGI_QEMU=OFF: every subcommand says so (backend.c's
 * message) and exits 2; --help shows what the command would do. */
int cmd_image(int argc, char **argv)
{
	struct engi_error e;
	engi_error_init(&e);
	backend_lookup("qemu", &e);
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("%s\n%s\n", image_help, e.msg);
		return 0;
	}
	cli_error(&e);
	return EXIT_USAGE;
}
#else
static int usage_error(const char *msg)
{
	cli_errorf("image: %s", msg);
	fputs(image_help, stderr);
	return EXIT_USAGE;
}

static int image_build_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"force", no_argument, NULL, 'f'},	    {"no-ready", no_argument, NULL, 'n'},
	    {"cpus", required_argument, NULL, 'c'}, {"memory-mb", required_argument, NULL, 'm'},
	    {"help", no_argument, NULL, 'h'},	    {NULL, 0, NULL, 0},
	};
	int force = 0, ready = 1;
	long cpus = 1, mem = 0;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			force = 1;
			break;
		case 'n':
			ready = 0;
			break;
		case 'c':
			if (cli_int("--cpus", optarg, 1, 64, &cpus) < 0)
				return EXIT_USAGE;
			break;
		case 'm':
			if (cli_int("--memory-mb", optarg, 64, 262144, &mem) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			fputs(image_help, stdout);
			return 0;
		default:
			fputs(image_help, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return usage_error("build: name at least one image (tiny, tools, desktop)");
	for (int i = optind; i < argc; i++) {
		struct engi_error e;
		engi_error_init(&e);
		char dir[PATH_MAX];
		if (image_dir(argv[i], dir, sizeof(dir), NULL, &e) < 0) {
			cli_error(&e);
			return EXIT_USAGE;
		}
	}
	for (int i = optind; i < argc; i++) {
		struct engi_error e;
		engi_error_init(&e);
		if (image_build(argv[i], force, stderr, &e) < 0) {
			cli_error(&e);
			return EXIT_FAILED;
		}
		if (!ready)
			continue;
		char tmp[PATH_MAX];
		const char *t = getenv("TMPDIR");
		snprintf(tmp, sizeof(tmp), "%s", t && *t ? t : "/tmp");
		struct env_spec spec = {.image = argv[i],
					.cpus = (int)cpus,
					.memory_mb = (int)mem,
					.work_root = tmp,
					.name = "ready"};
		if (qemu_prepare(argv[i], &spec, stderr, &e) < 0) {
			cli_error(&e);
			return EXIT_FAILED;
		}
		char dir[PATH_MAX];
		image_find(argv[i], dir, sizeof(dir), &e);
		printf("%s\t%s\n", argv[i], dir);
	}
	return 0;
}

static int image_list_cmd(void)
{
	char cache[PATH_MAX];
	struct engi_error e;
	engi_error_init(&e);
	if (image_cache_dir(cache, sizeof(cache), &e) < 0) {
		cli_error(&e);
		return EXIT_USAGE;
	}
	printf("image cache: %s\n", cache);
	for (const char *const *n = image_names(); *n; n++) {
		char dir[PATH_MAX];
		engi_error_init(&e);
		int built = image_find(*n, dir, sizeof(dir), &e) == 0;
		if (!built)
			image_dir(*n, dir, sizeof(dir), NULL, &e);
		printf("  %-8s %-10s %s\n", *n, built ? "built" : "not built", dir);
		if (!built)
			continue;
		char rd[PATH_MAX + 8];
		snprintf(rd, sizeof(rd), "%s/ready", dir);
		DIR *d = opendir(rd);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (de->d_name[0] != '.' && !strchr(de->d_name, '.'))
				printf("           ready state %s\n", de->d_name);
		}
		if (d)
			closedir(d);
	}
	return 0;
}

int cmd_image(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("name a subcommand: build, list or path");
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		fputs(image_help, stdout);
		return 0;
	}
	if (!strcmp(sub, "build"))
		return image_build_cmd(argc - 1, argv + 1);
	if (!strcmp(sub, "list")) {
		if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
			fputs(image_help, stdout);
			return 0;
		}
		return image_list_cmd();
	}
	if (!strcmp(sub, "path")) {
		if (argc != 3)
			return usage_error("path: name one image");
		if (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) {
			fputs(image_help, stdout);
			return 0;
		}
		char dir[PATH_MAX];
		struct engi_error e;
		engi_error_init(&e);
		if (image_find(argv[2], dir, sizeof(dir), &e) < 0) {
			cli_error(&e);
			return EXIT_FAILED;
		}
		printf("%s\n", dir);
		return 0;
	}
	return usage_error("unknown subcommand (build, list, path)");
}
#endif
