/*
 * The screen helpers of the qemu backend: PPM to scaled PNG (encoded with
 * libpng, decoded here with zlib alone and compared pixel by pixel), image
 * files (interlaced ones written by libpng), hostile PPMs, and GUI actions
 * to QMP input events.
 */
#include "check.h"
#include "screen_action.h"
#include "screen_image.h"

#include "engi/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include <setjmp.h>
#include <zlib.h>

/* ------------------------------------------------------------ helpers */

static unsigned char *make_ppm(int w, int h, const char *header_extra, size_t *len,
			       void (*pixel)(int x, int y, unsigned char rgb[3]))
{
	char head[256];
	int n = snprintf(head, sizeof(head), "P6\n%s%d %d\n255\n", header_extra, w, h);
	size_t total = (size_t)n + (size_t)w * h * 3;
	unsigned char *p = malloc(total);
	memcpy(p, head, (size_t)n);
	unsigned char *d = p + n;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++, d += 3)
			pixel(x, y, d);
	*len = total;
	return p;
}

static void pattern(int x, int y, unsigned char rgb[3])
{
	rgb[0] = (unsigned char)(x * 7 + y * 3);
	rgb[1] = (unsigned char)(x ^ y);
	rgb[2] = (unsigned char)(255 - x - 5 * y);
}

