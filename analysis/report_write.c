/*
 * report_write.c - the report's renderings into their files and streams,
 * and engi_report, which computes the data and writes every output.
 */
#include "report_render.h"

#include "engi/alloc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int write_file(const char *path, const struct engi_dynbuf *b, struct engi_error *err)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		RAISE(err, ENGI_EIO, "cannot open report file '%s': %s", path, strerror(errno));
	size_t n = b->len ? fwrite(b->buf, 1, b->len, f) : 0;
	int werr = n != b->len ? errno : 0;
	if (fclose(f) != 0 && !werr)
		werr = errno;
	if (n != b->len || werr)
		RAISE(err, ENGI_EIO, "cannot write report file '%s': %s", path,
		      strerror(werr ? werr : EIO));
	return 0;
}

static int render_to_file(const struct engi_report_data *d, const char *path, int json,
			  struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, ENGI_REPORT_OUTPUT_CAP);
	if (json)
		engi_report_render_json(&b, d);
	else
		engi_report_render_csv(&b, d);
	int rc = engi_textout_check(&b, json ? "JSON report" : "CSV report", ENGI_REPORT_OUTPUT_CAP,
				    err);
	if (!rc)
		rc = write_file(path, &b, err);
	engi_dynbuf_release(&b);
	return rc;
}

int engi_report_write_csv(const struct engi_report_data *d, const char *path,
			  struct engi_error *err)
{
	return render_to_file(d, path, 0, err);
}

int engi_report_write_json(const struct engi_report_data *d, const char *path,
			   struct engi_error *err)
{
	return render_to_file(d, path, 1, err);
}

int engi_report_write_markdown(const struct engi_report_data *d, FILE *out, struct engi_error *err)
{
	struct engi_dynbuf b;
	engi_dynbuf_init(&b, ENGI_REPORT_OUTPUT_CAP);
	engi_report_render_markdown(&b, d);
	int rc = engi_textout_check(&b, "Markdown report", ENGI_REPORT_OUTPUT_CAP, err);
	if (!rc && b.len && fwrite(b.buf, 1, b.len, out) != b.len)
		rc = engi_raise(err, ENGI_EIO, "cannot write the Markdown report: %s",
				strerror(errno));
	if (!rc && (fflush(out) != 0 || ferror(out)))
		rc = engi_raise(err, ENGI_EIO, "cannot write the Markdown report: %s",
				strerror(errno));
	engi_dynbuf_release(&b);
	return rc;
}

static int write_with_suffix(const struct engi_report_data *d, const char *prefix,
			     const char *suffix, int json, struct engi_error *err)
{
	size_t n = strlen(prefix) + strlen(suffix) + 1;
	char *path = engi_malloc(n);
	if (!path)
		RAISE(err, ENGI_ENOMEM, "out of memory naming report file '%s%s'", prefix, suffix);
	snprintf(path, n, "%s%s", prefix, suffix);
	int rc = render_to_file(d, path, json, err);
	engi_free(path);
	return rc;
}

int engi_report(const struct engi_results *res, const struct engi_report_opts *o, FILE *md,
		struct engi_error *err)
{
	struct engi_report_data d;
	engi_report_data_init(&d);
	struct engi_evidence ev;
	engi_evidence_init(&ev);
	int rc = engi_report_compute(&d, res, o, err);
	if (!rc && o->evidence) {
		rc = engi_evidence_compute(&ev, res, err);
		d.evidence = &ev;
	}
	if (!rc && md)
		rc = engi_report_write_markdown(&d, md, err);
	if (!rc && md && o->evidence)
		rc = engi_evidence_write_markdown(&ev, md, err);
	if (!rc && o->prefix)
		rc = write_with_suffix(&d, o->prefix, ".csv", 0, err);
	if (!rc && o->prefix)
		rc = write_with_suffix(&d, o->prefix, ".json", 1, err);
	if (!rc && o->prefix && o->evidence) {
		size_t n = strlen(o->prefix) + sizeof(".evidence.csv");
		char *path = engi_malloc(n);
		if (!path)
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory naming '%s.evidence.csv'",
					o->prefix);
		else {
			snprintf(path, n, "%s.evidence.csv", o->prefix);
			rc = engi_evidence_write_csv(&ev, path, err);
		}
		engi_free(path);
	}
	d.evidence = NULL;
	engi_evidence_release(&ev);
	engi_report_data_release(&d);
	return rc;
}
