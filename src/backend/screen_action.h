/*
 * screen_action.h - the GUI actions of an agent's `computer` calls turned
 * into the input events the qemu backend sends through QMP. A pure
 * function, no I/O and no QEMU: it is tested (and fuzzed) on its own.
 *
 * screen_action_steps() maps one action of the agent (a JSON object, see
 * below) to a JSON array of steps the backend performs in order: either
 * {"events": [...]}, the argument of one QMP `input-send-event`, or
 * {"sleep_ms": N}. The agent's coordinates are pixels of the scaled screenshot
 * it saw; a pixel x becomes the native pixel n = round(x / scale), clamped to
 * the screen, and the absolute axis value round(n * 32767 / (w - 1)) (0 when
 * w is 1), so that the first and the last pixel map onto the ends of the
 * usb-tablet's 0..32767 range and the guest's inverse mapping lands on n.
 *
 * Actions, with their fields ("x", "y" are screenshot pixels):
 *   move          x, y
 *   click         x, y, button ("left" default, "right", "middle")
 *   double_click  x, y, button
 *   right_click   x, y
 *   drag          x, y (start), x2, y2 (end), button
 *   type          text (at most SCREEN_TEXT_MAX bytes of US-keyboard ASCII)
 *   key           keys: xdotool-style combos, "ctrl+s", "alt+F4", "Return";
 *                 several combos separated by spaces are pressed in turn
 *   scroll        direction ("down" default, "up", "left", "right"),
 *                 amount (clicks, default 3, at most SCREEN_SCROLL_MAX),
 *                 x, y (optional: where to scroll)
 *   wait          seconds (default 1, at most SCREEN_WAIT_MAX_S)
 *   screenshot    nothing to do: an empty array
 * The caller owns the array it gets (json_decref).
 */
#ifndef ENGI_SCREEN_ACTION_H
#define ENGI_SCREEN_ACTION_H

#include <jansson.h>

#include "engi/error.h"

/* Largest absolute axis value of QEMU's pointer devices. */
#define SCREEN_ABS_MAX	  32767
#define SCREEN_TEXT_MAX	  4096
#define SCREEN_SCROLL_MAX 50
#define SCREEN_WAIT_MAX_S 60.0
/* Between a button's press and release, and between the two clicks of a
 * double click. */
#define SCREEN_PRESS_MS		   20
#define SCREEN_DOUBLE_CLICK_GAP_MS 80
/* A drag moves in SCREEN_DRAG_STEPS moves, SCREEN_DRAG_STEP_MS apart, so
 * that toolkits see motion and not a jump. */
#define SCREEN_DRAG_STEPS   8
#define SCREEN_DRAG_STEP_MS 15
/* Pause after each typed character: the guest's keyboard queues (USB HID and
 * PS/2 alike) hold only a few events and drop the rest when flooded. */
#define SCREEN_TYPE_GAP_MS 10
/* Pause between two combos of one key action and between scroll clicks. */
#define SCREEN_KEY_GAP_MS    30
#define SCREEN_SCROLL_GAP_MS 20

/*
 * Maps one GUI action to the steps the backend performs (see above).
 * screen_w/h: the guest display's native size (1 to SCREEN_SIDE_MAX of
 * screen_image.h); scale: the factor the agent's screenshots were taken
 * with. Unknown actions, missing or non-numeric fields, coordinates outside
 * the screenshot, text over SCREEN_TEXT_MAX bytes or characters a US
 * keyboard cannot type are ENGI_EINVALID (ENGI_EPARSE for malformed JSON)
 * with a message naming the field.
 */
int screen_action_steps(const char *action_json, int screen_w, int screen_h, double scale,
			json_t **steps, struct engi_error *err);

#endif
