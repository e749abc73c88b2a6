/*
 * GUI actions of computer calls (JSON in) as QMP input events and pauses
 * (JSON out) for the qemu backend. See screen_action.h.
 */
#include "screen_action.h"

#include "screen_image.h" /* SCREEN_SIDE_MAX, screen_scaled_side */

#include <ctype.h>
#include <math.h>
#include <string.h>

/* The steps being built; any allocation failure of jansson sets oom and
 * the caller reports it once at the end. */
struct steps {
	json_t *arr;
	json_t *events; /* the events array of the last "events" step */
	int oom;
};

static void steps_begin(struct steps *st)
{
	st->events = json_array();
	json_t *step = json_pack("{s:o*}", "events", st->events);
	if (!st->events || !step || json_array_append_new(st->arr, step) < 0) {
		st->oom = 1;
		st->events = NULL;
	}
}

static void steps_event(struct steps *st, json_t *ev)
{
	if (!ev || !st->events || json_array_append_new(st->events, ev) < 0)
		st->oom = 1;
}

static void steps_sleep(struct steps *st, long ms)
{
	json_t *step = json_pack("{s:I}", "sleep_ms", (json_int_t)ms);
	if (!step || json_array_append_new(st->arr, step) < 0)
		st->oom = 1;
}

static json_t *ev_abs(const char *axis, long value)
{
	return json_pack("{s:s, s:{s:s, s:I}}", "type", "abs", "data", "axis", axis, "value",
			 (json_int_t)value);
}

static json_t *ev_btn(const char *button, int down)
{
	return json_pack("{s:s, s:{s:b, s:s}}", "type", "btn", "data", "down", down, "button",
			 button);
}

static json_t *ev_key(const char *qcode, int down)
{
	return json_pack("{s:s, s:{s:b, s:{s:s, s:s}}}", "type", "key", "data", "down", down, "key",
			 "type", "qcode", "data", qcode);
}

/* What one action is checked against: the native screen and the scaled
 * screenshot the agent saw. */
struct action_ctx {
	json_t *obj;
	const char *name;
	int screen_w, screen_h;
	int shot_w, shot_h;
	double scale;
};

struct point {
	long ax, ay; /* absolute axis values, 0..SCREEN_ABS_MAX */
};

static int field_number(const struct action_ctx *c, const char *field, int required, double dflt,
			double *out, struct engi_error *err)
{
	json_t *v = json_object_get(c->obj, field);
	if (!v) {
		if (required)
			RAISE(err, ENGI_EINVALID, "action '%s' needs a number '%s'", c->name,
			      field);
		*out = dflt;
		return 0;
	}
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		RAISE(err, ENGI_EINVALID, "action '%s': '%s' must be a number", c->name, field);
	*out = json_number_value(v);
	return 0;
}

static int field_string(const struct action_ctx *c, const char *field, const char *dflt,
			const char **out, size_t *len, struct engi_error *err)
{
	json_t *v = json_object_get(c->obj, field);
	if (!v) {
		if (!dflt)
			RAISE(err, ENGI_EINVALID, "action '%s' needs a string '%s'", c->name,
			      field);
		*out = dflt;
		if (len)
			*len = strlen(dflt);
		return 0;
	}
	if (!json_is_string(v))
		RAISE(err, ENGI_EINVALID, "action '%s': '%s' must be a string", c->name, field);
	*out = json_string_value(v);
	if (len)
		*len = json_string_length(v);
	return 0;
}

/* Screenshot pixel -> native pixel -> absolute axis value (screen.h). */
static long axis_value(double v, double scale, int native)
{
	long n = lround(v / scale);
	if (n < 0)
		n = 0;
	if (n > native - 1)
		n = native - 1;
	if (native <= 1)
		return 0;
	return lround((double)n * SCREEN_ABS_MAX / (native - 1));
}

