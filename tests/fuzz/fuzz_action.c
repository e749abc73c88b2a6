/*
 * Fuzz target for the GUI actions of `computer` calls (src/backend/screen_action.c):
 * the agent's action JSON mapped to the steps the qemu backend performs. The
 * first byte picks the guest's screen (low three bits) and the screenshot
 * scale (next two bits); the rest is the action's text. After the parse:
 *   - a failure has a code and a message, and no steps;
 *   - a success is an array of steps, each either {"sleep_ms": N} with N in
 *     0..SCREEN_WAIT_MAX_S seconds or {"events": [...]} with at least one
 *     event: "abs" on axis x or y within 0..SCREEN_ABS_MAX, "btn" of a known
 *     button, "key" with a qcode; every press is of a key or button not yet
 *     down and every release of one that is, and none is left down at the
 *     end; the sleeps add up to at most SCREEN_WAIT_MAX_S seconds.
 * Anything else aborts. FUZZ_VERBOSE prints what each input gave.
 */
#include "fuzz_file.h"

#include "screen_action.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int fuzz_screens[8][2] = {
    {1, 1}, {2, 3}, {640, 480}, {800, 600}, {1280, 800}, {1920, 1080}, {3, 16384}, {16384, 16384},
};
static const double fuzz_scales[4] = {1.0, 0.5, 1.0 / 3.0, 0.01};

#define HELD_MAX 32

struct held {
	const char *name[HELD_MAX];
	int n;
};

/* A press or release of name: presses of what is down, releases of what is
 * up, abort. */
static void held_toggle(struct held *h, const char *name, int down)
{
	int at = -1;
	for (int i = 0; i < h->n; i++)
		if (!strcmp(h->name[i], name))
			at = i;
	if (down) {
		if (at >= 0 || h->n == HELD_MAX)
			abort();
		h->name[h->n++] = name;
	} else {
		if (at < 0)
			abort();
		h->name[at] = h->name[--h->n];
	}
}

static void check_event(const json_t *ev, struct held *h)
{
	const char *type = json_string_value(json_object_get(ev, "type"));
	json_t *d = json_object_get(ev, "data");
	if (!type || !json_is_object(d))
		abort();
	if (!strcmp(type, "abs")) {
		const char *axis = json_string_value(json_object_get(d, "axis"));
		json_t *v = json_object_get(d, "value");
		if (!axis || (strcmp(axis, "x") && strcmp(axis, "y")) || !json_is_integer(v) ||
		    json_integer_value(v) < 0 || json_integer_value(v) > SCREEN_ABS_MAX)
			abort();
		return;
	}
	json_t *down = json_object_get(d, "down");
	if (!json_is_boolean(down))
		abort();
	if (!strcmp(type, "btn")) {
		static const char *const buttons[] = {"left",	    "right",	  "middle",
						      "wheel-up",   "wheel-down", "wheel-left",
						      "wheel-right"};
		const char *b = json_string_value(json_object_get(d, "button"));
		size_t i = 0;
		while (b && i < sizeof(buttons) / sizeof(buttons[0]) && strcmp(b, buttons[i]))
			i++;
		if (!b || i == sizeof(buttons) / sizeof(buttons[0]))
			abort();
		held_toggle(h, buttons[i], json_is_true(down));
		return;
	}
	if (strcmp(type, "key"))
		abort();
	json_t *key = json_object_get(d, "key");
	const char *kt = json_string_value(json_object_get(key, "type"));
	const char *q = json_string_value(json_object_get(key, "data"));
	if (!kt || strcmp(kt, "qcode") || !q || !q[0])
		abort();
	held_toggle(h, q, json_is_true(down));
}

static void check_steps(const json_t *steps)
{
	struct held h = {.n = 0};
	long long slept = 0;
	size_t i;
	json_t *step;
	if (!json_is_array(steps))
		abort();
	json_array_foreach(steps, i, step)
	{
		if (!json_is_object(step) || json_object_size(step) != 1)
			abort();
		json_t *ms = json_object_get(step, "sleep_ms");
		if (ms) {
			if (!json_is_integer(ms) || json_integer_value(ms) < 0)
				abort();
			slept += json_integer_value(ms);
			if (slept > (long long)(SCREEN_WAIT_MAX_S * 1000))
				abort();
			continue;
		}
		json_t *events = json_object_get(step, "events");
		if (!json_is_array(events) || json_array_size(events) == 0)
			abort();
		size_t k;
		json_t *ev;
		json_array_foreach(events, k, ev) check_event(ev, &h);
	}
	if (h.n)
		abort(); /* a key or button left down */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const int *screen = fuzz_screens[data[0] & 7];
	double scale = fuzz_scales[(data[0] >> 3) & 3];
	char *text = malloc(size);
	if (!text)
		abort();
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	json_t *steps = (json_t *)1;
	struct engi_error e;
	engi_error_init(&e);
	int rc = screen_action_steps(text, screen[0], screen[1], scale, &steps, &e);
	fuzz_note("action", rc, e.msg);
	if (rc < 0) {
		if (steps || !e.msg[0] || e.code != rc)
			abort();
	} else {
		if (rc != 0)
			abort();
		check_steps(steps);
		json_decref(steps);
	}
	free(text);
	return 0;
}