/* 4x4 checkerboard of 2x2 blocks: block (bx, by) is white or a colour. */
static void blocks(int x, int y, unsigned char rgb[3])
{
	int b = (x / 2 + y / 2) % 2;
	rgb[0] = b ? 255 : 10;
	rgb[1] = b ? 255 : 20;
	rgb[2] = b ? 255 : 30;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* A PNG decoder just big enough for 8-bit RGB, non-interlaced; checks every
 * chunk CRC. Returns malloc'd w*h*3 bytes or NULL. */
static unsigned char *png_decode(const unsigned char *png, size_t len, int *w, int *h)
{
	if (screen_png_size(png, len, w, h) != 0)
		return NULL;
	if (png[24] != 8 || png[25] != 2 || png[28] != 0)
		return NULL;
	size_t line = (size_t)*w * 3 + 1, rawlen = line * *h;
	unsigned char *raw = malloc(rawlen);
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	inflateInit(&zs);
	zs.next_out = raw;
	zs.avail_out = (uInt)rawlen;
	size_t pos = 8;
	int ok = 1, ended = 0, zrc = Z_OK;
	while (pos + 12 <= len) {
		uint32_t n = be32(png + pos);
		if (pos + 12 + n > len) {
			ok = 0;
			break;
		}
		uLong crc = crc32(crc32(0L, Z_NULL, 0), png + pos + 4, n + 4);
		if (crc != be32(png + pos + 8 + n))
			ok = 0;
		if (!memcmp(png + pos + 4, "IDAT", 4)) {
			zs.next_in = (unsigned char *)png + pos + 8;
			zs.avail_in = n;
			zrc = inflate(&zs, Z_NO_FLUSH);
			if (zrc != Z_OK && zrc != Z_STREAM_END)
				ok = 0;
		}
		if (!memcmp(png + pos + 4, "IEND", 4))
			ended = 1;
		pos += 12 + n;
	}
	inflateEnd(&zs);
	if (!ok || !ended || zrc != Z_STREAM_END || zs.avail_out != 0 || pos != len) {
		free(raw);
		return NULL;
	}
	unsigned char *out = malloc(rawlen - *h);
	size_t bpl = line - 1;
	for (int y = 0; y < *h; y++) {
		const unsigned char *f = raw + y * line;
		unsigned char *o = out + y * bpl, *up = y ? o - bpl : NULL;
		for (size_t i = 0; i < bpl; i++) {
			int a = i >= 3 ? o[i - 3] : 0, b = up ? up[i] : 0,
			    c = up && i >= 3 ? up[i - 3] : 0, v = f[1 + i];
			switch (f[0]) {
			case 0:
				break;
			case 1:
				v += a;
				break;
			case 2:
				v += b;
				break;
			case 3:
				v += (a + b) / 2;
				break;
			case 4:
				v += paeth(a, b, c);
				break;
			default:
				ok = 0;
			}
			o[i] = (unsigned char)v;
		}
	}
	free(raw);
	if (!ok) {
		free(out);
		return NULL;
	}
	return out;
}

/* ---------------------------------------------------------- PPM / PNG */

static void test_round_trip(void)
{
	size_t len;
	unsigned char *ppm = make_ppm(37, 23, "# made by the test\n", &len, pattern);
	unsigned char *png;
	size_t png_len;
	int ow = 0, oh = 0;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(screen_ppm_to_png(ppm, len, 1.0, &png, &png_len, &ow, &oh, &err), 0);
	CHECK_INT(ow, 37);
	CHECK_INT(oh, 23);
	int w, h;
	unsigned char *rgb = png_decode(png, png_len, &w, &h);
	CHECK(rgb != NULL);
	if (rgb) {
		CHECK_INT(w, 37);
		CHECK_INT(h, 23);
		size_t head = len - 37 * 23 * 3;
		CHECK(memcmp(rgb, ppm + head, 37 * 23 * 3) == 0);
	}
	free(rgb);
	engi_free(png);
	free(ppm);
}

static void test_half_checkerboard(void)
{
	size_t len;
	unsigned char *ppm = make_ppm(4, 4, "", &len, blocks);
	unsigned char *png;
	size_t png_len;
	int ow, oh, w, h;
	CHECK_INT(screen_ppm_to_png(ppm, len, 0.5, &png, &png_len, &ow, &oh, NULL), 0);
	CHECK_INT(ow, 2);
	CHECK_INT(oh, 2);
	unsigned char *rgb = png_decode(png, png_len, &w, &h);
	CHECK(rgb != NULL);
	if (rgb) {
		static const unsigned char want[12] = {10,  20,	 30,  255, 255, 255,
						       255, 255, 255, 10,  20,	30};
		CHECK(memcmp(rgb, want, 12) == 0);
	}
	free(rgb);
	engi_free(png);
	free(ppm);

	/* fractional coverage: 3 pixels to 2, the middle one split in halves */
	const unsigned char row3[] = "P6 3 1 255\n\x1e\x1e\x1e\x5a\x5a\x5a\x96\x96\x96";
	CHECK_INT(
	    screen_ppm_to_png(row3, sizeof(row3) - 1, 2.0 / 3.0, &png, &png_len, &ow, &oh, NULL),
	    0);
	CHECK_INT(ow, 2);
	CHECK_INT(oh, 1);
	rgb = png_decode(png, png_len, &w, &h);
	CHECK(rgb != NULL);
	if (rgb) {
		CHECK_INT(rgb[0], 50);	/* (30 + 90 / 2) / 1.5 */
		CHECK_INT(rgb[3], 130); /* (90 / 2 + 150) / 1.5 */
	}
	free(rgb);
	engi_free(png);

	/* a flat image stays flat at any scale (the weights sum to one) */
	ppm = make_ppm(7, 5, "", &len, blocks);
	memset(ppm + len - 7 * 5 * 3, 200, 7 * 5 * 3);
	CHECK_INT(screen_ppm_to_png(ppm, len, 0.3, &png, &png_len, &ow, &oh, NULL), 0);
	CHECK_INT(ow, 2);
	CHECK_INT(oh, 2);
	rgb = png_decode(png, png_len, &w, &h);
	CHECK(rgb != NULL);
	for (int i = 0; rgb && i < 12; i++)
		CHECK_INT(rgb[i], 200);
	free(rgb);
	engi_free(png);
	free(ppm);
}

static void test_hd_sizes(void)
{
	size_t len;
	unsigned char *ppm = make_ppm(1920, 1080, "", &len, pattern);
	const double scales[] = {0.2, 0.6, 1.0};
	const int want_w[] = {384, 1152, 1920}, want_h[] = {216, 648, 1080};
	for (int i = 0; i < 3; i++) {
		unsigned char *png;
		size_t png_len;
		int ow, oh, w = 0, h = 0;
		CHECK_INT(screen_ppm_to_png(ppm, len, scales[i], &png, &png_len, &ow, &oh, NULL),
			  0);
		CHECK_INT(screen_png_size(png, png_len, &w, &h), 0);
		CHECK_INT(w, want_w[i]);
		CHECK_INT(h, want_h[i]);
		CHECK_INT(ow, want_w[i]);
		CHECK_INT(oh, want_h[i]);
		unsigned char *rgb = png_decode(png, png_len, &w, &h);
		CHECK(rgb != NULL);
		free(rgb);
		engi_free(png);
	}
	free(ppm);
}

static void expect_bad_ppm(const char *what, const unsigned char *p, size_t len, int code)
{
	unsigned char *png = (unsigned char *)"x";
	size_t png_len = 1;
	struct engi_error err;
	engi_error_init(&err);
	int rc = screen_ppm_to_png(p, len, 0.5, &png, &png_len, NULL, NULL, &err);
	if (rc != code)
		fprintf(stderr, "bad PPM '%s': rc %d (%s), expected %d\n", what, rc, err.msg, code);
	CHECK_INT(rc, code);
	CHECK(png == NULL);
	CHECK(err.msg[0] != '\0');
}

static void test_bad_ppms(void)
{
	size_t len;
	unsigned char *ppm = make_ppm(8, 8, "", &len, pattern);
	/* every truncation of a valid file, on a heap copy of exactly that size */
	for (size_t n = 0; n < len; n++) {
		unsigned char *cut = malloc(n ? n : 1);
		memcpy(cut, ppm, n);
		struct engi_error err;
		engi_error_init(&err);
		unsigned char *png = NULL;
		size_t png_len;
		CHECK_INT(screen_ppm_to_png(cut, n, 1.0, &png, &png_len, NULL, NULL, &err),
			  ENGI_EPARSE);
		free(cut);
	}
	free(ppm);
	/* the header-only ones below are also checked at their exact length */
	static const char *const cases[][2] = {
	    {"P3 ascii", "P3\n2 2\n255\n0 0 0 0 0 0 0 0 0 0 0 0\n"},
	    {"maxval 65535", "P6\n2 2\n65535\n"},
	    {"maxval 0", "P6\n2 2\n0\n"},
	    {"0x0", "P6\n0 0\n255\n"},
	    {"0 wide", "P6\n0 5\n255\n"},
	    {"no data", "P6\n4 4\n255\n"},
	    {"comment only", "P6\n# nothing else"},
	    {"comment eats header", "P6 # 2 2 255\n"},
	    {"negative", "P6\n-2 2\n255\n"},
	    {"letters", "P6\nab cd\n255\n"},
	    {"no separator", "P62 2 255\n"},
	    {"no byte after maxval", "P6\n1 1\n255"},
	    {"empty", ""},
	    {"P", "P"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i][1]);
		unsigned char *p = malloc(n ? n : 1);
		memcpy(p, cases[i][1], n);
		expect_bad_ppm(cases[i][0], p, n, ENGI_EPARSE);
		free(p);
	}
	static const char *const huge[] = {"P6\n100000 100000\n255\n", "P6 16385 1 255\n",
					   "P6\n1 99999999999999999999999999\n255\n"};
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		size_t n = strlen(huge[i]);
		unsigned char *p = malloc(n);
		memcpy(p, huge[i], n);
		expect_bad_ppm(huge[i], p, n, ENGI_ETOOBIG);
		free(p);
	}
	/* at the cap the header is fine but the pixels are missing */
	const char *cap = "P6\n16384 16384\n255\n";
	expect_bad_ppm("cap, no data", (const unsigned char *)cap, strlen(cap), ENGI_EPARSE);
	/* comments and odd whitespace between every token are fine */
	const char *ok = "P6#a\n#b\n 2\t#c\n\n1 # d\r\n255\n"
			 "\x01\x02\x03\x04\x05\x06";
	unsigned char *png;
	size_t png_len;
	int w, h;
	CHECK_INT(screen_ppm_to_png((const unsigned char *)ok, strlen(ok), 1.0, &png, &png_len, &w,
				    &h, NULL),
		  0);
	CHECK_INT(w, 2);
	CHECK_INT(h, 1);
	engi_free(png);
	/* bad scales */
	ppm = make_ppm(4, 4, "", &len, pattern);
	const double bad_scales[] = {0.0, -1.0, 1.5, NAN};
	for (int i = 0; i < 4; i++) {
		png = NULL;
		CHECK_INT(
		    screen_ppm_to_png(ppm, len, bad_scales[i], &png, &png_len, NULL, NULL, NULL),
		    ENGI_EINVALID);
	}
	/* tiny scales give at least one pixel */
	CHECK_INT(screen_ppm_to_png(ppm, len, 1e-9, &png, &png_len, &w, &h, NULL), 0);
	CHECK_INT(w, 1);
	CHECK_INT(h, 1);
	engi_free(png);
	free(ppm);
	/* screen_png_size on garbage */
	CHECK(screen_png_size((const unsigned char *)"\x89PNG", 4, &w, &h) < 0);
	CHECK(screen_png_size(NULL, 0, &w, &h) < 0);
}

