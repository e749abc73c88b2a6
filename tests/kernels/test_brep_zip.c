/*
 * The B-rep kernel's archive and document readers (kernels/brep/zip.c,
 * fcdoc.c), built with or without OpenCASCADE: archives made here in
 * memory, stored and deflate; every prefix and every single-byte change of
 * one is read without a crash (ASan watches the bounds); the caps, unsafe
 * names and a lying size are refused; Document.xml's objects, links and
 * shape files, with entities, and its malformed variants.
 */
#include "check.h"
#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

struct zbuf {
	unsigned char *p;
	size_t n, cap;
};

static void put(struct zbuf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void put16(struct zbuf *b, unsigned v)
{
	unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
	put(b, x, 2);
}

static void put32(struct zbuf *b, uint32_t v)
{
	unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 24)};
	put(b, x, 4);
}

struct ent {
	const char *name;
	const char *data;
	int deflate;
	uint32_t usize_override; /* 0: the real size */
};

/* A zip of the entries: local headers, data, central directory, end. */
static struct zbuf make_zip(const struct ent *e, size_t n)
{
	struct zbuf z = {0}, cd = {0};
	for (size_t i = 0; i < n; i++) {
		size_t ulen = strlen(e[i].data);
		uint32_t crc = (uint32_t)crc32(0, (const Bytef *)e[i].data, (uInt)ulen);
		unsigned char *c = NULL;
		size_t clen = ulen;
		if (e[i].deflate) {
			z_stream s;
			memset(&s, 0, sizeof(s));
			deflateInit2(&s, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
			c = malloc(deflateBound(&s, ulen) + 16);
			s.next_in = (Bytef *)(uintptr_t)e[i].data;
			s.avail_in = (uInt)ulen;
			s.next_out = c;
			s.avail_out = (uInt)deflateBound(&s, ulen) + 16;
			deflate(&s, Z_FINISH);
			clen = s.total_out;
			deflateEnd(&s);
		}
		uint32_t usize = e[i].usize_override ? e[i].usize_override : (uint32_t)ulen;
		uint32_t off = (uint32_t)z.n;
		size_t nl = strlen(e[i].name);
		put32(&z, 0x04034b50u);
		put16(&z, 20);
		put16(&z, 0);
		put16(&z, e[i].deflate ? 8 : 0);
		put16(&z, 0);
		put16(&z, 0);
		put32(&z, crc);
		put32(&z, (uint32_t)clen);
		put32(&z, usize);
		put16(&z, (unsigned)nl);
		put16(&z, 0);
		put(&z, e[i].name, nl);
		put(&z, c ? (const void *)c : (const void *)e[i].data, clen);
		put32(&cd, 0x02014b50u);
		put16(&cd, 20);
		put16(&cd, 20);
		put16(&cd, 0);
		put16(&cd, e[i].deflate ? 8 : 0);
		put16(&cd, 0);
		put16(&cd, 0);
		put32(&cd, crc);
		put32(&cd, (uint32_t)clen);
		put32(&cd, usize);
		put16(&cd, (unsigned)nl);
		put16(&cd, 0);
		put16(&cd, 0);
		put16(&cd, 0);
		put16(&cd, 0);
		put32(&cd, 0);
		put32(&cd, off);
		put(&cd, e[i].name, nl);
		free(c);
	}
	uint32_t cdoff = (uint32_t)z.n;
	put(&z, cd.p, cd.n);
	put32(&z, 0x06054b50u);
	put16(&z, 0);
	put16(&z, 0);
	put16(&z, (unsigned)n);
	put16(&z, (unsigned)n);
	put32(&z, (uint32_t)cd.n);
	put32(&z, cdoff);
	put16(&z, 0);
	free(cd.p);
	return z;
}

/* Opens and extracts every entry; the code of the first failure. */
static int read_all(const unsigned char *d, size_t n, struct engi_error *err)
{
	struct engi_zip z;
	int rc = engi_zip_open(&z, d, n, "t.FCStd", err);
	if (rc)
		return rc;
	for (size_t i = 0; i < z.n && rc == 0; i++) {
		unsigned char *out;
		size_t len;
		rc = engi_zip_extract(&z, &z.entries[i], 1 << 20, &out, &len, err);
		if (rc == 0) {
			CHECK(out[len] == '\0');
			engi_free(out);
		}
	}
	engi_zip_release(&z);
	return rc;
}

static const char doc_xml[] =
    "<?xml version='1.0' encoding='utf-8'?>\n"
    "<!-- a comment <Object> -->\n"
    "<Document SchemaVersion=\"4\">\n"
    " <Objects Count=\"4\">\n"
    "  <Object type=\"PartDesign::Body\" name=\"Body\" id=\"1\" />\n"
    "  <Object type=\"PartDesign::Pad\" name=\"Pad\" id=\"2\" />\n"
    "  <Object type=\"Sketcher::SketchObject\" name=\"Sk&amp;1\" id=\"3\" />\n"
    "  <Object type='Part::Box' name='Box' id='4'/>\n"
    " </Objects>\n"
    " <ObjectData Count=\"4\">\n"
    "  <Object name=\"Body\" Extensions=\"True\">\n"
    "   <Properties Count=\"4\">\n"
    "    <Property name=\"BaseFeature\" type=\"App::PropertyLink\"><Link "
    "value=\"Box\"/></Property>\n"
    "    <Property name=\"Group\" type=\"App::PropertyLinkList\">\n"
    "     <LinkList count=\"2\"><Link value=\"Pad\"/><Link value=\"Sk&amp;1\"/></LinkList>\n"
    "    </Property>\n"
    "    <Property name=\"Shape\" type=\"Part::PropertyPartShape\"><Part "
    "file=\"PartShape.brp\"/></Property>\n"
    "    <Property name=\"Tip\" type=\"App::PropertyLink\"><Link value=\"Pad\"/></Property>\n"
    "    <Property name=\"Label\" type=\"App::PropertyString\"><String "
    "value=\"&lt;Body&#65;&gt;\"/></Property>\n"
    "   </Properties>\n"
    "  </Object>\n"
    "  <Object name=\"Pad\"><Properties Count=\"2\">\n"
    "   <Property name=\"AddSubShape\" type=\"Part::PropertyPartShape\"><Part "
    "file=\"Add.brp\"/></Property>\n"
    "   <Property name=\"Shape\" type=\"Part::PropertyPartShape\"><Part "
    "file=\"PartShape1.brp\"/></Property>\n"
    "  </Properties></Object>\n"
    "  <Object name=\"Sk&amp;1\"><Properties Count=\"0\"><Property name=\"X\"><![CDATA[<Link "
    "value=\"no\"/>]]></Property></Properties></Object>\n"
    "  <Object name=\"Box\"/>\n"
    " </ObjectData>\n"
    "</Document>\n";

static void test_zip(void)
{
	struct ent e[] = {
	    {"Document.xml", doc_xml, 1, 0},
	    {"PartShape.brp", "CASCADE Topology V1, (c) Matra-Datavision\n", 0, 0},
	    {"sub/PartShape1.brp", "", 1, 0},
	};
	struct zbuf z = make_zip(e, 3);
	struct engi_error err;
	engi_error_init(&err);
	struct engi_zip zip;
	CHECK_INT(engi_zip_open(&zip, z.p, z.n, "t.FCStd", &err), 0);
	CHECK_INT(zip.n, 3);
	const struct engi_zip_entry *d = engi_zip_find(&zip, "Document.xml");
	CHECK(d != NULL);
	CHECK(engi_zip_find(&zip, "document.xml") == NULL);
	unsigned char *out = NULL;
	size_t len = 0;
	if (d) {
		CHECK_INT(engi_zip_extract(&zip, d, 1 << 20, &out, &len, &err), 0);
		CHECK_INT(len, strlen(doc_xml));
		CHECK(out && !memcmp(out, doc_xml, len));
		engi_free(out);
		engi_error_init(&err);
		CHECK_INT(engi_zip_extract(&zip, d, 100, &out, &len, &err), ENGI_ETOOBIG);
		CHECK(strstr(err.msg, "Document.xml") != NULL);
		CHECK(strstr(err.msg, "t.FCStd") != NULL);
	}
	engi_zip_release(&zip);
	/* every prefix and every one-byte change: no crash, no read outside */
	int prefixes_ok = 0;
	for (size_t n = 0; n < z.n; n++) {
		unsigned char *cut = malloc(n ? n : 1);
		memcpy(cut, z.p, n);
		engi_error_init(&err);
		prefixes_ok += read_all(cut, n, &err) == 0;
		free(cut);
	}
	CHECK_INT(prefixes_ok, 0);
	unsigned char *mut = malloc(z.n);
	for (size_t i = 0; i < z.n; i++)
		for (int v = 0; v < 3; v++) {
			static const unsigned char vals[] = {0x00, 0xff, 0x7f};
			memcpy(mut, z.p, z.n);
			mut[i] = mut[i] == vals[v] ? (unsigned char)~vals[v] : vals[v];
			engi_error_init(&err);
			int rc = read_all(mut, z.n, &err);
			CHECK(rc == 0 || err.msg[0] != '\0');
		}
	free(mut);
	free(z.p);

	/* unsafe names */
	const char *bad[] = {"../x", "a/../../x", "/etc/passwd", "C:x",
			     "a\\b", "a\x01",	  "a//b",	 ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct ent b[] = {{bad[i], "x", 0, 0}};
		struct zbuf zb = make_zip(b, 1);
		engi_error_init(&err);
		CHECK_INT(engi_zip_open(&zip, zb.p, zb.n, "t.FCStd", &err), ENGI_EPARSE);
		CHECK(strstr(err.msg, "unsafe name") != NULL);
		free(zb.p);
	}
	/* a lying size: declared 10 bytes, inflates to more */
	struct ent lie[] = {{"Document.xml", doc_xml, 1, 10}};
	struct zbuf zl = make_zip(lie, 1);
	engi_error_init(&err);
	CHECK_INT(read_all(zl.p, zl.n, &err), ENGI_EPARSE);
	CHECK(strstr(err.msg, "does not inflate") != NULL);
	free(zl.p);
	/* a declared size over the ratio cap */
	struct ent ratio[] = {{"Document.xml", "x", 1, 100000}};
	struct zbuf zr = make_zip(ratio, 1);
	engi_error_init(&err);
	CHECK_INT(engi_zip_open(&zip, zr.p, zr.n, "t.FCStd", &err), ENGI_EPARSE);
	CHECK(strstr(err.msg, "plausible") != NULL);
	free(zr.p);
	/* the entry cap */
	struct ent *many = calloc(ENGI_ZIP_MAX_ENTRIES + 1, sizeof(*many));
	char(*names)[16] = calloc(ENGI_ZIP_MAX_ENTRIES + 1, sizeof(*names));
	for (int i = 0; i <= ENGI_ZIP_MAX_ENTRIES; i++) {
		snprintf(names[i], sizeof(names[i]), "e%d", i);
		many[i] = (struct ent){names[i], "", 0, 0};
	}
	struct zbuf zm = make_zip(many, ENGI_ZIP_MAX_ENTRIES);
	engi_error_init(&err);
	CHECK_INT(engi_zip_open(&zip, zm.p, zm.n, "t.FCStd", &err), 0);
	engi_zip_release(&zip);
	free(zm.p);
	zm = make_zip(many, ENGI_ZIP_MAX_ENTRIES + 1);
	engi_error_init(&err);
	CHECK_INT(engi_zip_open(&zip, zm.p, zm.n, "t.FCStd", &err), ENGI_ETOOBIG);
	free(zm.p);
	free(many);
	free(names);
}

static void test_doc(void)
{
	struct engi_error err;
	engi_error_init(&err);
	struct engi_fc_doc doc;
	CHECK_INT(
	    engi_fc_doc_parse(doc_xml, strlen(doc_xml), "'t' entry 'Document.xml'", &doc, &err), 0);
	if (err.msg[0])
		fprintf(stderr, "%s\n", err.msg);
	CHECK_INT(doc.n, 4);
	const struct engi_fc_object *b = engi_fc_find(&doc, "Body");
	CHECK(b != NULL);
	if (b) {
		CHECK_STR(b->type, "PartDesign::Body");
		CHECK_STR(b->tip, "Pad");
		CHECK_STR(b->base, "Box");
		CHECK_STR(b->shape_file, "PartShape.brp");
		CHECK_INT(b->ngroup, 2);
		if (b->ngroup == 2) {
			CHECK_STR(doc.links[b->group], "Pad");
			CHECK_STR(doc.links[b->group + 1], "Sk&1");
		}
	}
	const struct engi_fc_object *p = engi_fc_find(&doc, "Pad");
	CHECK(p && !strcmp(p->shape_file, "PartShape1.brp")); /* Shape, not AddSubShape */
	CHECK(p && !p->tip[0] && !p->ngroup);
	CHECK(engi_fc_find(&doc, "Sk&1") != NULL);
	engi_fc_doc_release(&doc);
	CHECK_INT(engi_fc_classify("PartDesign::Pocket"), ENGI_FC_NATIVE);
	CHECK_INT(engi_fc_classify("PartDesign::FeatureBase"), ENGI_FC_CONTAINER);
	CHECK_INT(engi_fc_classify("Part::Box"), ENGI_FC_OUTSIDE);
	CHECK_INT(engi_fc_classify("PartDesign::FeaturePython"), ENGI_FC_OUTSIDE);

	/* every prefix: refused (the document element is left open), but the
	 * one that lacks only the final newline */
	size_t n = strlen(doc_xml);
	int ok = 0;
	for (size_t k = 0; k < n; k++) {
		char *cut = malloc(k + 1);
		memcpy(cut, doc_xml, k);
		cut[k] = '\0';
		engi_error_init(&err);
		if (engi_fc_doc_parse(cut, k, NULL, &doc, &err) == 0) {
			ok++;
			engi_fc_doc_release(&doc);
		} else {
			CHECK(err.msg[0] != '\0');
		}
		free(cut);
	}
	CHECK_INT(ok, 1);
	struct {
		const char *xml, *msg;
	} bad[] = {
	    {"<Document><ObjectData><Object name=\"Ghost\"/></ObjectData></Document>",
	     "not declared"},
	    {"<Document><Objects><Object name=\"A\" type=\"X\"/><Object name=\"A\" "
	     "type=\"X\"/></Objects></Document>",
	     "declared twice"},
	    {"<Document><Objects><Object name=\"A\"/></Objects></Document>", "lacks its type"},
	    {"<Document></Objects></Document>", "closes"},
	    {"<Document><a b=c/></Document>", "unquoted"},
	    {"<Document><a b=\"<\"/></Document>", "inside an attribute"},
	    {"<Document>", "ends inside"},
	    {"", "no document element"},
	    {"<!-- open", "unterminated comment"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		engi_error_init(&err);
		CHECK_INT(engi_fc_doc_parse(bad[i].xml, strlen(bad[i].xml), "'d'", &doc, &err),
			  ENGI_EPARSE);
		if (!strstr(err.msg, bad[i].msg))
			fprintf(stderr, "case %zu: '%s' lacks '%s'\n", i, err.msg, bad[i].msg);
		CHECK(strstr(err.msg, bad[i].msg) != NULL);
	}
	/* nesting deeper than the cap */
	char deep[64 * 3 + 16] = "";
	for (int i = 0; i < 65; i++)
		strcat(deep, "<a>");
	engi_error_init(&err);
	CHECK_INT(engi_fc_doc_parse(deep, strlen(deep), "'d'", &doc, &err), ENGI_EPARSE);
	CHECK(strstr(err.msg, "nested") != NULL);
}

int main(void)
{
	test_zip();
	test_doc();
	return check_exit();
}
