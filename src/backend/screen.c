/*
 * Screenshots (PPM in, scaled PNG out) and GUI actions (JSON in, QMP input
 * events out) for the qemu backend. See screen.h.
 */
#include "screen.h"

#include "engi/alloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

/* ------------------------------------------------------------------ PPM */

struct image {
	int w, h;
	const unsigned char *rgb; /* w*h*3 bytes, rows top to bottom */
};

static void ppm_skip_space(const unsigned char *p, size_t len, size_t *pos)
{
	while (*pos < len) {
		if (p[*pos] == '#') {
			while (*pos < len && p[*pos] != '\n' && p[*pos] != '\r')
				(*pos)++;
		} else if (isspace(p[*pos])) {
			(*pos)++;
		} else {
			break;
		}
	}
}

/* One header number; values over limit are reported without overflowing. */
static int ppm_number(const unsigned char *p, size_t len, size_t *pos, const char *what, long limit,
		      long *out, struct engi_error *err)
{
	ppm_skip_space(p, len, pos);
	if (*pos >= len)
		RAISE(err, ENGI_EPARSE, "screenshot PPM header ends before its %s", what);
	if (!isdigit(p[*pos]))
		RAISE(err, ENGI_EPARSE, "screenshot PPM: expected the %s, found byte 0x%02x", what,
		      p[*pos]);
	long v = 0;
	while (*pos < len && isdigit(p[*pos])) {
		v = v * 10 + (p[*pos] - '0');
		if (v > limit)
			RAISE(err, ENGI_ETOOBIG, "screenshot PPM: %s over %ld", what, limit);
		(*pos)++;
	}
	*out = v;
	return 0;
}

static int ppm_decode(const unsigned char *p, size_t len, struct image *img, struct engi_error *err)
{
	if (!p || len < 2 || p[0] != 'P' || p[1] != '6')
		RAISE(err, ENGI_EPARSE, "screenshot is not a binary PPM (no 'P6' signature)");
	size_t pos = 2;
	if (pos >= len || !(isspace(p[pos]) || p[pos] == '#'))
		RAISE(err, ENGI_EPARSE, "screenshot PPM: no separator after 'P6'");
	long w, h, maxval;
	TRY(ppm_number(p, len, &pos, "width", SCREEN_SIDE_MAX, &w, err));
	TRY(ppm_number(p, len, &pos, "height", SCREEN_SIDE_MAX, &h, err));
	TRY(ppm_number(p, len, &pos, "maxval", 65535, &maxval, err));
	if (w < 1 || h < 1)
		RAISE(err, ENGI_EPARSE, "screenshot PPM has an empty image (%ldx%ld)", w, h);
	if (maxval != 255)
		RAISE(err, ENGI_EPARSE, "screenshot PPM has maxval %ld; only 255 is supported",
		      maxval);
	/* exactly one whitespace byte separates the header from the pixels */
	if (pos >= len || !isspace(p[pos]))
		RAISE(err, ENGI_EPARSE, "screenshot PPM header is not followed by pixel data");
	pos++;
	size_t need = (size_t)w * (size_t)h * 3;
	if (len - pos < need)
		RAISE(err, ENGI_EPARSE,
		      "screenshot PPM is truncated: %ldx%ld needs %zu bytes of pixels, %zu present",
		      w, h, need, len - pos);
	img->w = (int)w;
	img->h = (int)h;
	img->rgb = p + pos;
	return 0;
}

/* -------------------------------------------------------------- scaling */

/*
 * Area weights of one axis: output pixel i covers source interval
 * [i*n/m, (i+1)*n/m); first[i] is its first source pixel, count[i] how many
 * it touches, and weight[off[i] + k] the share of source pixel first[i]+k,
 * the shares summing to one.
 */
struct axis_weights {
	int *first, *count, *off;
	float *weight;
};

static void axis_weights_release(struct axis_weights *a)
{
	engi_free(a->first);
	engi_free(a->count);
	engi_free(a->off);
	engi_free(a->weight);
	memset(a, 0, sizeof(*a));
}

static int axis_weights_init(struct axis_weights *a, int n, int m, struct engi_error *err)
{
	a->first = engi_calloc((size_t)m, sizeof(int));
	a->count = engi_calloc((size_t)m, sizeof(int));
	a->off = engi_calloc((size_t)m, sizeof(int));
	/* each output pixel touches at most n/m + 2 source pixels */
	size_t cap = (size_t)n + 2 * (size_t)m;
	a->weight = engi_calloc(cap, sizeof(float));
	if (!a->first || !a->count || !a->off || !a->weight) {
		axis_weights_release(a);
		RAISE(err, ENGI_ENOMEM, "out of memory scaling a screenshot");
	}
	double step = (double)n / m;
	size_t used = 0;
	for (int i = 0; i < m; i++) {
		double lo = i * step, hi = (i + 1) * step;
		if (hi > n)
			hi = n;
		int j0 = (int)floor(lo), j1 = (int)ceil(hi);
		if (j1 > n)
			j1 = n;
		if (j1 <= j0)
			j1 = j0 + 1;
		a->first[i] = j0;
		a->off[i] = (int)used;
		int c = 0;
		for (int j = j0; j < j1 && used < cap; j++) {
			double a0 = lo > j ? lo : j, a1 = hi < j + 1 ? hi : j + 1;
			a->weight[used++] = (float)((a1 - a0) / (hi - lo));
			c++;
		}
		a->count[i] = c;
	}
	return 0;
}

