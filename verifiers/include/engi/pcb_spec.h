/*
 * pcb_spec.h - the key parameters of a Parametric CAD Bench spec
 * (spec.json: name, description, key_parameters), read as the published
 * validator 0.6.0 reads them, for its spec-consistency score
 * (docs/verifiers.md#the-spec-side-of-pcb-v2).
 *
 * key_parameters is text ("length = 40 mm, hole_count = 4\n...") or an
 * object ({"length": {"value": 40, "unit": "mm"}, ...}). Each parameter is
 * a scalar (lengths in mm, angles in radians), a vector (a parenthesised
 * list), a count (a count key with an integral, unitless value) or a
 * string (a word such as "right" or "M6"); what is neither is dropped, as
 * the validator drops it (expressions such as 100/25, text without "=").
 */
#ifndef ENGI_PCB_SPEC_H
#define ENGI_PCB_SPEC_H

#include <stddef.h>

#include "engi/error.h"

typedef struct json_t json_t;

#define ENGI_PCB_KEY_MAX    128 /* longer keys are dropped */
#define ENGI_PCB_TEXT_MAX   128 /* longer strings are dropped */
#define ENGI_PCB_VEC_MAX    32	/* vectors with more components are dropped */
#define ENGI_PCB_PARAMS_MAX 4096

enum engi_pcb_kind { ENGI_PCB_SCALAR, ENGI_PCB_VECTOR, ENGI_PCB_COUNT, ENGI_PCB_STRING };

struct engi_pcb_param {
	char key[ENGI_PCB_KEY_MAX]; /* lower case */
	int kind;		    /* enum engi_pcb_kind */
	double value;		    /* scalar */
	double vec[ENGI_PCB_VEC_MAX];
	int nvec;
	long long count;
	char text[ENGI_PCB_TEXT_MAX]; /* string */
};

/* In the validator's order: per kind, the order keys were first given (a
 * key given again with the same kind takes the later value in the first
 * place). */
struct engi_pcb_spec {
	struct engi_pcb_param *p;
	size_t n;
};

/* Reads the key parameters of spec (the spec.json object; no
 * key_parameters: none). ENGI_EPARSE only when spec is not an object;
 * ENGI_ENOMEM, ENGI_ETOOBIG past ENGI_PCB_PARAMS_MAX. */
int engi_pcb_spec_read(json_t *spec, struct engi_pcb_spec *out, struct engi_error *err);
/* Reads key_parameters given as text. */
int engi_pcb_spec_text(const char *text, size_t len, struct engi_pcb_spec *out,
		       struct engi_error *err);
void engi_pcb_spec_release(struct engi_pcb_spec *s);

#endif
