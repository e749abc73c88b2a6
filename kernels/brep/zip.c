/*
 * zip.c - a bounded reader of zip archives (FreeCAD's .FCStd) on zlib's
 * raw inflate: the end record, the central directory, stored and deflate
 * entries. Every offset and size is checked against the buffer before it
 * is read; the caps of brep.h stop zip bombs and hostile directories.
 */
#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/error.h"

#include <stdio.h>
#include <string.h>
#include <zlib.h>

#define EOCD_SIG   0x06054b50u
#define CDIR_SIG   0x02014b50u
#define LOCAL_SIG  0x04034b50u
#define EOCD_SIZE  22
#define CDIR_SIZE  46
#define LOCAL_SIZE 30

static uint16_t rd16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

/* A name as messages print it: control and non-ASCII bytes as '?'. */
static void printable(char *dst, size_t cap, const unsigned char *s, size_t n)
{
	size_t j = 0;
	for (size_t i = 0; i < n && j + 1 < cap; i++)
		dst[j++] = (s[i] >= 0x20 && s[i] < 0x7f) ? (char)s[i] : '?';
	dst[j] = '\0';
}

/* 0 when the name is a safe relative path: no absolute path, drive, ".."
 * component, backslash, control byte or empty component. */
static int unsafe_name(const unsigned char *s, size_t n)
{
	if (n == 0 || s[0] == '/')
		return 1;
	if (n >= 2 && s[1] == ':')
		return 1;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && (s[i] < 0x20 || s[i] == 0x7f || s[i] == '\\'))
			return 1;
		if (i == n || s[i] == '/') {
			size_t len = i - start;
			if (len == 0 && i != n) /* "a//b" */
				return 1;
			if (len == 2 && s[start] == '.' && s[start + 1] == '.')
				return 1;
			start = i + 1;
		}
	}
	return 0;
}