/* Area-average src into dst (dw x dh, 3 bytes a pixel). */
static int box_scale(const struct image *src, unsigned char *dst, int dw, int dh,
		     struct engi_error *err)
{
	struct axis_weights ax = {0}, ay = {0};
	TRY(axis_weights_init(&ax, src->w, dw, err));
	int rc = axis_weights_init(&ay, src->h, dh, err);
	float *acc = engi_calloc((size_t)dw * 3, sizeof(float));
	if (rc < 0 || !acc) {
		axis_weights_release(&ax);
		axis_weights_release(&ay);
		engi_free(acc);
		return rc < 0 ? rc
			      : engi_raise(err, ENGI_ENOMEM, "out of memory scaling a screenshot");
	}
	size_t stride = (size_t)src->w * 3;
	for (int oy = 0; oy < dh; oy++) {
		memset(acc, 0, (size_t)dw * 3 * sizeof(float));
		for (int ky = 0; ky < ay.count[oy]; ky++) {
			const unsigned char *s = src->rgb + (size_t)(ay.first[oy] + ky) * stride;
			float wy = ay.weight[ay.off[oy] + ky];
			for (int ox = 0; ox < dw; ox++) {
				float r = 0, g = 0, b = 0;
				const float *wx = ax.weight + ax.off[ox];
				const unsigned char *px = s + (size_t)ax.first[ox] * 3;
				for (int kx = 0; kx < ax.count[ox]; kx++) {
					r += wx[kx] * px[3 * kx];
					g += wx[kx] * px[3 * kx + 1];
					b += wx[kx] * px[3 * kx + 2];
				}
				acc[3 * ox] += wy * r;
				acc[3 * ox + 1] += wy * g;
				acc[3 * ox + 2] += wy * b;
			}
		}
		unsigned char *d = dst + (size_t)oy * dw * 3;
		for (int k = 0; k < dw * 3; k++) {
			float v = acc[k] + 0.5f;
			d[k] = v >= 255.0f ? 255 : v <= 0.0f ? 0 : (unsigned char)v;
		}
	}
	axis_weights_release(&ax);
	axis_weights_release(&ay);
	engi_free(acc);
	return 0;
}

/* ------------------------------------------------------------------ PNG */

#define PNG_IDAT_MAX (256 * 1024)

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Writes one chunk at out; returns its size (12 + n). */
static size_t png_chunk(unsigned char *out, const char type[4], const unsigned char *data, size_t n)
{
	put_be32(out, (uint32_t)n);
	memcpy(out + 4, type, 4);
	if (n)
		memcpy(out + 8, data, n);
	uLong crc = crc32(0L, Z_NULL, 0);
	crc = crc32(crc, out + 4, (uInt)(4 + n));
	put_be32(out + 8 + n, (uint32_t)crc);
	return 12 + n;
}

static voidpf zalloc_seam(voidpf opaque, uInt items, uInt size)
{
	(void)opaque;
	return engi_calloc(items, size);
}

static void zfree_seam(voidpf opaque, voidpf p)
{
	(void)opaque;
	engi_free(p);
}

/* Sub-filters the scanlines (each byte minus the same channel one pixel to
 * its left), which suits flat screen content, and deflates them. */
static int png_deflate(const unsigned char *rgb, int w, int h, unsigned char **z, size_t *zlen,
		       struct engi_error *err)
{
	size_t line = (size_t)w * 3;
	unsigned char *filt = engi_malloc(line + 1);
	if (!filt)
		RAISE(err, ENGI_ENOMEM, "out of memory encoding a screenshot");
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	zs.zalloc = zalloc_seam;
	zs.zfree = zfree_seam;
	if (deflateInit(&zs, 6) != Z_OK) {
		engi_free(filt);
		RAISE(err, ENGI_ENOMEM, "cannot start zlib to encode a screenshot");
	}
	uLong bound = deflateBound(&zs, (uLong)((line + 1) * (size_t)h));
	unsigned char *out = engi_malloc(bound);
	if (!out) {
		deflateEnd(&zs);
		engi_free(filt);
		RAISE(err, ENGI_ENOMEM, "out of memory encoding a screenshot");
	}
	zs.next_out = out;
	zs.avail_out = (uInt)bound;
	int zrc = Z_OK;
	for (int y = 0; y < h && zrc == Z_OK; y++) {
		const unsigned char *s = rgb + (size_t)y * line;
		filt[0] = 1;
		for (size_t i = 0; i < line; i++)
			filt[1 + i] = (unsigned char)(s[i] - (i >= 3 ? s[i - 3] : 0));
		zs.next_in = filt;
		zs.avail_in = (uInt)(line + 1);
		zrc = deflate(&zs, y + 1 == h ? Z_FINISH : Z_NO_FLUSH);
		if (zrc == Z_OK && zs.avail_in != 0)
			zrc = Z_BUF_ERROR;
	}
	engi_free(filt);
	*zlen = bound - zs.avail_out;
	deflateEnd(&zs);
	if (zrc != Z_STREAM_END) {
		engi_free(out);
		RAISE(err, ENGI_EBUG, "zlib failed to compress a screenshot (%d)", zrc);
	}
	*z = out;
	return 0;
}

static int png_encode(const unsigned char *rgb, int w, int h, unsigned char **png, size_t *png_len,
		      struct engi_error *err)
{
	unsigned char *z = NULL;
	size_t zlen = 0;
	TRY(png_deflate(rgb, w, h, &z, &zlen, err));
	size_t nidat = zlen / PNG_IDAT_MAX + 1;
	size_t total = 8 + (12 + 13) + nidat * 12 + zlen + 12;
	unsigned char *out = engi_malloc(total);
	if (!out) {
		engi_free(z);
		RAISE(err, ENGI_ENOMEM, "out of memory encoding a screenshot");
	}
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	memcpy(out, sig, 8);
	size_t pos = 8;
	unsigned char ihdr[13];
	put_be32(ihdr, (uint32_t)w);
	put_be32(ihdr + 4, (uint32_t)h);
	ihdr[8] = 8;  /* bit depth */
	ihdr[9] = 2;  /* truecolour RGB */
	ihdr[10] = 0; /* deflate */
	ihdr[11] = 0; /* adaptive filtering */
	ihdr[12] = 0; /* no interlace */
	pos += png_chunk(out + pos, "IHDR", ihdr, sizeof(ihdr));
	size_t done = 0;
	do {
		size_t n = zlen - done < PNG_IDAT_MAX ? zlen - done : PNG_IDAT_MAX;
		pos += png_chunk(out + pos, "IDAT", z + done, n);
		done += n;
	} while (done < zlen);
	pos += png_chunk(out + pos, "IEND", NULL, 0);
	engi_free(z);
	BUG_ON(pos > total);
	*png = out;
	*png_len = pos;
	return 0;
}

