/*
 * report_render.h - between the report's numbers and its renderings,
 * private to analysis/. report.c computes struct engi_report_data (no
 * text); report_markdown.c, report_files.c (CSV and JSON) render it into a
 * capped buffer with textout.h, and report_write.c puts the buffer in its
 * file or stream. A renderer reads the data only: the same data, the same bytes.
 */
#ifndef ENGI_ANALYSIS_REPORT_RENDER_H
#define ENGI_ANALYSIS_REPORT_RENDER_H

#include "engi/dynbuf.h"
#include "engi/report.h"
#include "textout.h"

/* The row of the arm in the overall table. */
static inline const struct engi_report_row *overall(const struct engi_report_data *d, size_t arm)
{
	return &d->rows[d->table_first[ENGI_REPORT_OVERALL] + arm];
}

/* The renderings (columns and keys in engi/report.h), appended to o. */
void engi_report_render_markdown(struct engi_dynbuf *o, const struct engi_report_data *d);
void engi_report_render_csv(struct engi_dynbuf *o, const struct engi_report_data *d);
void engi_report_render_json(struct engi_dynbuf *o, const struct engi_report_data *d);

#endif