static int field_coord(const struct action_ctx *c, const char *field, int shot, int native,
		       long *out, struct engi_error *err)
{
	double v = 0;
	TRY(field_number(c, field, 1, 0, &v, err));
	if (v < 0 || v >= shot)
		RAISE(err, ENGI_EINVALID,
		      "action '%s': '%s' %g is outside the screenshot (0 to %d)", c->name, field, v,
		      shot - 1);
	*out = axis_value(v, c->scale, native);
	return 0;
}

static int field_point(const struct action_ctx *c, const char *xf, const char *yf, struct point *p,
		       struct engi_error *err)
{
	TRY(field_coord(c, xf, c->shot_w, c->screen_w, &p->ax, err));
	TRY(field_coord(c, yf, c->shot_h, c->screen_h, &p->ay, err));
	return 0;
}

static void steps_move(struct steps *st, const struct point *p)
{
	steps_begin(st);
	steps_event(st, ev_abs("x", p->ax));
	steps_event(st, ev_abs("y", p->ay));
}

static int field_button(const struct action_ctx *c, const char **button, struct engi_error *err)
{
	const char *b = NULL;
	TRY(field_string(c, "button", "left", &b, NULL, err));
	if (strcmp(b, "left") && strcmp(b, "right") && strcmp(b, "middle"))
		RAISE(err, ENGI_EINVALID,
		      "action '%s': 'button' is '%.40s'; expected left, right or middle", c->name,
		      b);
	*button = b;
	return 0;
}

static void steps_press_release(struct steps *st, const char *button)
{
	steps_begin(st);
	steps_event(st, ev_btn(button, 1));
	steps_sleep(st, SCREEN_PRESS_MS);
	steps_begin(st);
	steps_event(st, ev_btn(button, 0));
}

static int act_move(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	struct point p;
	TRY(field_point(c, "x", "y", &p, err));
	steps_move(st, &p);
	return 0;
}

static int act_click(const struct action_ctx *c, struct steps *st, const char *button, int times,
		     struct engi_error *err)
{
	struct point p;
	TRY(field_point(c, "x", "y", &p, err));
	if (!button)
		TRY(field_button(c, &button, err));
	steps_move(st, &p);
	for (int i = 0; i < times; i++) {
		if (i)
			steps_sleep(st, SCREEN_DOUBLE_CLICK_GAP_MS);
		steps_press_release(st, button);
	}
	return 0;
}

static int act_drag(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	struct point a, b;
	const char *button;
	TRY(field_point(c, "x", "y", &a, err));
	TRY(field_point(c, "x2", "y2", &b, err));
	TRY(field_button(c, &button, err));
	steps_move(st, &a);
	steps_begin(st);
	steps_event(st, ev_btn(button, 1));
	for (int i = 1; i <= SCREEN_DRAG_STEPS; i++) {
		steps_sleep(st, SCREEN_DRAG_STEP_MS);
		struct point m = {
		    .ax = a.ax + lround((double)(b.ax - a.ax) * i / SCREEN_DRAG_STEPS),
		    .ay = a.ay + lround((double)(b.ay - a.ay) * i / SCREEN_DRAG_STEPS),
		};
		steps_move(st, &m);
	}
	steps_sleep(st, SCREEN_DRAG_STEP_MS);
	steps_begin(st);
	steps_event(st, ev_btn(button, 0));
	return 0;
}