static void test_alloc_failures(void)
{
	size_t len;
	unsigned char *ppm = make_ppm(64, 48, "", &len, pattern);
	int ok_seen = 0;
	for (long n = 1; n < 40 && !ok_seen; n++) {
		unsigned char *png = NULL;
		size_t png_len;
		struct engi_error err;
		engi_error_init(&err);
		engi_alloc_fail_after(n);
		int rc = screen_ppm_to_png(ppm, len, 0.5, &png, &png_len, NULL, NULL, &err);
		engi_alloc_fail_after(0);
		if (rc == 0) {
			ok_seen = 1;
			engi_free(png);
		} else {
			CHECK(rc == ENGI_ENOMEM);
			CHECK(png == NULL);
		}
	}
	CHECK(ok_seen);
	free(ppm);
}

/* ------------------------------------------------------------- actions */

static json_t *steps_of(const char *json, int w, int h, double scale)
{
	json_t *steps = NULL;
	struct engi_error err;
	engi_error_init(&err);
	int rc = screen_action_steps(json, w, h, scale, &steps, &err);
	if (rc != 0)
		fprintf(stderr, "action %s: %s\n", json, err.msg);
	CHECK_INT(rc, 0);
	return steps;
}

/* Flattens the steps to a string: "x=N y=N | +left | ~20 | -left | +ctrl"
 * (events of one step separated by spaces, steps by " | "). */