int engi_zip_open(struct engi_zip *z, const void *data, size_t size, const char *label,
		  struct engi_error *err)
{
	memset(z, 0, sizeof(*z));
	snprintf(z->label, sizeof(z->label), "%s", label ? label : "zip archive");
	const unsigned char *d = data;
	if (!d || size < EOCD_SIZE)
		RAISE(err, ENGI_EPARSE, "'%s': not a zip archive (%zu bytes, no end record)",
		      z->label, size);
	/* the end record sits in the last 22 + 65535 (comment) bytes */
	size_t lo = size > EOCD_SIZE + 65535 ? size - EOCD_SIZE - 65535 : 0;
	size_t eocd = (size_t)-1;
	for (size_t i = size - EOCD_SIZE + 1; i-- > lo;) {
		if (rd32(d + i) == EOCD_SIG && i + EOCD_SIZE + rd16(d + i + 20) <= size) {
			eocd = i;
			break;
		}
	}
	if (eocd == (size_t)-1)
		RAISE(err, ENGI_EPARSE, "'%s': not a zip archive (no end of central directory)",
		      z->label);
	const unsigned char *e = d + eocd;
	if (rd16(e + 4) != 0 || rd16(e + 6) != 0)
		RAISE(err, ENGI_ENOTSUP, "'%s': multi-disk archives are not read", z->label);
	size_t count = rd16(e + 10);
	uint32_t cd_size = rd32(e + 12), cd_off = rd32(e + 16);
	if (count == 0xffff || cd_off == 0xffffffffu || cd_size == 0xffffffffu)
		RAISE(err, ENGI_ENOTSUP, "'%s': zip64 archives are not read", z->label);
	if (count > ENGI_ZIP_MAX_ENTRIES)
		RAISE(err, ENGI_ETOOBIG, "'%s': %zu entries (the cap is %d)", z->label, count,
		      ENGI_ZIP_MAX_ENTRIES);
	if ((uint64_t)cd_off + cd_size > eocd)
		RAISE(err, ENGI_EPARSE,
		      "'%s': central directory (offset %u, %u bytes) runs past its end record",
		      z->label, cd_off, cd_size);
	z->data = d;
	z->size = size;
	z->entries = count ? engi_calloc(count, sizeof(*z->entries)) : NULL;
	if (count && !z->entries)
		RAISE(err, ENGI_ENOMEM, "'%s': no memory for %zu entries", z->label, count);
	size_t p = cd_off, end = (size_t)cd_off + cd_size;
	int rc = 0;
	for (size_t k = 0; k < count; k++) {
		if (p + CDIR_SIZE > end || rd32(d + p) != CDIR_SIG) {
			rc = engi_raise(err, ENGI_EPARSE,
					"'%s': central directory record %zu is truncated or "
					"malformed",
					z->label, k);
			break;
		}
		const unsigned char *c = d + p;
		uint16_t flags = rd16(c + 8), method = rd16(c + 10);
		size_t nlen = rd16(c + 28), xlen = rd16(c + 30), clen = rd16(c + 32);
		if (p + CDIR_SIZE + nlen + xlen + clen > end) {
			rc = engi_raise(err, ENGI_EPARSE,
					"'%s': central directory record %zu runs past the "
					"directory",
					z->label, k);
			break;
		}
		const unsigned char *nm = c + CDIR_SIZE;
		struct engi_zip_entry *en = &z->entries[k];
		char shown[ENGI_ZIP_NAME_MAX];
		printable(shown, sizeof(shown), nm, nlen);
		if (nlen >= ENGI_ZIP_NAME_MAX) {
			rc = engi_raise(err, ENGI_ETOOBIG,
					"'%s': entry %zu has a %zu-byte name (the cap is %d)",
					z->label, k, nlen, ENGI_ZIP_NAME_MAX - 1);
			break;
		}
		if (unsafe_name(nm, nlen)) {
			rc = engi_raise(err, ENGI_EPARSE,
					"'%s': entry %zu has an unsafe name '%s' (absolute, '..', "
					"backslash or control bytes)",
					z->label, k, shown);
			break;
		}
		memcpy(en->name, nm, nlen);
		en->name[nlen] = '\0';
		if (flags & 1) {
			rc = engi_raise(err, ENGI_ENOTSUP, "'%s': entry '%s' is encrypted",
					z->label, shown);
			break;
		}
		if (method != 0 && method != 8) {
			rc = engi_raise(err, ENGI_ENOTSUP,
					"'%s': entry '%s' uses compression method %u (only stored "
					"and deflate are read)",
					z->label, shown, method);
			break;
		}
		en->method = method;
		en->crc = rd32(c + 16);
		en->csize = rd32(c + 20);
		en->usize = rd32(c + 24);
		en->header = rd32(c + 42);
		if (en->csize == 0xffffffffu || en->usize == 0xffffffffu ||
		    en->header == 0xffffffffu) {
			rc = engi_raise(err, ENGI_ENOTSUP, "'%s': entry '%s' is a zip64 entry",
					z->label, shown);
			break;
		}
		if (en->usize > ENGI_ZIP_ENTRY_MAX) {
			rc = engi_raise(err, ENGI_ETOOBIG,
					"'%s': entry '%s' declares %llu bytes (the cap is %u)",
					z->label, shown, (unsigned long long)en->usize,
					ENGI_ZIP_ENTRY_MAX);
			break;
		}
		if (method == 0 ? en->csize != en->usize
				: en->usize > (uint64_t)ENGI_ZIP_RATIO_MAX * (en->csize + 1)) {
			rc = engi_raise(
			    err, ENGI_EPARSE,
			    "'%s': entry '%s' declares %llu bytes from %llu (method %u): "
			    "not a plausible size",
			    z->label, shown, (unsigned long long)en->usize,
			    (unsigned long long)en->csize, method);
			break;
		}
		if (en->header + LOCAL_SIZE > cd_off) {
			rc = engi_raise(err, ENGI_EPARSE,
					"'%s': entry '%s' has its local header outside the data "
					"area",
					z->label, shown);
			break;
		}
		for (size_t j = 0; j < k; j++)
			if (!strcmp(z->entries[j].name, en->name)) {
				rc = engi_raise(err, ENGI_EPARSE, "'%s': entry '%s' appears twice",
						z->label, shown);
				break;
			}
		if (rc)
			break;
		z->n = k + 1;
		p += CDIR_SIZE + nlen + xlen + clen;
	}
	if (rc) {
		engi_zip_release(z);
		return rc;
	}
	return 0;
}