int screen_png_size(const unsigned char *png, size_t len, int *w, int *h)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	if (!png || len < 8 + 8 + 13 || memcmp(png, sig, 8) != 0)
		return ENGI_EPARSE;
	if (get_be32(png + 8) != 13 || memcmp(png + 12, "IHDR", 4) != 0)
		return ENGI_EPARSE;
	uint32_t pw = get_be32(png + 16), ph = get_be32(png + 20);
	if (pw == 0 || ph == 0 || pw > INT32_MAX || ph > INT32_MAX)
		return ENGI_EPARSE;
	if (w)
		*w = (int)pw;
	if (h)
		*h = (int)ph;
	return 0;
}

static int scaled_side(int n, double scale)
{
	long v = lround(n * scale);
	return v < 1 ? 1 : v > n ? n : (int)v;
}

int screen_ppm_to_png(const unsigned char *ppm, size_t len, double scale, unsigned char **png,
		      size_t *png_len, int *out_w, int *out_h, struct engi_error *err)
{
	*png = NULL;
	*png_len = 0;
	if (!(scale > 0.0 && scale <= 1.0))
		RAISE(err, ENGI_EINVALID, "screenshot scale %g is not in (0, 1]", scale);
	struct image img = {0};
	TRY(ppm_decode(ppm, len, &img, err));
	int dw = scaled_side(img.w, scale), dh = scaled_side(img.h, scale);
	int rc;
	if (dw == img.w && dh == img.h) {
		rc = png_encode(img.rgb, dw, dh, png, png_len, err);
	} else {
		unsigned char *small = engi_malloc((size_t)dw * dh * 3);
		if (!small)
			RAISE(err, ENGI_ENOMEM, "out of memory scaling a screenshot");
		rc = box_scale(&img, small, dw, dh, err);
		if (rc == 0)
			rc = png_encode(small, dw, dh, png, png_len, err);
		engi_free(small);
	}
	if (rc < 0)
		return rc;
	if (out_w)
		*out_w = dw;
	if (out_h)
		*out_h = dh;
	return 0;
}

/* --------------------------------------------------------- image files */

struct png_info {
	uint32_t w, h;
	int depth, ctype, interlace;
	const unsigned char *plte;
	size_t nplte;
};

/* Inflates the concatenated IDAT chunks into exactly need bytes. */
static int png_inflate(const unsigned char *p, size_t len, unsigned char *out, size_t need,
		       struct engi_error *err)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	zs.zalloc = zalloc_seam;
	zs.zfree = zfree_seam;
	if (inflateInit(&zs) != Z_OK)
		RAISE(err, ENGI_ENOMEM, "cannot start zlib to decode an image");
	zs.next_out = out;
	zs.avail_out = (uInt)need;
	int zrc = Z_OK;
	for (size_t pos = 8; zrc == Z_OK && pos + 12 <= len;) {
		uint32_t n = get_be32(p + pos);
		if (n > len - pos - 12)
			break;
		if (!memcmp(p + pos + 4, "IDAT", 4)) {
			zs.next_in = (unsigned char *)(uintptr_t)(p + pos + 8);
			zs.avail_in = n;
			while (zrc == Z_OK && zs.avail_in && zs.avail_out)
				zrc = inflate(&zs, Z_NO_FLUSH);
		}
		pos += 12 + (size_t)n;
	}
	size_t got = need - zs.avail_out;
	inflateEnd(&zs);
	if (got != need)
		RAISE(err, ENGI_EPARSE, "the PNG's pixel data is truncated or corrupt");
	return 0;
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undoes the scanline filters in place (rows of 1 + line bytes). */
static int png_unfilter(unsigned char *d, uint32_t h, size_t line, size_t bpp,
			struct engi_error *err)
{
	for (uint32_t y = 0; y < h; y++) {
		unsigned char *row = d + (size_t)y * (line + 1);
		unsigned char *cur = row + 1;
		const unsigned char *up = y ? row - line : NULL;
		int f = row[0];
		for (size_t i = 0; i < line; i++) {
			int a = i >= bpp ? cur[i - bpp] : 0, b = up ? up[i] : 0;
			int c = up && i >= bpp ? up[i - bpp] : 0;
			switch (f) {
			case 0:
				break;
			case 1:
				cur[i] = (unsigned char)(cur[i] + a);
				break;
			case 2:
				cur[i] = (unsigned char)(cur[i] + b);
				break;
			case 3:
				cur[i] = (unsigned char)(cur[i] + ((a + b) >> 1));
				break;
			case 4:
				cur[i] = (unsigned char)(cur[i] + paeth(a, b, c));
				break;
			default:
				RAISE(err, ENGI_EPARSE, "the PNG has an unknown filter %d", f);
			}
		}
	}
	return 0;
}

static int png_header(const unsigned char *p, size_t len, struct png_info *pi,
		      struct engi_error *err)
{
	int w, h;
	if (screen_png_size(p, len, &w, &h) < 0)
		RAISE(err, ENGI_EPARSE, "not a PNG file (no valid signature and IHDR)");
	memset(pi, 0, sizeof(*pi));
	pi->w = (uint32_t)w;
	pi->h = (uint32_t)h;
	pi->depth = p[24];
	pi->ctype = p[25];
	pi->interlace = p[28];
	for (size_t pos = 8; pos + 12 <= len;) {
		uint32_t n = get_be32(p + pos);
		if (n > len - pos - 12)
			break;
		if (!memcmp(p + pos + 4, "PLTE", 4)) {
			pi->plte = p + pos + 8;
			pi->nplte = n / 3;
		}
		pos += 12 + (size_t)n;
	}
	return 0;
}