/* A US keyboard: the key that types c, and whether shift is held. */
static int char_key(unsigned char c, const char **qcode, int *shift)
{
	static const char *const letters[26] = {"a", "b", "c", "d", "e", "f", "g", "h", "i",
						"j", "k", "l", "m", "n", "o", "p", "q", "r",
						"s", "t", "u", "v", "w", "x", "y", "z"};
	static const char *const digits[10] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
	static const struct {
		char plain, shifted;
		const char *qcode;
	} symbols[] = {
	    {'-', '_', "minus"},	 {'=', '+', "equal"},	   {'[', '{', "bracket_left"},
	    {']', '}', "bracket_right"}, {';', ':', "semicolon"},  {'\'', '"', "apostrophe"},
	    {'`', '~', "grave_accent"},	 {'\\', '|', "backslash"}, {',', '<', "comma"},
	    {'.', '>', "dot"},		 {'/', '?', "slash"},
	};
	static const char shifted_digits[] = ")!@#$%^&*(";
	*shift = 0;
	if (c >= 'a' && c <= 'z') {
		*qcode = letters[c - 'a'];
	} else if (c >= 'A' && c <= 'Z') {
		*qcode = letters[c - 'A'];
		*shift = 1;
	} else if (c >= '0' && c <= '9') {
		*qcode = digits[c - '0'];
	} else if (c == ' ') {
		*qcode = "spc";
	} else if (c == '\n' || c == '\r') {
		*qcode = "ret";
	} else if (c == '\t') {
		*qcode = "tab";
	} else {
		const char *d = c ? strchr(shifted_digits, c) : NULL;
		if (d) {
			*qcode = digits[d - shifted_digits];
			*shift = 1;
			return 0;
		}
		for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
			if (c == (unsigned char)symbols[i].plain ||
			    c == (unsigned char)symbols[i].shifted) {
				*qcode = symbols[i].qcode;
				*shift = c == (unsigned char)symbols[i].shifted;
				return 0;
			}
		}
		return -1;
	}
	return 0;
}

static int act_type(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	const char *text = NULL;
	size_t len = 0;
	TRY(field_string(c, "text", NULL, &text, &len, err));
	if (len > SCREEN_TEXT_MAX)
		RAISE(err, ENGI_EINVALID, "action 'type': 'text' has %zu bytes, over the %d cap",
		      len, SCREEN_TEXT_MAX);
	/* check everything before building anything */
	for (size_t i = 0; i < len; i++) {
		const char *q;
		int shift;
		if (char_key((unsigned char)text[i], &q, &shift) < 0)
			RAISE(err, ENGI_EINVALID,
			      "action 'type': 'text' byte %zu (0x%02x) cannot be typed on a US "
			      "keyboard",
			      i, (unsigned char)text[i]);
	}
	for (size_t i = 0; i < len; i++) {
		const char *q;
		int shift;
		if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
			continue;
		char_key((unsigned char)text[i], &q, &shift);
		if (i)
			steps_sleep(st, SCREEN_TYPE_GAP_MS);
		steps_begin(st);
		if (shift)
			steps_event(st, ev_key("shift", 1));
		steps_event(st, ev_key(q, 1));
		steps_event(st, ev_key(q, 0));
		if (shift)
			steps_event(st, ev_key("shift", 0));
	}
	return 0;
}

