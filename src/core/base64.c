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
static int sextet(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
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
	for (size_t i = 0; i < len; i += 4) {
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