static void describe(const json_t *steps, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
	size_t i;
	json_t *step;
	json_array_foreach(steps, i, step)
	{
		if (i)
			n += snprintf(out + n, cap - n, " | ");
		json_t *ms = json_object_get(step, "sleep_ms");
		if (ms) {
			n += snprintf(out + n, cap - n, "~%lld", (long long)json_integer_value(ms));
			continue;
		}
		size_t k;
		json_t *ev;
		json_array_foreach(json_object_get(step, "events"), k, ev)
		{
			const char *type = json_string_value(json_object_get(ev, "type"));
			json_t *d = json_object_get(ev, "data");
			if (k)
				n += snprintf(out + n, cap - n, " ");
			if (!strcmp(type, "abs"))
				n += snprintf(
				    out + n, cap - n, "%s=%lld",
				    json_string_value(json_object_get(d, "axis")),
				    (long long)json_integer_value(json_object_get(d, "value")));
			else if (!strcmp(type, "btn"))
				n += snprintf(out + n, cap - n, "%c%s",
					      json_is_true(json_object_get(d, "down")) ? '+' : '-',
					      json_string_value(json_object_get(d, "button")));
			else
				n += snprintf(out + n, cap - n, "%c%s",
					      json_is_true(json_object_get(d, "down")) ? '+' : '-',
					      json_string_value(json_object_get(
						  json_object_get(d, "key"), "data")));
			if (n >= cap)
				return;
		}
		if (n >= cap)
			return;
	}
}

static void expect_steps(const char *json, int w, int h, double scale, const char *want)
{
	json_t *steps = steps_of(json, w, h, scale);
	char got[8192];
	describe(steps, got, sizeof(got));
	if (strcmp(got, want) != 0)
		fprintf(stderr, "action %s\n  got  %s\n  want %s\n", json, got, want);
	CHECK_STR(got, want);
	json_decref(steps);
}

static void expect_error(const char *json, const char *needle)
{
	json_t *steps = (json_t *)1;
	struct engi_error err;
	engi_error_init(&err);
	int rc = screen_action_steps(json, 1920, 1080, 0.5, &steps, &err);
	CHECK(rc < 0);
	CHECK(steps == NULL);
	if (!strstr(err.msg, needle))
		fprintf(stderr, "action %s: message '%s' lacks '%s'\n", json, err.msg, needle);
	CHECK(strstr(err.msg, needle) != NULL);
}

static void test_event_shapes(void)
{
	json_t *steps = steps_of("{\"action\":\"click\",\"x\":100,\"y\":50}", 1920, 1080, 0.5);
	json_t *want = json_loads(
	    "[{\"events\":[{\"type\":\"abs\",\"data\":{\"axis\":\"x\",\"value\":3415}},"
	    "{\"type\":\"abs\",\"data\":{\"axis\":\"y\",\"value\":3037}}]},"
	    "{\"events\":[{\"type\":\"btn\",\"data\":{\"down\":true,\"button\":\"left\"}}]},"
	    "{\"sleep_ms\":20},"
	    "{\"events\":[{\"type\":\"btn\",\"data\":{\"down\":false,\"button\":\"left\"}}]}]",
	    0, NULL);
	CHECK(want != NULL);
	CHECK(json_equal(steps, want));
	json_decref(want);
	json_decref(steps);
	steps = steps_of("{\"action\":\"key\",\"keys\":\"a\"}", 100, 100, 1.0);
	want = json_loads("[{\"events\":[{\"type\":\"key\",\"data\":{\"down\":true,"
			  "\"key\":{\"type\":\"qcode\",\"data\":\"a\"}}}]},{\"sleep_ms\":20},"
			  "{\"events\":[{\"type\":\"key\",\"data\":{\"down\":false,"
			  "\"key\":{\"type\":\"qcode\",\"data\":\"a\"}}}]}]",
			  0, NULL);
	CHECK(json_equal(steps, want));
	json_decref(want);
	json_decref(steps);
}

