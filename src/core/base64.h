/*
 * base64.h - standard base64 (RFC 4648, alphabet A-Z a-z 0-9 + /, '='
 * padding), for carrying binary data such as compressed traces inside JSON.
 *
 * The caller owns both buffers: size them with base64_encoded_len and
 * base64_decoded_max. Decoding is strict: no whitespace, no missing padding,
 * no stray characters and no non-zero bits after the last byte, so every
 * byte string has exactly one encoding.
 */
#ifndef ENGI_BASE64_H
#define ENGI_BASE64_H

#include <stddef.h>

/* Characters of the encoding of n bytes, without the NUL; SIZE_MAX when
 * the length does not fit in a size_t. */
size_t base64_encoded_len(size_t n);
/* Writes base64_encoded_len(n) characters and a NUL to out. */
void base64_encode(const void *in, size_t n, char *out);

/* Upper bound of the bytes that len characters decode to. */
size_t base64_decoded_max(size_t len);
/* Decodes len characters into out (base64_decoded_max(len) bytes) and sets
 * *outlen. Returns 0, or ENGI_EPARSE with *bad_at set to the offset of the
 * first character that is wrong (len when the length is wrong). */
int base64_decode(const char *in, size_t len, unsigned char *out, size_t *outlen, size_t *bad_at);

#endif
