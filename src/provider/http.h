/*
 * http.h - one blocking HTTPS POST, the only place that includes
 * <curl/curl.h>.
 *
 * http_post sends a body with the given headers and collects the reply into
 * a buffer capped at cap bytes. It does not retry: the providers decide what
 * is worth another try from the status, the Retry-After header and the
 * error code. The response body belongs to the caller (http_response_release).
 * Thread-safe: libcurl's global state is set up once, on first use.
 */
#ifndef ENGI_HTTP_H
#define ENGI_HTTP_H

#include <stddef.h>

#include "engi/error.h"

struct http_response {
	long status; /* 0 when no reply came */
	char *body;  /* NUL-terminated */
	size_t len;
	double retry_after_s; /* from Retry-After (seconds form); < 0 when absent */
};

void http_response_release(struct http_response *r);

/*
 * POSTs body to url with headers ("Name: value"). Returns 0 when a reply
 * arrived (any status), ENGI_ETIMEOUT when none came within timeout_s,
 * ENGI_ETOOBIG when the reply is over cap bytes, ENGI_EUNAVAIL when no reply
 * came at all (connection refused or reset, name not resolved), ENGI_EPARSE
 * when a reply began but was cut short (r->status holds its status).
 * Messages never repeat header values: they may hold secrets.
 */
int http_post(const char *url, const char *const *headers, size_t nheaders, const char *body,
	      size_t len, double timeout_s, size_t cap, struct http_response *r,
	      struct engi_error *err);

#endif