static void test_actions(void)
{
	/* x: 100 / 0.5 = 200 native, round(200 * 32767 / 1919) = 3415;
	 * y: 50 / 0.5 = 100 native, round(100 * 32767 / 1079) = 3037 */
	expect_steps("{\"action\":\"click\",\"x\":100,\"y\":50}", 1920, 1080, 0.5,
		     "x=3415 y=3037 | +left | ~20 | -left");
	/* the last screenshot row is native row 1078; beyond the last pixel
	 * clamps to the end of the axis */
	expect_steps("{\"action\":\"move\",\"x\":0,\"y\":539}", 1920, 1080, 0.5, "x=0 y=32737");
	expect_steps("{\"action\":\"move\",\"x\":959.9,\"y\":0}", 1920, 1080, 0.5, "x=32767 y=0");
	expect_steps("{\"action\":\"right_click\",\"x\":1,\"y\":1}", 3, 3, 1.0,
		     "x=16384 y=16384 | +right | ~20 | -right");
	expect_steps("{\"action\":\"click\",\"x\":0,\"y\":0,\"button\":\"middle\"}", 1, 1, 1.0,
		     "x=0 y=0 | +middle | ~20 | -middle");
	expect_steps("{\"action\":\"double_click\",\"x\":0,\"y\":0}", 2, 2, 1.0,
		     "x=0 y=0 | +left | ~20 | -left | ~80 | +left | ~20 | -left");
	expect_steps("{\"action\":\"drag\",\"x\":0,\"y\":0,\"x2\":8,\"y2\":0}", 9, 9, 1.0,
		     "x=0 y=0 | +left | ~15 | x=4096 y=0 | ~15 | x=8192 y=0 | ~15 | "
		     "x=12288 y=0 | ~15 | x=16384 y=0 | ~15 | x=20479 y=0 | ~15 | "
		     "x=24575 y=0 | ~15 | x=28671 y=0 | ~15 | x=32767 y=0 | ~15 | -left");
	expect_steps("{\"action\":\"type\",\"text\":\"Hi!\"}", 10, 10, 1.0,
		     "+shift +h -h -shift | ~10 | +i -i | ~10 | +shift +1 -1 -shift");
	expect_steps("{\"action\":\"type\",\"text\":\"a b\\n\\t\\r\\n\"}", 10, 10, 1.0,
		     "+a -a | ~10 | +spc -spc | ~10 | +b -b | ~10 | +ret -ret | ~10 | "
		     "+tab -tab | ~10 | +ret -ret");
	expect_steps("{\"action\":\"type\",\"text\":\"~_{|}:\\\"<>?-=[]\\\\;',./`\"}", 10, 10, 1.0,
		     "+shift +grave_accent -grave_accent -shift | ~10 | "
		     "+shift +minus -minus -shift | ~10 | "
		     "+shift +bracket_left -bracket_left -shift | ~10 | "
		     "+shift +backslash -backslash -shift | ~10 | "
		     "+shift +bracket_right -bracket_right -shift | ~10 | "
		     "+shift +semicolon -semicolon -shift | ~10 | "
		     "+shift +apostrophe -apostrophe -shift | ~10 | "
		     "+shift +comma -comma -shift | ~10 | +shift +dot -dot -shift | ~10 | "
		     "+shift +slash -slash -shift | ~10 | +minus -minus | ~10 | "
		     "+equal -equal | ~10 | +bracket_left -bracket_left | ~10 | "
		     "+bracket_right -bracket_right | ~10 | +backslash -backslash | ~10 | "
		     "+semicolon -semicolon | ~10 | +apostrophe -apostrophe | ~10 | "
		     "+comma -comma | ~10 | +dot -dot | ~10 | +slash -slash | ~10 | "
		     "+grave_accent -grave_accent");
	expect_steps("{\"action\":\"type\",\"text\":\"Z0)\"}", 10, 10, 1.0,
		     "+shift +z -z -shift | ~10 | +0 -0 | ~10 | +shift +0 -0 -shift");
	expect_steps("{\"action\":\"key\",\"keys\":\"ctrl+shift+t\"}", 10, 10, 1.0,
		     "+ctrl +shift +t | ~20 | -t -shift -ctrl");
	expect_steps("{\"action\":\"key\",\"keys\":\"Control+S\"}", 10, 10, 1.0,
		     "+ctrl +s | ~20 | -s -ctrl");
	expect_steps("{\"action\":\"key\",\"keys\":\"alt+F4\"}", 10, 10, 1.0,
		     "+alt +f4 | ~20 | -f4 -alt");
	expect_steps("{\"action\":\"key\",\"keys\":\"super+Return\"}", 10, 10, 1.0,
		     "+meta_l +ret | ~20 | -ret -meta_l");
	expect_steps("{\"action\":\"key\",\"keys\":\"Escape Tab BackSpace Delete Up F12 space\"}",
		     10, 10, 1.0,
		     "+esc | ~20 | -esc | ~30 | +tab | ~20 | -tab | ~30 | +backspace | ~20 | "
		     "-backspace | ~30 | +delete | ~20 | -delete | ~30 | +up | ~20 | -up | ~30 | "
		     "+f12 | ~20 | -f12 | ~30 | +spc | ~20 | -spc");
	expect_steps("{\"action\":\"key\",\"keys\":\"ctrl++\"}", 10, 10, 1.0,
		     "+ctrl +shift +equal | ~20 | -equal -shift -ctrl");
	expect_steps("{\"action\":\"key\",\"keys\":\"shift+plus\"}", 10, 10, 1.0,
		     "+shift +equal | ~20 | -equal -shift");
	expect_steps("{\"action\":\"key\",\"keys\":\"Page_Down\"}", 10, 10, 1.0,
		     "+pgdn | ~20 | -pgdn");
	expect_steps("{\"action\":\"scroll\"}", 10, 10, 1.0,
		     "+wheel-down | -wheel-down | ~20 | +wheel-down | -wheel-down | ~20 | "
		     "+wheel-down | -wheel-down");
	expect_steps("{\"action\":\"scroll\",\"direction\":\"up\",\"amount\":1,\"x\":9,\"y\":0}",
		     10, 10, 1.0, "x=32767 y=0 | +wheel-up | -wheel-up");
	expect_steps("{\"action\":\"scroll\",\"direction\":\"left\",\"amount\":1}", 10, 10, 1.0,
		     "+wheel-left | -wheel-left");
	/* the model's computer tool spells scrolling as dx / dy wheel clicks */
	expect_steps("{\"action\":\"scroll\",\"dy\":-2}", 10, 10, 1.0,
		     "+wheel-up | -wheel-up | ~20 | +wheel-up | -wheel-up");
	expect_steps("{\"action\":\"scroll\",\"dx\":1,\"dy\":0}", 10, 10, 1.0,
		     "+wheel-right | -wheel-right");
	expect_steps("{\"action\":\"wait\",\"seconds\":0.25}", 10, 10, 1.0, "~250");
	expect_steps("{\"action\":\"wait\",\"seconds\":600}", 10, 10, 1.0, "~60000");
	expect_steps("{\"action\":\"wait\"}", 10, 10, 1.0, "~1000");
	expect_steps("{\"action\":\"screenshot\"}", 10, 10, 1.0, "");

	/* the scroll cap */
	json_t *steps = steps_of("{\"action\":\"scroll\",\"amount\":1000}", 10, 10, 1.0);
	CHECK_INT(json_array_size(steps), SCREEN_SCROLL_MAX * 3 - 1);
	json_decref(steps);
	/* the longest text */
	char big[SCREEN_TEXT_MAX + 64];
	int n = snprintf(big, sizeof(big), "{\"action\":\"type\",\"text\":\"");
	memset(big + n, 'a', SCREEN_TEXT_MAX);
	snprintf(big + n + SCREEN_TEXT_MAX, sizeof(big) - n - SCREEN_TEXT_MAX, "\"}");
	steps = steps_of(big, 10, 10, 1.0);
	CHECK_INT(json_array_size(steps), SCREEN_TEXT_MAX * 2 - 1);
	json_decref(steps);
	big[n + SCREEN_TEXT_MAX] = 'a';
	snprintf(big + n + SCREEN_TEXT_MAX + 1, 8, "\"}");
	expect_error(big, "'text'");
}

