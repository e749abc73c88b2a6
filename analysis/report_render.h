/*
 * report_render.h - between the report's numbers and its renderings,
 * private to analysis/. report.c computes struct engi_report_data (no
 * text); report_markdown.c, report_files.c (CSV and JSON) render it into a
 * report_out buffer, and report_write.c puts the buffer in its file or
 * stream. A renderer reads the data only: the same data, the same bytes.
 */
#ifndef ENGI_ANALYSIS_REPORT_RENDER_H
#define ENGI_ANALYSIS_REPORT_RENDER_H

#include <stdarg.h>
#include <string.h>

#include "engi/dynbuf.h"
#include "engi/report.h"

/* An output buffer whose first failure sticks, checked once at the end. */
struct report_out {
	struct engi_dynbuf b;
	int rc;
};

/* Every add after the first failure is a no-op; report_write.c checks the
 * buffer once, after the rendering. */
static inline void out_bytes(struct report_out *o, const char *s, size_t n)
{
	if (!o->rc)
		o->rc = engi_dynbuf_add(&o->b, s, n);
}

static inline void out_str(struct report_out *o, const char *s)
{
	out_bytes(o, s, strlen(s));
}

static inline void out_fmt(struct report_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline void out_fmt(struct report_out *o, const char *fmt, ...)
{
	if (o->rc)
		return;
	va_list ap;
	va_start(ap, fmt);
	o->rc = engi_dynbuf_vprintf(&o->b, fmt, ap);
	va_end(ap);
}

/* The row of the arm in the overall table. */
static inline const struct engi_report_row *overall(const struct engi_report_data *d, size_t arm)
{
	return &d->rows[d->table_first[ENGI_REPORT_OVERALL] + arm];
}

/* The renderings (columns and keys in engi/report.h), appended to o. */
void engi_report_render_markdown(struct report_out *o, const struct engi_report_data *d);
void engi_report_render_csv(struct report_out *o, const struct engi_report_data *d);
void engi_report_render_json(struct report_out *o, const struct engi_report_data *d);

#endif
