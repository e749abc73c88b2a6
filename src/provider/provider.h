/*
 * provider.h - language models behind an HTTP API: OpenAI-compatible Chat
 * Completions (OpenAI, vLLM, llama.cpp's server, gateways) and Anthropic
 * Messages.
 *
 * A provider_config is parsed once from a models.json entry; the API key is
 * not part of it: the caller reads the variable named by api_key_env and
 * passes the value to provider_complete, which puts it in an HTTP header and
 * nowhere else (never in a message, a trace or the request body it hands
 * back). Header values are registered as secrets (secrets.h) when the
 * config is parsed.
 *
 * A conversation (struct pconv) is a system prompt and a list of messages in
 * a provider-neutral form: user text (with optional PNG images), assistant
 * text with tool calls, and tool results. Each provider turns it into its
 * wire format, declares the action tools (bash, computer, read_image,
 * ask_user, done, fail) in every request, and parses the reply into a struct preply. Only the
 * last history_turns assistant turns are sent verbatim; the first user
 * message (the instruction) is always kept.
 *
 * provider_complete blocks for the whole request, retries included: 429, 5xx,
 * timeouts, connection failures and replies cut short are retried with
 * exponential backoff and jitter, honouring Retry-After. What it returns
 * tells infrastructure from the model: ENGI_EUNAVAIL when the endpoint
 * refuses connections, cannot be resolved, times out or answers 5xx/429
 * past its retries; ENGI_EAUTH when it answers 401 or 403 (not retried);
 * ENGI_ETIMEOUT only when the caller's deadline cut the request (the
 * episode's wall time ran out). A reply that is malformed, truncated or over
 * the cap is ENGI_EPARSE or ENGI_ETOOBIG, never a crash; any other refusal
 * (400, 404: the request or the model name) is ENGI_EIO. The
 * conversation, config and reply are owned by the caller; preply_release and
 * pconv_release free them. Thread-safe.
 */
#ifndef ENGI_PROVIDER_H
#define ENGI_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "engi/error.h"

typedef struct json_t json_t;
struct provider_config;
struct pconv;
struct preply;

/*
 * One provider: a descriptor in its own file (openai.c, anthropic.c) and one
 * line in registry.c. Everything that differs between the APIs is here;
 * provider.c reads only this.
 */
struct provider_ops {
	const char *name;	    /* as in models.json "provider" and the trace's model_start */
	const char *summary;	    /* what `engisweep inspect` lists */
	const char *base_url;	    /* the default base_url */
	const char *path;	    /* of the endpoint, after base_url: "/messages" */
	const char *auth;	    /* the header that carries the key, up to the key */
	const char *const *headers; /* sent with every request, NULL-ended */
	/* extended thinking: takes thinking_budget_tokens, and reasoning_effort
	 * (low, medium, high) sets its budget; without it reasoning_effort goes
	 * into the request as written */
	int thinking;
	/* the request body for a conversation, a new reference */
	json_t *(*build)(const struct provider_config *c, const struct pconv *conv,
			 struct engi_error *err);
	/* a reply body, a JSON object, into r */
	int (*parse)(json_t *root, struct preply *r, struct engi_error *err);
};

/* Every provider built in, NULL-ended (src/provider/registry.c). */
extern const struct provider_ops *const provider_registry[];
/* The provider of that name; NULL and "'NAME' is not one of openai, ..."
 * (the registry's names) when there is none. */
const struct provider_ops *provider_lookup(const char *name, struct engi_error *err);
/* The registry's names, ", "-separated, into buf. */
void provider_names(char *buf, size_t n);

/* How the model acts: native tool calls, fenced blocks in its text, or
 * EngiWorld's XML <response> document (no tools declared; the agent reads
 * the document, ew_xml.h). */
enum tool_mode { TOOLS_NATIVE, TOOLS_TEXT, TOOLS_ENGIWORLD };
/* "native", "text", "engiworld" */
const char *provider_tool_mode_name(int mode);