static void test_action_errors(void)
{
	expect_error("{\"action\":\"fly\"}", "unknown action 'fly'");
	expect_error("{\"x\":1}", "'action'");
	expect_error("[1,2]", "JSON object");
	expect_error("{\"action\":", "not valid JSON");
	expect_error("", "not valid JSON");
	expect_error("{\"action\":\"click\",\"x\":960,\"y\":1}", "'x' 960 is outside");
	expect_error("{\"action\":\"click\",\"x\":-1,\"y\":1}", "'x' -1 is outside");
	expect_error("{\"action\":\"click\",\"x\":1,\"y\":540}", "'y' 540 is outside");
	expect_error("{\"action\":\"click\",\"y\":1}", "needs a number 'x'");
	expect_error("{\"action\":\"click\",\"x\":\"10\",\"y\":1}", "'x' must be a number");
	expect_error("{\"action\":\"click\",\"x\":1,\"y\":1,\"button\":\"left2\"}", "'button'");
	expect_error("{\"action\":\"drag\",\"x\":1,\"y\":1,\"x2\":3}", "'y2'");
	expect_error("{\"action\":\"type\"}", "needs a string 'text'");
	expect_error("{\"action\":\"type\",\"text\":5}", "'text' must be a string");
	expect_error("{\"action\":\"type\",\"text\":\"caf\\u00e9\"}", "US keyboard");
	expect_error("{\"action\":\"type\",\"text\":\"a\\u0000b\"}", "not valid JSON");
	expect_error("{\"action\":\"key\"}", "'keys'");
	expect_error("{\"action\":\"key\",\"keys\":\"  \"}", "'keys' is empty");
	expect_error("{\"action\":\"key\",\"keys\":\"ctrl+frobnicate\"}",
		     "unknown key 'frobnicate'");
	expect_error("{\"action\":\"key\",\"keys\":\"ctrl+\"}", "ends in '+'");
	expect_error("{\"action\":\"key\",\"keys\":\"F13\"}", "unknown key 'F13'");
	expect_error("{\"action\":\"key\",\"keys\":\"F0\"}", "unknown key");
	expect_error("{\"action\":\"scroll\",\"direction\":\"sideways\"}", "'direction'");
	expect_error("{\"action\":\"scroll\",\"amount\":0}", "'amount'");
	expect_error("{\"action\":\"scroll\",\"dx\":0,\"dy\":0}", "both 0");
	expect_error("{\"action\":\"scroll\",\"dy\":2,\"amount\":1}", "not both");
	expect_error("{\"action\":\"scroll\",\"x\":3}", "'y'");
	expect_error("{\"action\":\"wait\",\"seconds\":-1}", "'seconds'");
	expect_error("{\"action\":\"wait\",\"seconds\":null}", "'seconds' must be a number");
	json_t *steps = (json_t *)1;
	CHECK_INT(screen_action_steps("{\"action\":\"wait\"}", 0, 10, 1.0, &steps, NULL),
		  ENGI_EINVALID);
	CHECK_INT(screen_action_steps("{\"action\":\"wait\"}", 10, 10, 0.0, &steps, NULL),
		  ENGI_EINVALID);
	CHECK(steps == NULL);
}

