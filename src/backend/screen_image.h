/*
 * screen_image.h - the pictures the qemu backend shows an agent: a guest's
 * screenshot and the image files an agent asks to see, scaled and encoded
 * as PNG (with libpng). Pure functions, no I/O and no QEMU: they are tested
 * on their own.
 *
 * Screenshots: QMP `screendump` writes a binary PPM; screen_ppm_to_png()
 * shrinks it by the episode's screenshot scale (area average) and encodes a
 * PNG. The input is untrusted (a guest controls its resolution, an agent
 * the image files): every size and length is checked before it is used.
 */
#ifndef ENGI_SCREEN_IMAGE_H
#define ENGI_SCREEN_IMAGE_H

#include <stddef.h>

#include "engi/error.h"

/* Largest PPM side accepted; a bigger header is refused before any allocation. */
#define SCREEN_SIDE_MAX 16384
/* Largest image file decoded for scaling, in pixels. */
#define SCREEN_IMAGE_PIXELS_MAX 40000000

/* A side of n pixels at scale in (0, 1]: round(n * scale), at least 1. */
int screen_scaled_side(int n, double scale);

/*
 * Decodes a P6 PPM (maxval 255), scales it by scale in (0, 1] with an area
 * average (box filter) to round(w*scale) x round(h*scale) (at least 1x1;
 * scale 1.0 copies), and encodes an 8-bit RGB PNG into *png (engi_malloc'd,
 * the caller engi_free's it). out_w and out_h may be NULL. Returns 0, or
 * ENGI_EPARSE for a malformed or truncated PPM, ENGI_ETOOBIG for a side over
 * SCREEN_SIDE_MAX, ENGI_EINVALID for a bad scale, ENGI_ENOMEM.
 */
int screen_ppm_to_png(const unsigned char *ppm, size_t len, double scale, unsigned char **png,
		      size_t *png_len, int *out_w, int *out_h, struct engi_error *err);

/* Reads width and height from a PNG's IHDR. Returns 0 or ENGI_EPARSE. */
int screen_png_size(const unsigned char *png, size_t len, int *w, int *h);

/*
 * An image file for a model. PNG or JPEG data (anything else is
 * ENGI_EPARSE) is passed through when it is within max_side pixels on its
 * longer side and max_bytes long. A larger PNG (any colour type, bit depth
 * and interlacing; 16-bit channels keep their high byte, alpha is blended
 * onto white) is area-scaled to fit max_side, halved again up to three
 * times while its encoding is over max_bytes, and encoded as an RGB PNG; a
 * PNG that libpng cannot decode is ENGI_EPARSE, one over SCREEN_SIDE_MAX
 * on a side or SCREEN_IMAGE_PIXELS_MAX in all ENGI_ETOOBIG. A JPEG is
 * never scaled: over max_bytes it is ENGI_ETOOBIG. out->data is the
 * caller's (engi_free); src_w/src_h/w/h are 0 for JPEG.
 */
struct screen_image {
	unsigned char *data;
	size_t len;
	const char *type; /* "image/png" or "image/jpeg" */
	int src_w, src_h, w, h;
};
int screen_image_fit(const unsigned char *data, size_t len, int max_side, size_t max_bytes,
		     struct screen_image *out, struct engi_error *err);

#endif