#define PROVIDER_TIMEOUT_S_DEFAULT     300.0
#define PROVIDER_RETRIES_DEFAULT       5
#define PROVIDER_RETRY_BASE_S_DEFAULT  2.0
#define PROVIDER_RETRY_MAX_S	       120.0
#define PROVIDER_REPLY_CAP	       ((size_t)16 << 20)
#define PROVIDER_HISTORY_TURNS_DEFAULT 15
#define PROVIDER_MAX_HEADERS	       16
/* Anthropic extended thinking: the minimum budget, the budgets of
 * reasoning_effort low, medium and high, and what max_tokens leaves for
 * the answer when it is derived from the budget. */
#define PROVIDER_THINKING_MIN	 1024
#define PROVIDER_THINKING_LOW	 1024
#define PROVIDER_THINKING_MEDIUM 4096
#define PROVIDER_THINKING_HIGH	 16384
#define PROVIDER_ANSWER_TOKENS	 4096

/* Which field of an OpenAI request carries max_tokens. */
enum token_field { TOKEN_FIELD_MAX_TOKENS, TOKEN_FIELD_MAX_COMPLETION_TOKENS };

struct provider_config {
	char name[64];
	const struct provider_ops *ops;
	char base_url[512];
	char model[128];
	char api_key_env[128];
	double temperature; /* NAN: the server's default */
	long max_tokens;    /* 0: the provider's default (Anthropic needs one: 4096) */
	char reasoning_effort[16];
	long thinking_budget; /* Anthropic: budget_tokens of extended thinking; 0: none */
	int token_field;      /* OpenAI: enum token_field */
	double price_in_per_mtok, price_out_per_mtok;
	double timeout_s;
	int max_retries;
	double retry_base_s;
	size_t reply_cap;
	int history_turns;
	int tool_mode;
	int image_tool;			     /* declare read_image */
	int ask_tool;			     /* declare ask_user (set by the caller per task) */
	double rpm, tpm;		     /* 0: no limit */
	char *headers[PROVIDER_MAX_HEADERS]; /* "Name: value" */
	size_t nheaders;
};

/* Parses a models.json entry (a JSON object as text). Errors name the model
 * and the field. */
int provider_config_parse(struct provider_config *c, const char *entry_json,
			  struct engi_error *err);
void provider_config_release(struct provider_config *c);
/* provider_config_parse into a new config (provider_config_free), for a
 * caller that keeps it; the error, for the caller to place in its file,
 * reads "/FIELD: what is wrong" (without the model's name). */
int provider_config_load(const char *entry_json, struct provider_config **out,
			 struct engi_error *err);
void provider_config_free(struct provider_config *c);
/* The settings of a provider that no models.json entry names (a replay):
 * the defaults of every field. */
void provider_config_init(struct provider_config *c, const struct provider_ops *ops,
			  const char *name, const char *model);
/* dst becomes a copy of src that owns its own strings. */
int provider_config_copy(struct provider_config *dst, const struct provider_config *src,
			 struct engi_error *err);
/* Sets one of the fields that a condition may override (history_turns,
 * tools, image_tool: matrix.h's cond_settings) from a JSON value as
 * provider_config_parse reads it from an entry (a replay's tool mode, as
 * its recorded trace names it). */
int provider_config_set(struct provider_config *c, const char *key, const json_t *v,
			struct engi_error *err);

struct ptool_call {
	char *id;
	char *name;
	char *args_json; /* a JSON object as text */
};

enum pmsg_role { PM_USER, PM_ASSISTANT, PM_TOOL };

struct pmsg {
	int role;
	char *text;
	struct ptool_call *calls; /* PM_ASSISTANT */
	size_t ncalls;
	char *tool_call_id;  /* PM_TOOL */
	char *tool_name;     /* PM_TOOL */
	char *png_b64;	     /* optional image, base64 PNG or JPEG */
	char *thinking_json; /* PM_ASSISTANT: the reply's thinking blocks (JSON array), or NULL */
	char **more_png;     /* PM_USER: further images (pconv_add_image) */
	size_t nmore_png;
};