/* xdotool-style key names (lower case) and the qcodes they press. */
static const struct {
	const char *name, *qcode;
	int shift;
} key_names[] = {
    {"ctrl", "ctrl", 0},
    {"control", "ctrl", 0},
    {"ctrl_l", "ctrl", 0},
    {"control_l", "ctrl", 0},
    {"ctrl_r", "ctrl_r", 0},
    {"control_r", "ctrl_r", 0},
    {"shift", "shift", 0},
    {"shift_l", "shift", 0},
    {"shift_r", "shift_r", 0},
    {"alt", "alt", 0},
    {"alt_l", "alt", 0},
    {"alt_r", "alt_r", 0},
    {"super", "meta_l", 0},
    {"super_l", "meta_l", 0},
    {"super_r", "meta_r", 0},
    {"meta", "meta_l", 0},
    {"meta_l", "meta_l", 0},
    {"meta_r", "meta_r", 0},
    {"win", "meta_l", 0},
    {"cmd", "meta_l", 0},
    {"return", "ret", 0},
    {"enter", "ret", 0},
    {"ret", "ret", 0},
    {"kp_enter", "kp_enter", 0},
    {"escape", "esc", 0},
    {"esc", "esc", 0},
    {"tab", "tab", 0},
    {"backspace", "backspace", 0},
    {"delete", "delete", 0},
    {"del", "delete", 0},
    {"insert", "insert", 0},
    {"ins", "insert", 0},
    {"home", "home", 0},
    {"end", "end", 0},
    {"page_up", "pgup", 0},
    {"pageup", "pgup", 0},
    {"prior", "pgup", 0},
    {"pgup", "pgup", 0},
    {"page_down", "pgdn", 0},
    {"pagedown", "pgdn", 0},
    {"next", "pgdn", 0},
    {"pgdn", "pgdn", 0},
    {"up", "up", 0},
    {"down", "down", 0},
    {"left", "left", 0},
    {"right", "right", 0},
    {"space", "spc", 0},
    {"spc", "spc", 0},
    {"minus", "minus", 0},
    {"equal", "equal", 0},
    {"plus", "equal", 1},
    {"period", "dot", 0},
    {"dot", "dot", 0},
    {"comma", "comma", 0},
    {"slash", "slash", 0},
    {"backslash", "backslash", 0},
    {"semicolon", "semicolon", 0},
    {"apostrophe", "apostrophe", 0},
    {"grave", "grave_accent", 0},
    {"bracketleft", "bracket_left", 0},
    {"bracketright", "bracket_right", 0},
    {"menu", "menu", 0},
    {"caps_lock", "caps_lock", 0},
    {"print", "print", 0},
    {"pause", "pause", 0},
};

static const char *const fkeys[12] = {"f1", "f2", "f3", "f4",  "f5",  "f6",
				      "f7", "f8", "f9", "f10", "f11", "f12"};

/* Resolves one key name; a single character is the key that types it,
 * letters regardless of case ("ctrl+C" is ctrl+c). */
static int key_lookup(const char *tok, size_t n, const char **qcode, int *shift)
{
	char low[24];
	if (n == 0 || n >= sizeof(low))
		return -1;
	for (size_t i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)tok[i]);
	low[n] = '\0';
	if (n == 1) {
		if (char_key((unsigned char)low[0], qcode, shift) < 0 || low[0] == '\n' ||
		    low[0] == '\t' || low[0] == '\r')
			return -1;
		if (isalpha((unsigned char)low[0]))
			*shift = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++) {
		if (strcmp(low, key_names[i].name) == 0) {
			*qcode = key_names[i].qcode;
			*shift = key_names[i].shift;
			return 0;
		}
	}
	if (low[0] == 'f' && isdigit((unsigned char)low[1])) {
		char *end;
		long k = strtol(low + 1, &end, 10);
		if (*end == '\0' && k >= 1 && k <= 12 && low[1] != '0') {
			*qcode = fkeys[k - 1];
			*shift = 0;
			return 0;
		}
	}
	return -1;
}

#define COMBO_MAX 8

/* One combo "ctrl+shift+t": every part pressed in order, released in
 * reverse. "ctrl++" means ctrl and the plus key. */
static int key_combo(const char *s, size_t n, struct steps *st, struct engi_error *err)
{
	const char *pressed[COMBO_MAX + 1];
	int np = 0;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		if (s[j] == '+')
			j++; /* a '+' where a name starts is the key itself */
		while (j < n && s[j] != '+')
			j++;
		const char *q;
		int shift;
		if (key_lookup(s + i, j - i, &q, &shift) < 0)
			RAISE(err, ENGI_EINVALID, "action 'key': 'keys' has an unknown key '%.*s'",
			      (int)(j - i > 40 ? 40 : j - i), s + i);
		const char *add[2] = {shift ? "shift" : NULL, q};
		for (int k = 0; k < 2; k++) {
			if (!add[k])
				continue;
			int dup = 0;
			for (int m = 0; m < np; m++)
				dup |= strcmp(pressed[m], add[k]) == 0;
			if (dup)
				continue;
			if (np == COMBO_MAX)
				RAISE(err, ENGI_EINVALID,
				      "action 'key': 'keys' combo '%.*s' has over %d keys",
				      (int)(n > 60 ? 60 : n), s, COMBO_MAX);
			pressed[np++] = add[k];
		}
		i = j;
		if (i < n) { /* the separating '+' */
			i++;
			if (i == n)
				RAISE(err, ENGI_EINVALID,
				      "action 'key': 'keys' combo '%.*s' ends in '+'",
				      (int)(n > 60 ? 60 : n), s);
		}
	}
	steps_begin(st);
	for (int k = 0; k < np; k++)
		steps_event(st, ev_key(pressed[k], 1));
	steps_sleep(st, SCREEN_PRESS_MS);
	steps_begin(st);
	for (int k = np - 1; k >= 0; k--)
		steps_event(st, ev_key(pressed[k], 0));
	return 0;
}

