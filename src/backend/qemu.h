/*
 * qemu.h - what the qemu backend offers besides its ops table.
 */
#ifndef ENGI_QEMU_H
#define ENGI_QEMU_H

#include <stdio.h>

#include "backend.h"

/* Saves the ready memory state of image for the machine shape of spec
 * (CPUs, memory, network; NULL: the image's defaults) unless it exists;
 * progress lines go to log (may be NULL). */
int qemu_prepare(const char *image, const struct env_spec *spec, FILE *log, struct engi_error *err);

/* The accelerator guests get ("kvm" or "tcg"), deciding it now if it is not
 * yet (the probe guest, see qemu.c), and why. */
const char *qemu_accel(char *why, size_t n);

#endif
