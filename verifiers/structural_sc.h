/*
 * structural_sc.h - StructureClaw's structural model (schema 2.x) read into
 * the frame kernel's model (structural_sc.c; tasks/SCHEMA-structural.md,
 * "StructureClaw models"). engi_structural_parse detects the format by the
 * root and calls the converter on the parsed document, which it owns; the
 * converter keeps no pointer into it. Private to libengiverify, like
 * jansson.
 */
#ifndef ENGI_STRUCTURAL_SC_H
#define ENGI_STRUCTURAL_SC_H

#include <jansson.h>

#include "engi/structural.h"

struct engi_error;

/* 1 when root is an object with "schema_version" and "nodes". */
int engi_structural_sc_detect(const json_t *root);

/* Validates root and converts it into s (initialised and empty): on error
 * ENGI_EPARSE "<file>: <JSON pointer>: <what>", s possibly half filled
 * (the caller releases it). */
int engi_structural_sc_convert(const char *file, json_t *root, struct engi_structural *s,
			       struct engi_error *err);

#endif
