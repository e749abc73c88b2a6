/*
 * sha256.h - SHA-256 (FIPS 180-4), incremental, for cell identities, task
 * content hashes and artifact digests. No I/O except engi_sha256_file.
 */
#ifndef ENGI_SHA256_H
#define ENGI_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct engi_error;

struct engi_sha256 {
	uint32_t h[8];
	uint64_t nbytes;
	unsigned char block[64];
	size_t used;
};

void engi_sha256_init(struct engi_sha256 *s);
void engi_sha256_update(struct engi_sha256 *s, const void *data, size_t n);
void engi_sha256_final(struct engi_sha256 *s, unsigned char out[32]);
/* Lower-case hex of the digest: 64 characters plus NUL. */
void engi_sha256_hex(const unsigned char digest[32], char hex[65]);
void engi_sha256_str(const void *data, size_t n, char hex[65]);
/* Digest of a whole file, read in chunks; returns 0 or a negative code. */
int engi_sha256_file(const char *path, char hex[65], struct engi_error *err);

#endif