/* Decodes an 8- or 16-bit, non-interlaced PNG into RGB (alpha over white). */
static int png_decode_rgb(const unsigned char *p, size_t len, const struct png_info *pi,
			  unsigned char **rgb, struct engi_error *err)
{
	static const int channels[7] = {1, 0, 3, 1, 2, 0, 4};
	int ch = pi->ctype <= 6 ? channels[pi->ctype] : 0;
	if (!ch || pi->interlace || !(pi->depth == 8 || (pi->depth == 16 && pi->ctype != 3)))
		RAISE(err, ENGI_ENOTSUP,
		      "cannot scale this PNG (colour type %d, bit depth %d%s); save it as an 8-bit "
		      "PNG or make it smaller",
		      pi->ctype, pi->depth, pi->interlace ? ", interlaced" : "");
	if (pi->w > SCREEN_SIDE_MAX || pi->h > SCREEN_SIDE_MAX ||
	    (uint64_t)pi->w * pi->h > SCREEN_IMAGE_PIXELS_MAX)
		RAISE(err, ENGI_ETOOBIG,
		      "the PNG is %ux%u, over %d pixels on a side or %d million in all", pi->w,
		      pi->h, SCREEN_SIDE_MAX, SCREEN_IMAGE_PIXELS_MAX / 1000000);
	if (pi->ctype == 3 && !pi->plte)
		RAISE(err, ENGI_EPARSE, "the palette PNG has no palette");
	size_t bpp = (size_t)ch * (size_t)(pi->depth / 8), line = bpp * pi->w;
	size_t need = (line + 1) * pi->h;
	unsigned char *raw = engi_malloc(need);
	unsigned char *out = engi_malloc((size_t)pi->w * pi->h * 3);
	int rc = raw && out ? 0 : engi_raise(err, ENGI_ENOMEM, "out of memory decoding an image");
	if (rc == 0)
		rc = png_inflate(p, len, raw, need, err);
	if (rc == 0)
		rc = png_unfilter(raw, pi->h, line, bpp, err);
	for (uint32_t y = 0; rc == 0 && y < pi->h; y++) {
		const unsigned char *row = raw + (size_t)y * (line + 1) + 1;
		for (uint32_t x = 0; x < pi->w; x++) {
			const unsigned char *s = row + (size_t)x * bpp;
			int step = pi->depth / 8; /* 16-bit: the high byte */
			int v[4] = {0};
			for (int k = 0; k < ch; k++)
				v[k] = s[k * step];
			int r, g, b, a = 255;
			if (pi->ctype == 3) {
				size_t ix = (size_t)v[0] < pi->nplte ? (size_t)v[0] : 0;
				r = pi->plte[3 * ix], g = pi->plte[3 * ix + 1],
				b = pi->plte[3 * ix + 2];
			} else if (ch <= 2) {
				r = g = b = v[0];
				a = ch == 2 ? v[1] : 255;
			} else {
				r = v[0], g = v[1], b = v[2];
				a = ch == 4 ? v[3] : 255;
			}
			unsigned char *d = out + ((size_t)y * pi->w + x) * 3;
			d[0] = (unsigned char)((r * a + 255 * (255 - a) + 127) / 255);
			d[1] = (unsigned char)((g * a + 255 * (255 - a) + 127) / 255);
			d[2] = (unsigned char)((b * a + 255 * (255 - a) + 127) / 255);
		}
	}
	engi_free(raw);
	if (rc < 0) {
		engi_free(out);
		return rc;
	}
	*rgb = out;
	return 0;
}

int screen_image_fit(const unsigned char *data, size_t len, int max_side, size_t max_bytes,
		     struct screen_image *out, struct engi_error *err)
{
	memset(out, 0, sizeof(*out));
	int jpeg = len >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff;
	if (jpeg) {
		if (len > max_bytes)
			RAISE(
			    err, ENGI_ETOOBIG,
			    "the JPEG is %zu bytes, over the cap of %zu, and JPEGs are not scaled "
			    "here: convert it to a smaller PNG or JPEG",
			    len, max_bytes);
		out->type = "image/jpeg";
	} else {
		struct png_info pi;
		TRY(png_header(data, len, &pi, err));
		out->w = out->src_w = (int)pi.w;
		out->h = out->src_h = (int)pi.h;
		out->type = "image/png";
		long side = pi.w > pi.h ? pi.w : pi.h;
		if (side > max_side || len > max_bytes) {
			unsigned char *rgb = NULL;
			TRY(png_decode_rgb(data, len, &pi, &rgb, err));
			double scale = side > max_side ? (double)max_side / side : 1.0;
			int rc = 0;
			for (int tries = 0; tries < 4; tries++, scale *= 0.5) {
				struct image src = {(int)pi.w, (int)pi.h, rgb};
				int dw = scaled_side(src.w, scale), dh = scaled_side(src.h, scale);
				unsigned char *small = engi_malloc((size_t)dw * dh * 3);
				engi_free(out->data);
				out->data = NULL;
				rc = small ? box_scale(&src, small, dw, dh, err)
					   : engi_raise(err, ENGI_ENOMEM,
							"out of memory scaling an image");
				if (rc == 0)
					rc = png_encode(small, dw, dh, &out->data, &out->len, err);
				engi_free(small);
				out->w = dw, out->h = dh;
				if (rc < 0 || out->len <= max_bytes)
					break;
			}
			engi_free(rgb);
			if (rc == 0 && out->len > max_bytes)
				rc = engi_raise(err, ENGI_ETOOBIG,
						"the PNG stays over %zu bytes even at %dx%d",
						max_bytes, out->w, out->h);
			if (rc < 0) {
				engi_free(out->data);
				memset(out, 0, sizeof(*out));
			}
			return rc;
		}
	}
	if (!(out->data = engi_malloc(len ? len : 1)))
		RAISE(err, ENGI_ENOMEM, "out of memory");
	memcpy(out->data, data, len);
	out->len = len;
	return 0;
}

