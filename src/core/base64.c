#include "base64.h"

#include <stdint.h>

#include "engi/error.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t n)
{
	size_t groups = n / 3 + (n % 3 != 0);
	if (groups > SIZE_MAX / 4)
		return SIZE_MAX;
	return groups * 4;
}

void base64_encode(const void *in, size_t n, char *out)
{
	const unsigned char *p = in;
	size_t i = 0;
	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*out++ = alphabet[v >> 18 & 63];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = alphabet[v >> 6 & 63];
		*out++ = alphabet[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;
		*out++ = alphabet[v >> 18 & 63];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = '=';
		*out++ = '=';
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		*out++ = alphabet[v >> 18 & 63];
		*out++ = alphabet[v >> 12 & 63];
		*out++ = alphabet[v >> 6 & 63];
		*out++ = '=';
	}
	*out = '\0';
}

size_t base64_decoded_max(size_t len)
{
	return len / 4 * 3;
}

/* 0..63, or -1 for anything outside the alphabet (padding included) */
static const signed char sextets[256] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 62, -1, -1, -1, 63,
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, -1, -1, -1, -1, -1, -1, -1, 0,  1,	2,  3,	4,  5,	6,
    7,	8,  9,	10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, -1, -1, -1, -1, -1,
    -1, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48,
    49, 50, 51, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};

static int sextet(unsigned char c)
{
	return sextets[c];
}

int base64_decode(const char *in, size_t len, unsigned char *out, size_t *outlen, size_t *bad_at)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t o = 0;
	*outlen = 0;
	if (len % 4 != 0) {
		*bad_at = len;
		return ENGI_EPARSE;
	}
	/* every quad but the last has no padding: one lookup per character,
	 * one test per quad */
	size_t i = 0;
	for (; len >= 4 && i < len - 4; i += 4) {
		int a = sextets[p[i]], b = sextets[p[i + 1]], c = sextets[p[i + 2]],
		    d = sextets[p[i + 3]];
		if ((a | b | c | d) < 0)
			break; /* the loop below says where */
		uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
		out[o++] = (unsigned char)(v >> 16);
		out[o++] = (unsigned char)(v >> 8);
		out[o++] = (unsigned char)v;
	}
	for (; i < len; i += 4) {
		int last = i + 4 == len;
		int pad = 0;
		if (last && p[i + 3] == '=')
			pad = p[i + 2] == '=' ? 2 : 1;
		int s[4] = {0, 0, 0, 0};
		for (int k = 0; k < 4 - pad; k++) {
			s[k] = sextet(p[i + k]);
			if (s[k] < 0) {
				*bad_at = i + k;
				return ENGI_EPARSE;
			}
		}
		uint32_t v = (uint32_t)s[0] << 18 | (uint32_t)s[1] << 12 | (uint32_t)s[2] << 6 |
			     (uint32_t)s[3];
		out[o++] = (unsigned char)(v >> 16);
		if (pad < 2)
			out[o++] = (unsigned char)(v >> 8);
		if (pad < 1)
			out[o++] = (unsigned char)v;
		/* bits below the last whole byte must be zero, or two
		 * encodings would decode to the same bytes */
		if ((pad == 2 && (v & 0xffff)) || (pad == 1 && (v & 0xff))) {
			*bad_at = i + 3 - (size_t)pad;
			return ENGI_EPARSE;
		}
	}
	*outlen = o;
	return 0;
}
