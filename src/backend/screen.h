/*
 * screen.h - what the qemu backend needs to show a guest's screen to an agent
 * and to turn the agent's GUI actions into input events. Pure functions, no
 * I/O and no QEMU: they are tested on their own.
 *
 * Screenshots: QMP `screendump` writes a binary PPM; screen_ppm_to_png()
 * shrinks it by the episode's screenshot scale (area average) and encodes a
 * PNG. The input is untrusted (a guest controls its resolution): every size
 * and length is checked before it is used.
 *
 * Actions: screen_action_steps() maps one action of the agent (a JSON object,
 * see below) to a JSON array of steps the backend performs in order: either
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
#ifndef ENGI_SCREEN_H
#define ENGI_SCREEN_H

#include <stddef.h>

#include <jansson.h>

#include "engi/error.h"

/* Largest PPM side accepted; a bigger header is refused before any allocation. */
#define SCREEN_SIDE_MAX 16384
/* Largest image file decoded for scaling, in pixels. */
#define SCREEN_IMAGE_PIXELS_MAX 40000000
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
 * Decodes a P6 PPM (maxval 255), scales it by scale in (0, 1] with an area
 * average (box filter) to round(w*scale) x round(h*scale) (at least 1x1;
 * scale 1.0 copies), and encodes an 8-bit RGB PNG into *png (engi_malloc'd,
 * the caller engi_free's it). out_w and out_h may be NULL. Returns 0, or
 * ENGI_EPARSE for a malformed or truncated PPM, ENGI_ETOOBIG for a side over
 * SCREEN_SIDE_MAX, ENGI_EINVALID for a bad scale, ENGI_ENOMEM.
 */
int screen_ppm_to_png(const unsigned char *ppm, size_t len, double scale, unsigned char **png,
		      size_t *png_len, int *out_w, int *out_h, struct engi_error *err);

/* Reads width and height from a PNG's IHDR. Returns 0 or ENGI_EPARSE. */
int screen_png_size(const unsigned char *png, size_t len, int *w, int *h);

/*
 * An image file for a model. PNG or JPEG data (anything else is
 * ENGI_EPARSE) is passed through when it is within max_side pixels on its
 * longer side and max_bytes long. A larger PNG (8- or 16-bit, not
 * interlaced; alpha is blended onto white) is area-scaled to fit max_side,
 * halved again up to three times while its encoding is over max_bytes, and
 * encoded as an RGB PNG; a PNG it cannot decode is ENGI_ENOTSUP. A JPEG is
 * never scaled: over max_bytes it is ENGI_ETOOBIG. out->data is the
 * caller's (engi_free); src_w/src_h/w/h are 0 for JPEG.
 */
struct screen_image {
	unsigned char *data;
	size_t len;
	const char *type; /* "image/png" or "image/jpeg" */
	int src_w, src_h, w, h;
};
int screen_image_fit(const unsigned char *data, size_t len, int max_side, size_t max_bytes,
		     struct screen_image *out, struct engi_error *err);

/*
 * Maps one GUI action to the steps the backend performs (see above).
 * screen_w/h: the guest display's native size; scale: the factor the agent's
 * screenshots were taken with. Unknown actions, missing or non-numeric
 * fields, coordinates outside the screenshot, text over SCREEN_TEXT_MAX bytes
 * or characters a US keyboard cannot type are ENGI_EINVALID (ENGI_EPARSE for
 * malformed JSON) with a message naming the field.
 */
int screen_action_steps(const char *action_json, int screen_w, int screen_h, double scale,
			json_t **steps, struct engi_error *err);

#endif
