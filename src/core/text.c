#include "text.h"

#include "engi/alloc.h"
#include "engi/utf8.h"

#include <stdio.h>
#include <string.h>

char *text_utf8_clean(const char *s, size_t n, size_t *out_len)
{
	/* worst case every byte becomes the 3-byte replacement character */
	char *out = engi_malloc(n * 3 + 1);
	if (!out)
		return NULL;
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, i = 0;
	while (i < n) {
		/* a NUL byte becomes U+FFFD too */
		size_t k = p[i] ? engi_utf8_seq(p + i, n - i) : 0;
		if (k) {
			for (size_t j = 0; j < k; j++)
				out[o++] = (char)p[i + j];
			i += k;
		} else {
			out[o++] = (char)0xEF;
			out[o++] = (char)0xBF;
			out[o++] = (char)0xBD;
			i++;
		}
	}
	out[o] = '\0';
	if (out_len)
		*out_len = o;
	return out;
}

char *text_sh_quote(const char *text)
{
	size_t n = 3;
	for (const char *p = text; *p; p++)
		n += *p == '\'' ? 4 : 1;
	char *q = engi_malloc(n);
	if (!q)
		return NULL;
	char *o = q;
	*o++ = '\'';
	for (const char *p = text; *p; p++) {
		if (*p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *p;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return q;
}

#define CLOSEST_MAX 64

/* Levenshtein distance of a and b, both shorter than CLOSEST_MAX. */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	size_t row[CLOSEST_MAX + 1];
	for (size_t j = 0; j <= nb; j++)
		row[j] = j;
	for (size_t i = 1; i <= na; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= nb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}

const char *text_closest(const char *word, const char *const *names, size_t n)
{
	size_t nw = strlen(word);
	if (nw == 0 || nw >= CLOSEST_MAX)
		return NULL;
	size_t limit = nw / 3 ? nw / 3 : 1, best = limit + 1;
	const char *pick = NULL;
	for (size_t i = 0; i < n; i++) {
		size_t nn = strlen(names[i]);
		if (nn >= CLOSEST_MAX)
			continue;
		size_t d = edit_distance(word, nw, names[i], nn);
		if (d < best) {
			best = d;
			pick = names[i];
		}
	}
	return pick;
}

size_t text_escape_controls(const char *s, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, n = strlen(s);
	if (cap == 0)
		return 0;
	for (size_t i = 0; i < n;) {
		size_t k = engi_utf8_seq(p + i, n - i);
		int ctl = p[i] < 0x20 || p[i] == 0x7f;
		size_t need = ctl ? 4 : k ? k : 1;
		if (o + need >= cap)
			break; /* never half an escape or a character */
		if (ctl) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[p[i] >> 4];
			out[o++] = hex[p[i] & 15];
		} else {
			memcpy(out + o, p + i, need);
			o += need;
		}
		i += ctl ? 1 : need;
	}
	out[o] = '\0';
	return o;
}
