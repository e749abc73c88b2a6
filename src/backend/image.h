/*
 * image.h - guest images for the qemu backend: built by engisweep from
 * Debian packages with the recipes under src/backend/images/ (embedded in
 * the binary), content-addressed by those recipes, cached on the host.
 *
 * Cache folder: $ENGISWEEP_IMAGES, else $XDG_CACHE_HOME/engisweep/images,
 * else $HOME/.cache/engisweep/images. A built image is the folder
 * <cache>/<name>-<first 16 hex digits of the recipe hash>/ holding vmlinuz,
 * initrd.img, disk.qcow2 and image.json; <cache>/downloads keeps .deb files
 * between builds. Saved memory states live beside the image, in ready/
 * (see qemu.c). Any change to a recipe file gives new folders, so a stale
 * image is never used; old folders can be deleted by hand.
 */
#ifndef ENGI_IMAGE_H
#define ENGI_IMAGE_H

#include <stddef.h>
#include <stdio.h>

#include "engi/error.h"

/* The images engisweep knows how to build, NULL-terminated. */
const char *const *image_names(void);
int image_cache_dir(char *buf, size_t n, struct engi_error *err);
/* Where image name lives once built (built or not); hash: 65 bytes or NULL. */
int image_dir(const char *name, char *buf, size_t n, char *hash, struct engi_error *err);
/* Folder of the built image, or ENGI_ENOTFOUND saying how to build it. */
int image_find(const char *name, char *buf, size_t n, struct engi_error *err);
/* Builds the image unless it is there (or force); progress lines go to log.
 * Builds in one cache folder wait for each other (a lock file). */
int image_build(const char *name, int force, FILE *log, struct engi_error *err);

#endif