struct pconv {
	char *system;
	struct pmsg *v;
	size_t n, alloc;
};

void pconv_init(struct pconv *c);
void pconv_release(struct pconv *c);
int pconv_set_system(struct pconv *c, const char *text);
/* Appends a message; the strings are copied. */
int pconv_user(struct pconv *c, const char *text, const char *png_b64);
int pconv_assistant(struct pconv *c, const char *text, const struct ptool_call *calls,
		    size_t ncalls);
int pconv_tool(struct pconv *c, const char *call_id, const char *tool_name, const char *text,
	       const char *png_b64);
/* Keeps the thinking blocks of a reply (a JSON array as text) with the last
 * message, which must be PM_ASSISTANT; NULL keeps nothing. */
int pconv_set_thinking(struct pconv *c, const char *thinking_json);
/* Adds one more base64 PNG to the last message, which must be PM_USER. */
int pconv_add_image(struct pconv *c, const char *png_b64);
/* Index of the first message sent with a window of the last turns
 * assistant turns (message 0, the instruction, is always sent). */
size_t pconv_window_start(const struct pconv *c, int turns);

struct preply {
	char *text;
	struct ptool_call *calls;
	size_t ncalls;
	int64_t tokens_in, tokens_out;
	char *stop_reason;
	char *thinking_json; /* Anthropic: thinking blocks with their signatures, or NULL */
	char *request;	     /* the body sent (no key: keys live in headers only) */
	char *raw;	     /* the reply body as received, valid UTF-8 */
	int attempts;
	double wait_s; /* time spent in backoff */
	char last_error[256];
};

void preply_release(struct preply *r);

/* Dollars for a reply's usage at the configured prices. */
double provider_cost_usd(const struct provider_config *c, int64_t in, int64_t out);

/* "image/jpeg" for base64 JPEG data, else "image/png". */
const char *provider_image_type(const char *b64);

/* The wire parts, exposed for tests and fuzzing. */
char *provider_build_request(const struct provider_config *c, const struct pconv *conv,
			     struct engi_error *err);
int provider_parse_reply(const struct provider_config *c, const char *body, size_t len,
			 struct preply *r, struct engi_error *err);
/* Text fallback: fenced blocks ```bash, ```done, ```fail, ```computer,
 * ```read_image, ```ask_user in order become tool calls. */
int provider_parse_text_actions(const char *text, struct preply *r, struct engi_error *err);

/*
 * Who paces the requests: ask returns the seconds to wait before sending a
 * request of about est_tokens tokens, tell reports how it went (the HTTP
 * status, 0 when no reply came, and the tokens used). A sweep's governor
 * on rank 0 implements it across ranks; NULL means the per-process buckets
 * below.
 */
struct provider_gate {
	double (*ask)(void *arg, double est_tokens);
	void (*tell)(void *arg, long status, double tokens, double est_tokens);
	void *arg;
};

/* Sends the conversation, with retries; api_key may be NULL or "".
 * deadline (clk_now_mono() seconds, 0: none) bounds everything: each request's
 * timeout, the pacing and the backoff; a request cut by it is
 * ENGI_ETIMEOUT. */
int provider_complete(const struct provider_config *c, const char *api_key,
		      const struct pconv *conv, const struct provider_gate *gate, double deadline,
		      struct preply *r, struct engi_error *err);

/* Token buckets per model name, in this process: reserves one request of
 * est_tokens tokens within the rpm and tpm limits of c and returns the
 * seconds to wait before sending it (requests are spaced evenly: no burst). */
double provider_throttle_reserve(const struct provider_config *c, double est_tokens);
/* Reserves and sleeps. */
void provider_throttle(const struct provider_config *c, double est_tokens);
/* Tells the buckets what a reply really used. */
void provider_throttle_used(const struct provider_config *c, double tokens, double est_tokens);

#endif
