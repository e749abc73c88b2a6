/*
 * Screenshots (PPM in) and image files (PNG or JPEG in) for an agent: area
 * scaling and PNG encoding and decoding with libpng. See screen_image.h.
 */
#include "screen_image.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"

#include <ctype.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/*
 * What libpng works with: its allocations go through engi_malloc (oom
 * records that one failed, so that the caller reports ENGI_ENOMEM), its
 * errors land in msg before it jumps back, the encoded bytes go to out and
 * the decoded ones come from in.
 */
struct png_io {
	struct engi_dynbuf out;
	const unsigned char *in;
	size_t len, pos;
	int oom;
	char msg[160];
};

static png_voidp png_alloc_seam(png_structp png, png_alloc_size_t n)
{
	struct png_io *io = png_get_mem_ptr(png);
	void *p = engi_malloc(n ? n : 1);
	if (!p)
		io->oom = 1;
	return p;
}

static void png_free_seam(png_structp png, png_voidp p)
{
	(void)png;
	engi_free(p);
}

static void png_error_seam(png_structp png, png_const_charp msg)
{
	struct png_io *io = png_get_error_ptr(png);
	snprintf(io->msg, sizeof(io->msg), "%s", msg);
	png_longjmp(png, 1);
}

static void png_warning_seam(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

static void png_write_seam(png_structp png, png_bytep data, size_t n)
{
	struct png_io *io = png_get_io_ptr(png);
	int rc = engi_dynbuf_add(&io->out, data, n);
	if (rc == ENGI_ENOMEM)
		io->oom = 1;
	if (rc < 0)
		png_error(png, "cannot hold the encoded image");
}

static void png_read_seam(png_structp png, png_bytep data, size_t n)
{
	struct png_io *io = png_get_io_ptr(png);
	if (n > io->len - io->pos)
		png_error(png, "the PNG is truncated");
	memcpy(data, io->in + io->pos, n);
	io->pos += n;
}

/* An 8-bit RGB PNG of w x h pixels (rows top to bottom), Sub-filtered,
 * which suits flat screen content, deflated at level 6. */
static int png_encode(const unsigned char *rgb, int w, int h, unsigned char **png, size_t *png_len,
		      struct engi_error *err)
{
	struct png_io io;
	memset(&io, 0, sizeof(io));
	/* deflate never grows the filtered rows by more than a small share */
	engi_dynbuf_init(&io.out, 2 * ((size_t)w * 3 + 1) * (size_t)h + 4096);
	png_structp p =
	    png_create_write_struct_2(PNG_LIBPNG_VER_STRING, &io, png_error_seam, png_warning_seam,
				      &io, png_alloc_seam, png_free_seam);
	png_infop info = p ? png_create_info_struct(p) : NULL;
	if (!info) {
		png_destroy_write_struct(&p, NULL);
		RAISE(err, ENGI_ENOMEM, "out of memory encoding a screenshot");
	}
	if (setjmp(png_jmpbuf(p))) {
		png_destroy_write_struct(&p, &info);
		engi_dynbuf_release(&io.out);
		if (io.oom)
			RAISE(err, ENGI_ENOMEM, "out of memory encoding a screenshot");
		RAISE(err, ENGI_EBUG, "libpng failed to encode a screenshot: %s", io.msg);
	}
	png_set_write_fn(p, &io, png_write_seam, NULL);
	png_set_IHDR(p, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB,
		     PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_set_filter(p, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
	png_set_compression_level(p, 6);
	png_write_info(p, info);
	for (int y = 0; y < h; y++)
		png_write_row(p, rgb + (size_t)y * w * 3);
	png_write_end(p, NULL);
	png_destroy_write_struct(&p, &info);
	*png = (unsigned char *)engi_dynbuf_take(&io.out, png_len);
	return 0;
}

static uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
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

int screen_scaled_side(int n, double scale)
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
	int dw = screen_scaled_side(img.w, scale), dh = screen_scaled_side(img.h, scale);
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

/*
 * Decodes a PNG of w x h pixels (checked against the caps before libpng
 * sees it) into w*h RGB bytes: palettes and grey expanded, 16-bit channels
 * cut to their high byte, interlacing undone, alpha blended onto white.
 */
static int png_decode_rgb(const unsigned char *data, size_t len, int w, int h, unsigned char **rgb,
			  struct engi_error *err)
{
	if (w > SCREEN_SIDE_MAX || h > SCREEN_SIDE_MAX ||
	    (uint64_t)w * (uint64_t)h > SCREEN_IMAGE_PIXELS_MAX)
		RAISE(err, ENGI_ETOOBIG,
		      "the PNG is %dx%d, over %d pixels on a side or %d million in all", w, h,
		      SCREEN_SIDE_MAX, SCREEN_IMAGE_PIXELS_MAX / 1000000);
	struct png_io io;
	memset(&io, 0, sizeof(io));
	io.in = data;
	io.len = len;
	unsigned char *volatile pix = NULL;
	png_bytep *volatile rows = NULL;
	png_structp p =
	    png_create_read_struct_2(PNG_LIBPNG_VER_STRING, &io, png_error_seam, png_warning_seam,
				     &io, png_alloc_seam, png_free_seam);
	png_infop info = p ? png_create_info_struct(p) : NULL;
	if (!info) {
		png_destroy_read_struct(&p, NULL, NULL);
		RAISE(err, ENGI_ENOMEM, "out of memory decoding an image");
	}
	if (setjmp(png_jmpbuf(p))) {
		png_destroy_read_struct(&p, &info, NULL);
		engi_free(pix);
		engi_free(rows);
		if (io.oom)
			RAISE(err, ENGI_ENOMEM, "out of memory decoding an image");
		RAISE(err, ENGI_EPARSE, "cannot decode the PNG: %s", io.msg);
	}
	png_set_read_fn(p, &io, png_read_seam);
	png_set_user_limits(p, SCREEN_SIDE_MAX, SCREEN_SIDE_MAX);
	png_read_info(p, info);
	if (png_get_image_width(p, info) != (png_uint_32)w ||
	    png_get_image_height(p, info) != (png_uint_32)h)
		png_error(p, "the image size changed");
	png_set_expand(p);
	png_set_strip_16(p);
	png_set_gray_to_rgb(p);
	png_set_interlace_handling(p);
	png_read_update_info(p, info);
	size_t ch = png_get_channels(p, info), line = png_get_rowbytes(p, info);
	if ((ch != 3 && ch != 4) || line != ch * (size_t)w)
		png_error(p, "unexpected pixel layout after expansion");
	pix = engi_malloc(line * (size_t)h);
	rows = engi_malloc((size_t)h * sizeof(*rows));
	if (!pix || !rows) {
		io.oom = 1;
		png_error(p, "out of memory");
	}
	for (int y = 0; y < h; y++)
		rows[y] = pix + (size_t)y * line;
	png_read_image(p, rows);
	png_destroy_read_struct(&p, &info, NULL);
	engi_free(rows);
	/* in place: pixel i's RGB goes to 3i, never past where pixel i was read */
	unsigned char *out = pix;
	for (size_t i = 0; i < (size_t)w * (size_t)h; i++) {
		const unsigned char *s = out + i * ch;
		int a = ch == 4 ? s[3] : 255;
		unsigned char r = s[0], g = s[1], b = s[2];
		unsigned char *d = out + 3 * i;
		d[0] = (unsigned char)((r * a + 255 * (255 - a) + 127) / 255);
		d[1] = (unsigned char)((g * a + 255 * (255 - a) + 127) / 255);
		d[2] = (unsigned char)((b * a + 255 * (255 - a) + 127) / 255);
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
		int pw, ph;
		if (screen_png_size(data, len, &pw, &ph) < 0)
			RAISE(err, ENGI_EPARSE, "not a PNG file (no valid signature and IHDR)");
		out->w = out->src_w = pw;
		out->h = out->src_h = ph;
		out->type = "image/png";
		long side = pw > ph ? pw : ph;
		if (side > max_side || len > max_bytes) {
			unsigned char *rgb = NULL;
			TRY(png_decode_rgb(data, len, pw, ph, &rgb, err));
			double scale = side > max_side ? (double)max_side / side : 1.0;
			int rc = 0;
			for (int tries = 0; tries < 4; tries++, scale *= 0.5) {
				struct image src = {pw, ph, rgb};
				int dw = screen_scaled_side(src.w, scale),
				    dh = screen_scaled_side(src.h, scale);
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