/* ------------------------------------------------------- image files */

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static size_t chunk(unsigned char *o, const char *type, const unsigned char *d, size_t n)
{
	put32(o, (uint32_t)n);
	memcpy(o + 4, type, 4);
	if (n)
		memcpy(o + 8, d, n);
	put32(o + 8 + n, (uint32_t)crc32(crc32(0L, Z_NULL, 0), o + 4, (uInt)(n + 4)));
	return 12 + n;
}

/* A PNG of colour type ctype from rows already filtered (1 + line bytes
 * each); plte may be NULL. */
static unsigned char *make_png(int w, int h, int ctype, int interlace, const unsigned char *rows,
			       size_t rowlen, const unsigned char *plte, size_t nplte, size_t *len)
{
	uLongf zn = compressBound((uLong)rowlen);
	unsigned char *z = malloc(zn);
	compress(z, &zn, rows, (uLong)rowlen);
	unsigned char *o = malloc(zn + nplte + 128);
	size_t pos = 0;
	memcpy(o, "\x89PNG\r\n\x1a\n", 8);
	pos = 8;
	unsigned char ihdr[13] = {0};
	put32(ihdr, (uint32_t)w);
	put32(ihdr + 4, (uint32_t)h);
	ihdr[8] = 8, ihdr[9] = (unsigned char)ctype, ihdr[12] = (unsigned char)interlace;
	pos += chunk(o + pos, "IHDR", ihdr, 13);
	if (plte)
		pos += chunk(o + pos, "PLTE", plte, nplte);
	pos += chunk(o + pos, "IDAT", z, zn);
	pos += chunk(o + pos, "IEND", NULL, 0);
	free(z);
	*len = pos;
	return o;
}

/* An Adam7-interlaced 8-bit RGB PNG of rgb (w*h*3 bytes), written with
 * libpng; malloc'd, or NULL. */
struct mem_png {
	unsigned char *p;
	size_t n, cap;
};

static void mem_png_write(png_structp png, png_bytep data, size_t n)
{
	struct mem_png *m = png_get_io_ptr(png);
	if (m->n + n > m->cap) {
		m->cap = 2 * (m->n + n);
		m->p = realloc(m->p, m->cap);
	}
	memcpy(m->p + m->n, data, n);
	m->n += n;
}

static unsigned char *make_png_adam7(int w, int h, const unsigned char *rgb, size_t *len)
{
	struct mem_png m = {NULL, 0, 0};
	png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png_create_info_struct(png);
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		free(m.p);
		return NULL;
	}
	png_set_write_fn(png, &m, mem_png_write, NULL);
	png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB,
		     PNG_INTERLACE_ADAM7, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	int passes = png_set_interlace_handling(png);
	for (int pass = 0; pass < passes; pass++)
		for (int y = 0; y < h; y++)
			png_write_row(png, rgb + (size_t)y * w * 3);
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	*len = m.n;
	return m.p;
}