/* -------------------------------------------------------------- actions */

/* The steps being built; any allocation failure of jansson sets oom and
 * the caller reports it once at the end. */
struct steps {
	json_t *arr;
	json_t *events; /* the events array of the last "events" step */
	int oom;
};

static void steps_begin(struct steps *st)
{
	st->events = json_array();
	json_t *step = json_pack("{s:o*}", "events", st->events);
	if (!st->events || !step || json_array_append_new(st->arr, step) < 0) {
		st->oom = 1;
		st->events = NULL;
	}
}

static void steps_event(struct steps *st, json_t *ev)
{
	if (!ev || !st->events || json_array_append_new(st->events, ev) < 0)
		st->oom = 1;
}

static void steps_sleep(struct steps *st, long ms)
{
	json_t *step = json_pack("{s:I}", "sleep_ms", (json_int_t)ms);
	if (!step || json_array_append_new(st->arr, step) < 0)
		st->oom = 1;
}

static json_t *ev_abs(const char *axis, long value)
{
	return json_pack("{s:s, s:{s:s, s:I}}", "type", "abs", "data", "axis", axis, "value",
			 (json_int_t)value);
}

static json_t *ev_btn(const char *button, int down)
{
	return json_pack("{s:s, s:{s:b, s:s}}", "type", "btn", "data", "down", down, "button",
			 button);
}

static json_t *ev_key(const char *qcode, int down)
{
	return json_pack("{s:s, s:{s:b, s:{s:s, s:s}}}", "type", "key", "data", "down", down, "key",
			 "type", "qcode", "data", qcode);
}

/* What one action is checked against: the native screen and the scaled
 * screenshot the agent saw. */
struct action_ctx {
	json_t *obj;
	const char *name;
	int screen_w, screen_h;
	int shot_w, shot_h;
	double scale;
};

struct point {
	long ax, ay; /* absolute axis values, 0..SCREEN_ABS_MAX */
};

static int field_number(const struct action_ctx *c, const char *field, int required, double dflt,
			double *out, struct engi_error *err)
{
	json_t *v = json_object_get(c->obj, field);
	if (!v) {
		if (required)
			RAISE(err, ENGI_EINVALID, "action '%s' needs a number '%s'", c->name,
			      field);
		*out = dflt;
		return 0;
	}
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		RAISE(err, ENGI_EINVALID, "action '%s': '%s' must be a number", c->name, field);
	*out = json_number_value(v);
	return 0;
}

static int field_string(const struct action_ctx *c, const char *field, const char *dflt,
			const char **out, size_t *len, struct engi_error *err)
{
	json_t *v = json_object_get(c->obj, field);
	if (!v) {
		if (!dflt)
			RAISE(err, ENGI_EINVALID, "action '%s' needs a string '%s'", c->name,
			      field);
		*out = dflt;
		if (len)
			*len = strlen(dflt);
		return 0;
	}
	if (!json_is_string(v))
		RAISE(err, ENGI_EINVALID, "action '%s': '%s' must be a string", c->name, field);
	*out = json_string_value(v);
	if (len)
		*len = json_string_length(v);
	return 0;
}

/* Screenshot pixel -> native pixel -> absolute axis value (screen.h). */
static long axis_value(double v, double scale, int native)
{
	long n = lround(v / scale);
	if (n < 0)
		n = 0;
	if (n > native - 1)
		n = native - 1;
	if (native <= 1)
		return 0;
	return lround((double)n * SCREEN_ABS_MAX / (native - 1));
}

static int field_coord(const struct action_ctx *c, const char *field, int shot, int native,
		       long *out, struct engi_error *err)
{
	double v = 0;
	TRY(field_number(c, field, 1, 0, &v, err));
	if (v < 0 || v >= shot)
		RAISE(err, ENGI_EINVALID,
		      "action '%s': '%s' %g is outside the screenshot (0 to %d)", c->name, field, v,
		      shot - 1);
	*out = axis_value(v, c->scale, native);
	return 0;
}

static int field_point(const struct action_ctx *c, const char *xf, const char *yf, struct point *p,
		       struct engi_error *err)
{
	TRY(field_coord(c, xf, c->shot_w, c->screen_w, &p->ax, err));
	TRY(field_coord(c, yf, c->shot_h, c->screen_h, &p->ay, err));
	return 0;
}

static void steps_move(struct steps *st, const struct point *p)
{
	steps_begin(st);
	steps_event(st, ev_abs("x", p->ax));
	steps_event(st, ev_abs("y", p->ay));
}

static int field_button(const struct action_ctx *c, const char **button, struct engi_error *err)
{
	const char *b = NULL;
	TRY(field_string(c, "button", "left", &b, NULL, err));
	if (strcmp(b, "left") && strcmp(b, "right") && strcmp(b, "middle"))
		RAISE(err, ENGI_EINVALID,
		      "action '%s': 'button' is '%.40s'; expected left, right or middle", c->name,
		      b);
	*button = b;
	return 0;
}

static void steps_press_release(struct steps *st, const char *button)
{
	steps_begin(st);
	steps_event(st, ev_btn(button, 1));
	steps_sleep(st, SCREEN_PRESS_MS);
	steps_begin(st);
	steps_event(st, ev_btn(button, 0));
}

static int act_move(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	struct point p;
	TRY(field_point(c, "x", "y", &p, err));
	steps_move(st, &p);
	return 0;
}