const struct engi_zip_entry *engi_zip_find(const struct engi_zip *z, const char *name)
{
	for (size_t i = 0; i < z->n; i++)
		if (!strcmp(z->entries[i].name, name))
			return &z->entries[i];
	return NULL;
}

int engi_zip_extract(const struct engi_zip *z, const struct engi_zip_entry *e, size_t cap,
		     unsigned char **out, size_t *len, struct engi_error *err)
{
	*out = NULL;
	*len = 0;
	const unsigned char *d = z->data;
	/* the data area ends where the central directory starts: entries are
	 * checked against the whole buffer, which is the looser bound */
	if (e->header + LOCAL_SIZE > z->size || rd32(d + e->header) != LOCAL_SIG)
		RAISE(err, ENGI_EPARSE, "'%s': entry '%s' has no local header at offset %llu",
		      z->label, e->name, (unsigned long long)e->header);
	const unsigned char *l = d + e->header;
	uint64_t start = e->header + LOCAL_SIZE + rd16(l + 26) + (uint64_t)rd16(l + 28);
	if (start > z->size || e->csize > z->size - start)
		RAISE(err, ENGI_EPARSE,
		      "'%s': entry '%s' (%llu compressed bytes) runs past the end of the archive",
		      z->label, e->name, (unsigned long long)e->csize);
	if (e->usize > cap)
		RAISE(err, ENGI_ETOOBIG, "'%s': entry '%s' is %llu bytes (the cap is %zu)",
		      z->label, e->name, (unsigned long long)e->usize, cap);
	unsigned char *buf = engi_malloc((size_t)e->usize + 1);
	if (!buf)
		RAISE(err, ENGI_ENOMEM, "'%s': no memory for entry '%s' (%llu bytes)", z->label,
		      e->name, (unsigned long long)e->usize);
	if (e->method == 0) {
		memcpy(buf, d + start, (size_t)e->usize);
	} else {
		z_stream s;
		memset(&s, 0, sizeof(s));
		if (inflateInit2(&s, -MAX_WBITS) != Z_OK) {
			engi_free(buf);
			RAISE(err, ENGI_ENOMEM, "'%s': cannot start inflating entry '%s'", z->label,
			      e->name);
		}
		/* zlib counts in uInt: hand the input over in pieces */
		const unsigned char *in = d + start;
		uint64_t in_left = e->csize;
		s.next_out = buf;
		s.avail_out = (uInt)e->usize + 1; /* one spare byte: more output is an error */
		int zrc = Z_OK;
		while (zrc == Z_OK) {
			if (s.avail_in == 0 && in_left) {
				uInt piece = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
				s.next_in = (Bytef *)(uintptr_t)in;
				s.avail_in = piece;
				in += piece;
				in_left -= piece;
			}
			zrc = inflate(&s, Z_NO_FLUSH);
			if (zrc == Z_BUF_ERROR && s.avail_in == 0 && in_left == 0)
				break;
		}
		uint64_t got = s.total_out;
		inflateEnd(&s);
		if (zrc != Z_STREAM_END || got != e->usize) {
			engi_free(buf);
			RAISE(err, ENGI_EPARSE,
			      "'%s': entry '%s' does not inflate to its declared %llu bytes (%s)",
			      z->label, e->name, (unsigned long long)e->usize,
			      zrc == Z_STREAM_END   ? "size differs"
			      : zrc == Z_DATA_ERROR ? "corrupt deflate data"
						    : "truncated");
		}
	}
	uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
	/* crc32 counts in uInt too */
	for (uint64_t off = 0; off < e->usize;) {
		uInt piece = e->usize - off > (1u << 30) ? (1u << 30) : (uInt)(e->usize - off);
		crc = (uint32_t)crc32(crc, buf + off, piece);
		off += piece;
	}
	if (crc != e->crc) {
		engi_free(buf);
		RAISE(err, ENGI_EPARSE, "'%s': entry '%s' fails its CRC-32 check", z->label,
		      e->name);
	}
	buf[e->usize] = '\0';
	*out = buf;
	*len = (size_t)e->usize;
	return 0;
}

void engi_zip_release(struct engi_zip *z)
{
	engi_free(z->entries);
	z->entries = NULL;
	z->n = 0;
}