static int act_key(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	const char *keys = NULL;
	size_t len = 0;
	TRY(field_string(c, "keys", NULL, &keys, &len, err));
	if (len > 256)
		RAISE(err, ENGI_EINVALID, "action 'key': 'keys' is over 256 bytes");
	int combos = 0;
	size_t i = 0;
	while (i < len) {
		while (i < len && isspace((unsigned char)keys[i]))
			i++;
		size_t j = i;
		while (j < len && !isspace((unsigned char)keys[j]))
			j++;
		if (j > i) {
			if (combos++)
				steps_sleep(st, SCREEN_KEY_GAP_MS);
			TRY(key_combo(keys + i, j - i, st, err));
		}
		i = j;
	}
	if (!combos)
		RAISE(err, ENGI_EINVALID, "action 'key': 'keys' is empty");
	return 0;
}

static int act_scroll(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	const char *dir = NULL;
	double amount = 0;
	/* the model's computer tool says dx / dy (wheel clicks, positive:
	 * right / down); direction + amount is the other spelling */
	json_t *jdx = json_object_get(c->obj, "dx"), *jdy = json_object_get(c->obj, "dy");
	if (jdx || jdy) {
		double dx = 0, dy = 0;
		TRY(field_number(c, "dx", 0, 0, &dx, err));
		TRY(field_number(c, "dy", 0, 0, &dy, err));
		if (dx == 0 && dy == 0)
			RAISE(err, ENGI_EINVALID, "action 'scroll': 'dx' and 'dy' are both 0");
		int vertical = fabs(dy) >= fabs(dx);
		double d = vertical ? dy : dx;
		dir = vertical ? (d > 0 ? "down" : "up") : (d > 0 ? "right" : "left");
		amount = fabs(d);
		if (json_object_get(c->obj, "direction") || json_object_get(c->obj, "amount"))
			RAISE(err, ENGI_EINVALID,
			      "action 'scroll': give dx/dy or direction/amount, not both");
		goto have_direction;
	}
	TRY(field_string(c, "direction", "down", &dir, NULL, err));
	TRY(field_number(c, "amount", 0, 3, &amount, err));
have_direction:;
	const char *button = !strcmp(dir, "down")    ? "wheel-down"
			     : !strcmp(dir, "up")    ? "wheel-up"
			     : !strcmp(dir, "left")  ? "wheel-left"
			     : !strcmp(dir, "right") ? "wheel-right"
						     : NULL;
	if (!button)
		RAISE(err, ENGI_EINVALID,
		      "action 'scroll': 'direction' is '%.40s'; expected up, down, left or right",
		      dir);
	if (amount < 1)
		RAISE(err, ENGI_EINVALID, "action 'scroll': 'amount' %g is under 1", amount);
	long n = amount > SCREEN_SCROLL_MAX ? SCREEN_SCROLL_MAX : lround(amount);
	int has_x = json_object_get(c->obj, "x") != NULL;
	int has_y = json_object_get(c->obj, "y") != NULL;
	if (has_x || has_y) {
		struct point p;
		TRY(field_point(c, "x", "y", &p, err));
		steps_move(st, &p);
	}
	for (long i = 0; i < n; i++) {
		if (i)
			steps_sleep(st, SCREEN_SCROLL_GAP_MS);
		steps_begin(st);
		steps_event(st, ev_btn(button, 1));
		steps_begin(st);
		steps_event(st, ev_btn(button, 0));
	}
	return 0;
}

