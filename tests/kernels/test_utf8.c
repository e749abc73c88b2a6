/*
 * engi_utf8_seq against the Unicode standard's table of well-formed byte
 * sequences (Table 3-7), written here as ranges: every 1-, 2- and 3-byte
 * prefix, every 4-byte lead with each second byte and the edge values of
 * the rest, cut sequences, and the named edge cases (overlongs,
 * surrogates, past U+10FFFF).
 */
#include "check.h"

#include "engi/utf8.h"

#include <stddef.h>

/* Table 3-7: the ranges of the second byte per lead byte. */
static size_t reference(const unsigned char *s, size_t n)
{
	if (n == 0)
		return 0;
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t len;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
	else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xBF)
			return 0;
	return len;
}

static const unsigned char edges[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90,
				      0x9F, 0xA0, 0xBF, 0xC0, 0xF4, 0xFF};

static void test_against_table(void)
{
	unsigned char s[4];
	size_t bad = 0, count = 0;
	for (unsigned a = 0; a < 256; a++)
		for (unsigned b = 0; b < 256; b++)
			for (unsigned c = 0; c < 256; c++) {
				s[0] = (unsigned char)a, s[1] = (unsigned char)b;
				s[2] = (unsigned char)c, s[3] = 0x80;
				for (size_t n = 1; n <= 4; n++) {
					bad += engi_utf8_seq(s, n) != reference(s, n);
					count++;
				}
			}
	for (unsigned a = 0xF0; a < 0x100; a++)
		for (unsigned b = 0; b < 256; b++)
			for (size_t i = 0; i < sizeof(edges); i++)
				for (size_t j = 0; j < sizeof(edges); j++) {
					s[0] = (unsigned char)a, s[1] = (unsigned char)b;
					s[2] = edges[i], s[3] = edges[j];
					bad += engi_utf8_seq(s, 4) != reference(s, 4);
					count++;
				}
	CHECK(count > 60000000);
	CHECK_INT(bad, 0);
}

static size_t seq(const char *s, size_t n)
{
	return engi_utf8_seq((const unsigned char *)s, n);
}

static void test_cases(void)
{
	CHECK_INT(seq("", 0), 0);
	CHECK_INT(seq("\0", 1), 1);
	CHECK_INT(seq("\x7f", 1), 1);
	CHECK_INT(seq("\xc2\x80", 2), 2);	  /* U+0080 */
	CHECK_INT(seq("\xc0\x80", 2), 0);	  /* overlong NUL */
	CHECK_INT(seq("\xc3\xa9", 1), 0);	  /* cut */
	CHECK_INT(seq("\xe0\x9f\xbf", 3), 0);	  /* overlong U+07FF */
	CHECK_INT(seq("\xe2\x82\xac", 3), 3);	  /* € */
	CHECK_INT(seq("\xed\x9f\xbf", 3), 3);	  /* U+D7FF */
	CHECK_INT(seq("\xed\xa0\x80", 3), 0);	  /* U+D800, a surrogate */
	CHECK_INT(seq("\xef\xbf\xbd", 3), 3);	  /* U+FFFD */
	CHECK_INT(seq("\xf0\x8f\xbf\xbf", 4), 0); /* overlong U+FFFF */
	CHECK_INT(seq("\xf0\x9f\x98\x80", 4), 4); /* U+1F600 */
	CHECK_INT(seq("\xf0\x9f\x98\x80", 3), 0);
	CHECK_INT(seq("\xf4\x8f\xbf\xbf", 4), 4); /* U+10FFFF */
	CHECK_INT(seq("\xf4\x90\x80\x80", 4), 0); /* U+110000 */
	CHECK_INT(seq("\xf5\x80\x80\x80", 4), 0);
	CHECK_INT(seq("\x80", 1), 0);
	CHECK_INT(seq("\xe2\x28\xa1", 3), 0);
}

int main(void)
{
	test_cases();
	test_against_table();
	return check_exit();
}