static int act_click(const struct action_ctx *c, struct steps *st, const char *button, int times,
		     struct engi_error *err)
{
	struct point p;
	TRY(field_point(c, "x", "y", &p, err));
	if (!button)
		TRY(field_button(c, &button, err));
	steps_move(st, &p);
	for (int i = 0; i < times; i++) {
		if (i)
			steps_sleep(st, SCREEN_DOUBLE_CLICK_GAP_MS);
		steps_press_release(st, button);
	}
	return 0;
}

static int act_drag(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	struct point a, b;
	const char *button;
	TRY(field_point(c, "x", "y", &a, err));
	TRY(field_point(c, "x2", "y2", &b, err));
	TRY(field_button(c, &button, err));
	steps_move(st, &a);
	steps_begin(st);
	steps_event(st, ev_btn(button, 1));
	for (int i = 1; i <= SCREEN_DRAG_STEPS; i++) {
		steps_sleep(st, SCREEN_DRAG_STEP_MS);
		struct point m = {
		    .ax = a.ax + lround((double)(b.ax - a.ax) * i / SCREEN_DRAG_STEPS),
		    .ay = a.ay + lround((double)(b.ay - a.ay) * i / SCREEN_DRAG_STEPS),
		};
		steps_move(st, &m);
	}
	steps_sleep(st, SCREEN_DRAG_STEP_MS);
	steps_begin(st);
	steps_event(st, ev_btn(button, 0));
	return 0;
}

/* A US keyboard: the key that types c, and whether shift is held. */
static int char_key(unsigned char c, const char **qcode, int *shift)
{
	static const char *const letters[26] = {"a", "b", "c", "d", "e", "f", "g", "h", "i",
						"j", "k", "l", "m", "n", "o", "p", "q", "r",
						"s", "t", "u", "v", "w", "x", "y", "z"};
	static const char *const digits[10] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
	static const struct {
		char plain, shifted;
		const char *qcode;
	} symbols[] = {
	    {'-', '_', "minus"},	 {'=', '+', "equal"},	   {'[', '{', "bracket_left"},
	    {']', '}', "bracket_right"}, {';', ':', "semicolon"},  {'\'', '"', "apostrophe"},
	    {'`', '~', "grave_accent"},	 {'\\', '|', "backslash"}, {',', '<', "comma"},
	    {'.', '>', "dot"},		 {'/', '?', "slash"},
	};
	static const char shifted_digits[] = ")!@#$%^&*(";
	*shift = 0;
	if (c >= 'a' && c <= 'z') {
		*qcode = letters[c - 'a'];
	} else if (c >= 'A' && c <= 'Z') {
		*qcode = letters[c - 'A'];
		*shift = 1;
	} else if (c >= '0' && c <= '9') {
		*qcode = digits[c - '0'];
	} else if (c == ' ') {
		*qcode = "spc";
	} else if (c == '\n' || c == '\r') {
		*qcode = "ret";
	} else if (c == '\t') {
		*qcode = "tab";
	} else {
		const char *d = c ? strchr(shifted_digits, c) : NULL;
		if (d) {
			*qcode = digits[d - shifted_digits];
			*shift = 1;
			return 0;
		}
		for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
			if (c == (unsigned char)symbols[i].plain ||
			    c == (unsigned char)symbols[i].shifted) {
				*qcode = symbols[i].qcode;
				*shift = c == (unsigned char)symbols[i].shifted;
				return 0;
			}
		}
		return -1;
	}
	return 0;
}

static int act_type(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	const char *text = NULL;
	size_t len = 0;
	TRY(field_string(c, "text", NULL, &text, &len, err));
	if (len > SCREEN_TEXT_MAX)
		RAISE(err, ENGI_EINVALID, "action 'type': 'text' has %zu bytes, over the %d cap",
		      len, SCREEN_TEXT_MAX);
	/* check everything before building anything */
	for (size_t i = 0; i < len; i++) {
		const char *q;
		int shift;
		if (char_key((unsigned char)text[i], &q, &shift) < 0)
			RAISE(err, ENGI_EINVALID,
			      "action 'type': 'text' byte %zu (0x%02x) cannot be typed on a US "
			      "keyboard",
			      i, (unsigned char)text[i]);
	}
	for (size_t i = 0; i < len; i++) {
		const char *q;
		int shift;
		if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
			continue;
		char_key((unsigned char)text[i], &q, &shift);
		if (i)
			steps_sleep(st, SCREEN_TYPE_GAP_MS);
		steps_begin(st);
		if (shift)
			steps_event(st, ev_key("shift", 1));
		steps_event(st, ev_key(q, 1));
		steps_event(st, ev_key(q, 0));
		if (shift)
			steps_event(st, ev_key("shift", 0));
	}
	return 0;
}