static int act_wait(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	double s = 0;
	TRY(field_number(c, "seconds", 0, 1.0, &s, err));
	if (s < 0)
		RAISE(err, ENGI_EINVALID, "action 'wait': 'seconds' %g is negative", s);
	if (s > SCREEN_WAIT_MAX_S)
		s = SCREEN_WAIT_MAX_S;
	steps_sleep(st, lround(s * 1000));
	return 0;
}

static int action_dispatch(const struct action_ctx *c, struct steps *st, struct engi_error *err)
{
	const char *a = c->name;
	if (!strcmp(a, "move"))
		return act_move(c, st, err);
	if (!strcmp(a, "click"))
		return act_click(c, st, NULL, 1, err);
	if (!strcmp(a, "double_click"))
		return act_click(c, st, NULL, 2, err);
	if (!strcmp(a, "right_click"))
		return act_click(c, st, "right", 1, err);
	if (!strcmp(a, "drag"))
		return act_drag(c, st, err);
	if (!strcmp(a, "type"))
		return act_type(c, st, err);
	if (!strcmp(a, "key"))
		return act_key(c, st, err);
	if (!strcmp(a, "scroll"))
		return act_scroll(c, st, err);
	if (!strcmp(a, "wait"))
		return act_wait(c, st, err);
	if (!strcmp(a, "screenshot"))
		return 0;
	RAISE(err, ENGI_EINVALID,
	      "unknown action '%.40s'; expected move, click, double_click, right_click, drag, "
	      "type, key, scroll, wait or screenshot",
	      a);
}

int screen_action_steps(const char *action_json, int screen_w, int screen_h, double scale,
			json_t **steps, struct engi_error *err)
{
	*steps = NULL;
	if (screen_w < 1 || screen_h < 1 || screen_w > SCREEN_SIDE_MAX ||
	    screen_h > SCREEN_SIDE_MAX)
		RAISE(err, ENGI_EINVALID, "screen size %dx%d is out of range", screen_w, screen_h);
	if (!(scale > 0.0 && scale <= 1.0))
		RAISE(err, ENGI_EINVALID, "screenshot scale %g is not in (0, 1]", scale);
	json_error_t je;
	json_t *obj = json_loads(action_json ? action_json : "", JSON_REJECT_DUPLICATES, &je);
	if (!obj)
		RAISE(err, ENGI_EPARSE, "action is not valid JSON: %s (at column %d)", je.text,
		      je.column);
	int rc;
	json_t *name = json_object_get(obj, "action");
	if (!json_is_object(obj)) {
		rc = engi_raise(err, ENGI_EINVALID, "action must be a JSON object");
	} else if (!json_is_string(name)) {
		rc = engi_raise(err, ENGI_EINVALID, "action needs a string 'action'");
	} else {
		struct action_ctx c = {
		    .obj = obj,
		    .name = json_string_value(name),
		    .screen_w = screen_w,
		    .screen_h = screen_h,
		    .shot_w = screen_scaled_side(screen_w, scale),
		    .shot_h = screen_scaled_side(screen_h, scale),
		    .scale = scale,
		};
		struct steps st = {.arr = json_array()};
		if (!st.arr)
			st.oom = 1;
		rc = st.oom ? 0 : action_dispatch(&c, &st, err);
		if (rc == 0 && st.oom)
			rc = engi_raise(err, ENGI_ENOMEM, "out of memory building input events");
		if (rc == 0)
			*steps = st.arr;
		else
			json_decref(st.arr);
	}
	json_decref(obj);
	return rc;
}