static void test_image_fit(void)
{
	struct engi_error e;
	struct screen_image im;
	/* an RGB PNG within the limits passes through byte for byte */
	size_t plen, pnglen;
	unsigned char *ppm = make_ppm(40, 20, "", &plen, pattern), *png = NULL, *half = NULL;
	CHECK_INT(screen_ppm_to_png(ppm, plen, 1.0, &png, &pnglen, NULL, NULL, NULL), 0);
	engi_error_init(&e);
	CHECK_INT(screen_image_fit(png, pnglen, 40, 1 << 20, &im, &e), 0);
	CHECK(im.len == pnglen && !memcmp(im.data, png, pnglen));
	CHECK_STR(im.type, "image/png");
	CHECK(im.w == 40 && im.h == 20);
	engi_free(im.data);
	/* over max_side: decoded, box-scaled like a screenshot at 0.5 */
	size_t halflen;
	CHECK_INT(screen_ppm_to_png(ppm, plen, 0.5, &half, &halflen, NULL, NULL, NULL), 0);
	CHECK_INT(screen_image_fit(png, pnglen, 20, 1 << 20, &im, &e), 0);
	CHECK(im.w == 20 && im.h == 10 && im.src_w == 40 && im.src_h == 20);
	int w1, h1, w2, h2;
	unsigned char *a = png_decode(im.data, im.len, &w1, &h1);
	unsigned char *b = png_decode(half, halflen, &w2, &h2);
	CHECK(a && b && w1 == w2 && h1 == h2 && !memcmp(a, b, (size_t)w1 * h1 * 3));
	free(a);
	free(b);
	engi_free(im.data);
	/* over max_bytes alone: scaled down until it fits */
	CHECK_INT(screen_image_fit(png, pnglen, 40, pnglen - 1, &im, &e), 0);
	CHECK(im.len <= pnglen - 1 && im.w < 40);
	engi_free(im.data);
	engi_free(half);
	/* every truncation of the PNG, scaled: an error or a fit, never a crash */
	for (size_t n = 0; n < pnglen; n += 7) {
		engi_error_init(&e);
		int rc = screen_image_fit(png, n, 10, 1 << 20, &im, &e);
		CHECK(rc == ENGI_EPARSE || rc == 0);
		engi_free(im.data);
	}
	engi_free(png);
	free(ppm);

	/* a palette PNG (Paeth- and Up-filtered rows) and an RGBA one over white */
	unsigned char plte[6] = {255, 0, 0, 0, 0, 255};
	/* indices 0 1 0 1: Paeth on the first row adds the left byte */
	unsigned char rows[2 * 5] = {4, 0, 1, 255, 1, 2, 0, 0, 0, 0}; /* row 2 = row 1 (Up) */
	size_t len;
	unsigned char *pal = make_png(4, 2, 3, 0, rows, sizeof(rows), plte, 6, &len);
	CHECK_INT(screen_image_fit(pal, len, 2, 1 << 20, &im, &e), 0);
	a = png_decode(im.data, im.len, &w1, &h1);
	CHECK(a && w1 == 2 && h1 == 1);
	if (a) /* red and blue averaged */
		CHECK(a[0] == 128 && a[1] == 0 && a[2] == 128 && a[3] == 128 && a[5] == 128);
	free(a);
	engi_free(im.data);
	engi_free(pal);
	unsigned char rgba[1 + 8] = {0, 10, 20, 30, 255, 0, 0, 0, 0};
	pal = make_png(2, 1, 6, 0, rgba, sizeof(rgba), NULL, 0, &len);
	CHECK_INT(screen_image_fit(pal, len, 1, 1 << 20, &im, &e), 0);
	a = png_decode(im.data, im.len, &w1, &h1);
	CHECK(a && w1 == 1 && h1 == 1);
	if (a) /* (10,20,30) and transparent = white, averaged */
		CHECK(a[0] == 133 && a[1] == 138 && a[2] == 143);
	free(a);
	engi_free(im.data);
	engi_free(pal);
	/* interlaced (Adam7, written by libpng), needing a scale: the same
	 * pixels as the plain PNG of the same image */
	ppm = make_ppm(13, 9, "", &plen, pattern);
	CHECK_INT(screen_ppm_to_png(ppm, plen, 1.0, &png, &pnglen, NULL, NULL, NULL), 0);
	size_t ilen;
	unsigned char *inter = make_png_adam7(13, 9, ppm + plen - 13 * 9 * 3, &ilen);
	CHECK(inter != NULL && inter[28] == 1);
	struct screen_image im2;
	engi_error_init(&e);
	CHECK_INT(screen_image_fit(inter, ilen, 7, 1 << 20, &im, &e), 0);
	CHECK_INT(screen_image_fit(png, pnglen, 7, 1 << 20, &im2, &e), 0);
	CHECK(im.w == 7 && im.h == 5 && im.len == im2.len && !memcmp(im.data, im2.data, im.len));
	engi_free(im.data);
	engi_free(im2.data);
	/* a garbled one: refused with libpng's reason, nothing leaked */
	inter[ilen / 2] ^= 0x55;
	inter[ilen / 2 + 1] ^= 0x55;
	engi_error_init(&e);
	int grc = screen_image_fit(inter, ilen, 7, 1 << 20, &im, &e);
	CHECK(grc == 0 || (grc == ENGI_EPARSE && strstr(e.msg, "cannot decode the PNG") != NULL));
	if (grc == 0)
		engi_free(im.data);
	free(inter);
	engi_free(png);
	free(ppm);
	/* JPEG: passed through under the cap, refused over it; others refused */
	static const unsigned char jpg[] = {0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 0xff, 0xd9};
	CHECK_INT(screen_image_fit(jpg, sizeof(jpg), 1, 1 << 20, &im, &e), 0);
	CHECK(im.len == sizeof(jpg) && !memcmp(im.data, jpg, sizeof(jpg)));
	CHECK_STR(im.type, "image/jpeg");
	engi_free(im.data);
	engi_error_init(&e);
	CHECK_INT(screen_image_fit(jpg, sizeof(jpg), 1, 4, &im, &e), ENGI_ETOOBIG);
	engi_error_init(&e);
	CHECK_INT(screen_image_fit((const unsigned char *)"GIF89a", 6, 9, 99, &im, &e),
		  ENGI_EPARSE);
}

int main(void)
{
	test_round_trip();
	test_half_checkerboard();
	test_hd_sizes();
	test_bad_ppms();
	test_alloc_failures();
	test_event_shapes();
	test_actions();
	test_action_errors();
	test_image_fit();
	return check_exit();
}