/* xdotool-style key names (lower case) and the qcodes they press. */
static const struct {
	const char *name, *qcode;
	int shift;
} key_names[] = {
    {"ctrl", "ctrl", 0},
    {"control", "ctrl", 0},
    {"ctrl_l", "ctrl", 0},
    {"control_l", "ctrl", 0},
    {"ctrl_r", "ctrl_r", 0},
    {"control_r", "ctrl_r", 0},
    {"shift", "shift", 0},
    {"shift_l", "shift", 0},
    {"shift_r", "shift_r", 0},
    {"alt", "alt", 0},
    {"alt_l", "alt", 0},
    {"alt_r", "alt_r", 0},
    {"super", "meta_l", 0},
    {"super_l", "meta_l", 0},
    {"super_r", "meta_r", 0},
    {"meta", "meta_l", 0},
    {"meta_l", "meta_l", 0},
    {"meta_r", "meta_r", 0},
    {"win", "meta_l", 0},
    {"cmd", "meta_l", 0},
    {"return", "ret", 0},
    {"enter", "ret", 0},
    {"ret", "ret", 0},
    {"kp_enter", "kp_enter", 0},
    {"escape", "esc", 0},
    {"esc", "esc", 0},
    {"tab", "tab", 0},
    {"backspace", "backspace", 0},
    {"delete", "delete", 0},
    {"del", "delete", 0},
    {"insert", "insert", 0},
    {"ins", "insert", 0},
    {"home", "home", 0},
    {"end", "end", 0},
    {"page_up", "pgup", 0},
    {"pageup", "pgup", 0},
    {"prior", "pgup", 0},
    {"pgup", "pgup", 0},
    {"page_down", "pgdn", 0},
    {"pagedown", "pgdn", 0},
    {"next", "pgdn", 0},
    {"pgdn", "pgdn", 0},
    {"up", "up", 0},
    {"down", "down", 0},
    {"left", "left", 0},
    {"right", "right", 0},
    {"space", "spc", 0},
    {"spc", "spc", 0},
    {"minus", "minus", 0},
    {"equal", "equal", 0},
    {"plus", "equal", 1},
    {"period", "dot", 0},
    {"dot", "dot", 0},
    {"comma", "comma", 0},
    {"slash", "slash", 0},
    {"backslash", "backslash", 0},
    {"semicolon", "semicolon", 0},
    {"apostrophe", "apostrophe", 0},
    {"grave", "grave_accent", 0},
    {"bracketleft", "bracket_left", 0},
    {"bracketright", "bracket_right", 0},
    {"menu", "menu", 0},
    {"caps_lock", "caps_lock", 0},
    {"print", "print", 0},
    {"pause", "pause", 0},
};

static const char *const fkeys[12] = {"f1", "f2", "f3", "f4",  "f5",  "f6",
				      "f7", "f8", "f9", "f10", "f11", "f12"};

/* Resolves one key name; a single character is the key that types it,
 * letters regardless of case ("ctrl+C" is ctrl+c). */
static int key_lookup(const char *tok, size_t n, const char **qcode, int *shift)
{
	char low[24];
	if (n == 0 || n >= sizeof(low))
		return -1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)tok[i]);
	low[n] = '\0';
	if (n == 1) {
		if (char_key((unsigned char)low[0], qcode, shift) < 0 || low[0] == '\n' ||
		    low[0] == '\t' || low[0] == '\r')
			return -1;
		if (isalpha((unsigned char)low[0]))
			*shift = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++) {
		if (strcmp(low, key_names[i].name) == 0) {
			*qcode = key_names[i].qcode;
			*shift = key_names[i].shift;
			return 0;
		}
	}
	if (low[0] == 'f' && isdigit((unsigned char)low[1])) {
		char *end;
		long k = strtol(low + 1, &end, 10);
		if (*end == '\0' && k >= 1 && k <= 12 && low[1] != '0') {
			*qcode = fkeys[k - 1];
			*shift = 0;
			return 0;
		}
	}
	return -1;
}

#define COMBO_MAX 8

/* One combo "ctrl+shift+t": every part pressed in order, released in
 * reverse. "ctrl++" means ctrl and the plus key. */
static int key_combo(const char *s, size_t n, struct steps *st, struct engi_error *err)
{
	const char *pressed[COMBO_MAX + 1];
	int np = 0;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		if (s[j] == '+')
			j++; /* a '+' where a name starts is the key itself */
		while (j < n && s[j] != '+')
			j++;
		const char *q;
		int shift;
		if (key_lookup(s + i, j - i, &q, &shift) < 0)
			RAISE(err, ENGI_EINVALID, "action 'key': 'keys' has an unknown key '%.*s'",
			      (int)(j - i > 40 ? 40 : j - i), s + i);
		const char *add[2] = {shift ? "shift" : NULL, q};
		for (int k = 0; k < 2; k++) {
			if (!add[k])
				continue;
			int dup = 0;
			for (int m = 0; m < np; m++)
				dup |= strcmp(pressed[m], add[k]) == 0;
			if (dup)
				continue;
			if (np == COMBO_MAX)
				RAISE(err, ENGI_EINVALID,
				      "action 'key': 'keys' combo '%.*s' has over %d keys",
				      (int)(n > 60 ? 60 : n), s, COMBO_MAX);
			pressed[np++] = add[k];
		}
		i = j;
		if (i < n) { /* the separating '+' */
			i++;
			if (i == n)
				RAISE(err, ENGI_EINVALID,
				      "action 'key': 'keys' combo '%.*s' ends in '+'",
				      (int)(n > 60 ? 60 : n), s);
		}
	}
	steps_begin(st);
	for (int k = 0; k < np; k++)
		steps_event(st, ev_key(pressed[k], 1));
	steps_sleep(st, SCREEN_PRESS_MS);
	steps_begin(st);
	for (int k = np - 1; k >= 0; k--)
		steps_event(st, ev_key(pressed[k], 0));
	return 0;
}

static int act_key(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	const char *keys = NULL;
	size_t len = 0;
	TRY(field_string(c, "keys", NULL, &keys, &len, err));
	if (len > 256)
		RAISE(err, ENGI_EINVALID, "action 'key': 'keys' is over 256 bytes");
	int combos = 0;
	size_t i = 0;
	while (i < len) {
		while (i < len && isspace((unsigned char)keys[i]))
			i++;
		size_t j = i;
		while (j < len && !isspace((unsigned char)keys[j]))
			j++;
		if (j > i) {
			if (combos++)
				steps_sleep(st, SCREEN_KEY_GAP_MS);
			TRY(key_combo(keys + i, j - i, st, err));
		}
		i = j;
	}
	if (!combos)
		RAISE(err, ENGI_EINVALID, "action 'key': 'keys' is empty");
	return 0;
}

