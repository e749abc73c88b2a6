/* Fuzz target: the B-rep kernel's FCStd readers (kernels/brep/zip.c,
 * fcdoc.c) on arbitrary bytes: the archive's directory, every entry
 * extracted, Document.xml parsed. A failure names the archive; what reads
 * is well formed (names terminated, sizes as declared, Group links in
 * range, object names unique). */
#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/error.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void need(int cond)
{
	if (!cond)
		abort();
}

static void check_doc(const char *xml, size_t len)
{
	struct engi_fc_doc doc;
	struct engi_error e;
	engi_error_init(&e);
	int rc = engi_fc_doc_parse(xml, len, "'fuzz.FCStd' entry 'Document.xml'", &doc, &e);
	if (rc < 0) {
		need(doc.n == 0 && doc.objs == NULL && doc.links == NULL);
		need(strncmp(e.msg, "'fuzz.FCStd' entry 'Document.xml'", 33) == 0);
		return;
	}
	for (size_t i = 0; i < doc.n; i++) {
		const struct engi_fc_object *o = &doc.objs[i];
		need(memchr(o->name, 0, sizeof(o->name)) && memchr(o->type, 0, sizeof(o->type)));
		need(o->group + o->ngroup <= doc.nlinks);
		need(engi_fc_find(&doc, o->name) == o);
		(void)engi_fc_classify(o->type);
	}
	engi_fc_doc_release(&doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct engi_zip z;
	struct engi_error e;
	engi_error_init(&e);
	if (engi_zip_open(&z, data, size, "fuzz.FCStd", &e) < 0) {
		need(z.entries == NULL && z.n == 0);
		need(strncmp(e.msg, "'fuzz.FCStd'", 12) == 0);
		return 0;
	}
	for (size_t i = 0; i < z.n; i++) {
		const struct engi_zip_entry *en = &z.entries[i];
		need(memchr(en->name, 0, sizeof(en->name)) != NULL);
		need(engi_zip_find(&z, en->name) == en);
		unsigned char *out = NULL;
		size_t len = 0;
		engi_error_init(&e);
		if (engi_zip_extract(&z, en, 1 << 20, &out, &len, &e) < 0) {
			need(out == NULL && strncmp(e.msg, "'fuzz.FCStd'", 12) == 0);
			continue;
		}
		need(len == en->usize && out[len] == '\0');
		if (!strcmp(en->name, "Document.xml"))
			check_doc((const char *)out, len);
		engi_free(out);
	}
	engi_zip_release(&z);
	return 0;
}
