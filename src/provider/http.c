#include "http.h"

#include "engi/alloc.h"
#include "engi/dynbuf.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_init_rc;

static void curl_init_once(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void http_response_release(struct http_response *r)
{
	engi_free(r->body);
	r->body = NULL;
	r->len = 0;
}

struct sink {
	struct engi_dynbuf buf;
	int over;
	double retry_after_s;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	if (engi_dynbuf_add(&s->buf, p, size * n) < 0) {
		s->over = 1;
		return 0; /* aborts the transfer */
	}
	return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;
	static const char name[] = "retry-after:";
	if (len > sizeof(name) - 1 && !strncasecmp(p, name, sizeof(name) - 1)) {
		char tmp[32];
		size_t k = len - (sizeof(name) - 1);
		if (k >= sizeof(tmp))
			k = sizeof(tmp) - 1;
		memcpy(tmp, p + sizeof(name) - 1, k);
		tmp[k] = '\0';
		char *end;
		double v = strtod(tmp, &end);
		if (end != tmp && v >= 0)
			s->retry_after_s = v;
	}
	return len;
}

int http_post(const char *url, const char *const *headers, size_t nheaders, const char *body,
	      size_t len, double timeout_s, size_t cap, struct http_response *r,
	      struct engi_error *err)
{
	memset(r, 0, sizeof(*r));
	r->retry_after_s = -1;
	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc < 0)
		RAISE(err, ENGI_EIO, "cannot initialise libcurl");
	CURL *c = curl_easy_init();
	if (!c)
		RAISE(err, ENGI_ENOMEM, "out of memory starting an HTTP request");
	struct curl_slist *hl = NULL;
	int rc = 0;
	for (size_t i = 0; i < nheaders; i++) {
		struct curl_slist *nl = curl_slist_append(hl, headers[i]);
		if (!nl) {
			curl_slist_free_all(hl);
			curl_easy_cleanup(c);
			RAISE(err, ENGI_ENOMEM, "out of memory building HTTP headers");
		}
		hl = nl;
	}
	struct sink s = {.retry_after_s = -1};
	engi_dynbuf_init(&s.buf, cap);
	long timeout_ms = (long)(timeout_s * 1000);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &s);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 timeout_ms > 0 && timeout_ms < 30000 ? timeout_ms : 30000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	CURLcode cr = curl_easy_perform(c);
	if (cr == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
		r->retry_after_s = s.retry_after_s;
		size_t n = 0;
		r->body = engi_dynbuf_take(&s.buf, &n);
		r->len = n;
		if (!r->body)
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory reading the reply of '%s'",
					url);
	} else if (s.over) {
		rc = engi_raise(err, ENGI_ETOOBIG, "reply of '%s' is over its cap of %zu bytes",
				url, cap);
	} else if (cr == CURLE_OPERATION_TIMEDOUT) {
		rc = engi_raise(err, ENGI_ETIMEOUT, "no reply from '%s' within %.0f s", url,
				timeout_s);
	} else {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
		if (r->status == 0) /* refused, unresolved, reset before any reply */
			rc = engi_raise(err, ENGI_EUNAVAIL, "request to '%s' failed: %s", url,
					curl_easy_strerror(cr));
		else /* a reply began and was cut short */
			rc = engi_raise(err, ENGI_EPARSE,
					"reply of '%s' (HTTP %ld) was cut short: %s", url,
					r->status, curl_easy_strerror(cr));
	}
	engi_dynbuf_release(&s.buf);
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	return rc;
}