static int act_scroll(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	const char *dir = NULL;
	double amount = 0;
	/* the model's computer tool says dx / dy (wheel clicks, positive:
	 * right / down); direction + amount is the other spelling */
	json_t *jdx = json_object_get(c->obj, "dx"), *jdy = json_object_get(c->obj, "dy");
	if (jdx || jdy) {
		double dx = 0, dy = 0;
		TRY(field_number(c, "dx", 0, 0, &dx, err));
		TRY(field_number(c, "dy", 0, 0, &dy, err));
		if (dx == 0 && dy == 0)
			RAISE(err, ENGI_EINVALID, "action 'scroll': 'dx' and 'dy' are both 0");
		int vertical = fabs(dy) >= fabs(dx);
		double d = vertical ? dy : dx;
		dir = vertical ? (d > 0 ? "down" : "up") : (d > 0 ? "right" : "left");
		amount = fabs(d);
		if (json_object_get(c->obj, "direction") || json_object_get(c->obj, "amount"))
			RAISE(err, ENGI_EINVALID,
			      "action 'scroll': give dx/dy or direction/amount, not both");
		goto have_direction;
	}
	TRY(field_string(c, "direction", "down", &dir, NULL, err));
	TRY(field_number(c, "amount", 0, 3, &amount, err));
have_direction:;
	const char *button = !strcmp(dir, "down")    ? "wheel-down"
			     : !strcmp(dir, "up")    ? "wheel-up"
			     : !strcmp(dir, "left")  ? "wheel-left"
			     : !strcmp(dir, "right") ? "wheel-right"
						     : NULL;
	if (!button)
		RAISE(err, ENGI_EINVALID,
		      "action 'scroll': 'direction' is '%.40s'; expected up, down, left or right",
		      dir);
	if (amount < 1)
		RAISE(err, ENGI_EINVALID, "action 'scroll': 'amount' %g is under 1", amount);
	long n = amount > SCREEN_SCROLL_MAX ? SCREEN_SCROLL_MAX : lround(amount);
	int has_x = json_object_get(c->obj, "x") != NULL;
	int has_y = json_object_get(c->obj, "y") != NULL;
	if (has_x || has_y) {
		struct point p;
		TRY(field_point(c, "x", "y", &p, err));
		steps_move(st, &p);
	}
	for (long i = 0; i < n; i++) {
		if (i)
			steps_sleep(st, SCREEN_SCROLL_GAP_MS);
		steps_begin(st);
		steps_event(st, ev_btn(button, 1));
		steps_begin(st);
		steps_event(st, ev_btn(button, 0));
	}
	return 0;
}

static int act_wait(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	double s = 0;
	TRY(field_number(c, "seconds", 0, 1.0, &s, err));
	if (s < 0)
		RAISE(err, ENGI_EINVALID, "action 'wait': 'seconds' %g is negative", s);
	if (s > SCREEN_WAIT_MAX_S)
		s = SCREEN_WAIT_MAX_S;
	steps_sleep(st, lround(s * 1000));
	return 0;
}

static int action_dispatch(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	const char *a = c->name;
	if (!strcmp(a, "move"))
		return act_move(c, st, err);
	if (!strcmp(a, "click"))
		return act_click(c, st, NULL, 1, err);
	if (!strcmp(a, "double_click"))
		return act_click(c, st, NULL, 2, err);
	if (!strcmp(a, "right_click"))
		return act_click(c, st, "right", 1, err);
	if (!strcmp(a, "drag"))
		return act_drag(c, st, err);
	if (!strcmp(a, "type"))
		return act_type(c, st, err);
	if (!strcmp(a, "key"))
		return act_key(c, st, err);
	if (!strcmp(a, "scroll"))
		return act_scroll(c, st, err);
	if (!strcmp(a, "wait"))
		return act_wait(c, st, err);
	if (!strcmp(a, "screenshot"))
		return 0;
	RAISE(err, ENGI_EINVALID,
	      "unknown action '%.40s'; expected move, click, double_click, right_click, drag, "
	      "type, key, scroll, wait or screenshot",
	      a);
}

int screen_action_steps(const char *action_json, int screen_w, int screen_h, double scale,
			json_t **steps, struct engi_error *err)
{
	*steps = NULL;
	if (screen_w < 1 || screen_h < 1 || screen_w > SCREEN_SIDE_MAX ||
	    screen_h > SCREEN_SIDE_MAX)
		RAISE(err, ENGI_EINVALID, "screen size %dx%d is out of range", screen_w, screen_h);
	if (!(scale > 0.0 && scale <= 1.0))
		RAISE(err, ENGI_EINVALID, "screenshot scale %g is not in (0, 1]", scale);
	json_error_t je;
	json_t *obj = json_loads(action_json ? action_json : "", JSON_REJECT_DUPLICATES, &je);
	if (!obj)
		RAISE(err, ENGI_EPARSE, "action is not valid JSON: %s (at column %d)", je.text,
		      je.column);
	int rc;
	json_t *name = json_object_get(obj, "action");
	if (!json_is_object(obj)) {
		rc = engi_raise(err, ENGI_EINVALID, "action must be a JSON object");
	} else if (!json_is_string(name)) {
		rc = engi_raise(err, ENGI_EINVALID, "action needs a string 'action'");
	} else {
		struct action_ctx c = {
		    .obj = obj,
		    .name = json_string_value(name),
		    .screen_w = screen_w,
		    .screen_h = screen_h,
		    .shot_w = scaled_side(screen_w, scale),
		    .shot_h = scaled_side(screen_h, scale),
		    .scale = scale,
		};
		struct steps st = {.arr = json_array()};
		if (!st.arr)
			st.oom = 1;
		rc = st.oom ? 0 : action_dispatch(&c, &st, err);
		if (rc == 0 && st.oom)
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory building input events");
		if (rc == 0)
			*steps = st.arr;
		else
			json_decref(st.arr);
	}
	json_decref(obj);
	return rc;
}
