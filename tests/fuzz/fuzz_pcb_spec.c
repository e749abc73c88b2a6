/* Fuzz target: the spec side of pcb-v2 on arbitrary input: the input cut
 * at its first NUL byte into a Document.xml and a spec (key_parameters as
 * text, or a spec.json when it starts with '{'). The document's feature
 * tree and detectors are added to the bank of a fixed shape of our own
 * (a plate with holes, a boss and a cone), the spec is read and checked
 * against it. A failure of either reader leaves nothing; what is checked
 * gives one finding per parameter, each in one state, the counts adding
 * up and the score in [0, 1]. */
#include "engi/alloc.h"
#include "engi/brep.h"
#include "engi/error.h"
#include "engi/pcb_spec.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void need(int cond)
{
	if (!cond)
		abort();
}

/* The shape: six planes of a 40 x 30 x 5 plate, four holes of r 1.5 on a
 * grid, a boss of r 4 around the first, a cone. */
static void shape(struct engi_brep_report *rep, struct engi_brep_face *f)
{
	memset(rep, 0, sizeof(*rep));
	rep->is_doc = 1;
	rep->measured = 0;
	struct engi_brep_props *p = &rep->props;
	p->face = f;
	size_t n = 0;
	static const double planes[6][6] = {{0, 0, 1, 0, 0, 0}, {0, 0, 1, 0, 0, 5},
					    {1, 0, 0, 0, 0, 0}, {1, 0, 0, 40, 0, 0},
					    {0, 1, 0, 0, 0, 0}, {0, 1, 0, 0, 30, 0}};
	for (int i = 0; i < 6; i++, n++) {
		f[n].type = ENGI_SURF_PLANE;
		memcpy(f[n].axis, planes[i], 3 * sizeof(double));
		memcpy(f[n].loc, planes[i] + 3, 3 * sizeof(double));
		f[n].area = 100;
	}
	static const double holes[4][2] = {{10, 10}, {30, 10}, {10, 20}, {30, 20}};
	for (int i = 0; i < 4; i++, n++) {
		f[n].type = ENGI_SURF_CYLINDER;
		f[n].axis[2] = 1;
		f[n].loc[0] = f[n].centroid[0] = holes[i][0];
		f[n].loc[1] = f[n].centroid[1] = holes[i][1];
		f[n].centroid[2] = 2.5;
		f[n].radius = 1.5;
		f[n].vmax = 5;
		f[n].area = 47;
	}
	f[n] = f[n - 4];
	f[n].radius = 4;
	f[n++].forward = 1;
	f[n].type = ENGI_SURF_CONE;
	f[n].axis[2] = 1;
	f[n].radius = 2;
	f[n].semi_angle = 0.5;
	f[n++].vmax = 2;
	p->faces = n;
	p->volume = 5900;
	p->area = 3200;
	p->centroid[0] = 20, p->centroid[1] = 15, p->centroid[2] = 2.5;
	p->aabb_ok = 1;
	p->aabb_max[0] = 40, p->aabb_max[1] = 30, p->aabb_max[2] = 5;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t xl = nul ? (size_t)(nul - data) : size;
	const char *spec = nul ? (const char *)nul + 1 : "";
	size_t sl = nul ? size - xl - 1 : 0;
	struct engi_error e;
	engi_error_init(&e);
	struct engi_fc_doc doc;
	int drc = engi_fc_doc_parse((const char *)data, xl, "'d'", &doc, &e);
	if (drc < 0)
		need(doc.vals == NULL && doc.nvals == 0);
	for (size_t i = 0; drc == 0 && i < doc.nvals; i++)
		need(doc.vals[i].obj < doc.n &&
		     memchr(doc.vals[i].name, 0, sizeof(doc.vals[i].name)) != NULL);
	struct engi_brep_face faces[12];
	struct engi_brep_report rep;
	shape(&rep, faces);
	struct engi_pcb_bank b;
	need(engi_pcb_bank_build(&rep, &b, &e) == 0);
	if (drc == 0) {
		need(engi_pcb_bank_tree(&doc, &b, &e) == 0);
		size_t props = 0;
		for (size_t i = 0; i < b.nfeatures; i++) {
			need(b.feature[i].prop + b.feature[i].nprops <= b.nprops);
			props += b.feature[i].nprops;
		}
		need(props == b.nprops && b.nline_angles <= ENGI_PCB_LINE_ANGLES_MAX);
		for (size_t i = 0; i < b.ngrids; i++)
			need(b.grid[i].rows * b.grid[i].cols == b.grid[i].count &&
			     b.grid[i].rows <= b.grid[i].cols);
		for (size_t i = 0; i < b.ncirculars; i++)
			need(b.circular[i].count >= 3);
		engi_fc_doc_release(&doc);
	}
	struct engi_pcb_spec s;
	int src;
	if (sl && spec[0] == '{') {
		json_error_t je;
		json_t *j = json_loadb(spec, sl, 0, &je);
		src = j ? engi_pcb_spec_read(j, &s, &e) : -1;
		json_decref(j);
		if (!j)
			memset(&s, 0, sizeof(s));
	} else {
		src = engi_pcb_spec_text(spec, sl, &s, &e);
	}
	if (src == 0) {
		struct engi_pcb_spec_result r;
		need(engi_pcb_spec_check(&s, &b, &r, &e) == 0);
		need(r.n == s.n && r.consistent + r.inconsistent + r.not_found == r.n);
		for (size_t i = 0; i < r.n; i++) {
			need(r.f[i].state >= ENGI_PCB_CONSISTENT &&
			     r.f[i].state <= ENGI_PCB_NOT_FOUND);
			need(r.f[i].state != ENGI_PCB_NOT_FOUND || r.f[i].reason != NULL);
			need(engi_pcb_check_name(r.f[i].check) != NULL);
		}
		double sc = engi_pcb_spec_score(r.n, r.inconsistent + r.not_found, 10);
		need(sc >= 0 && sc <= 1);
		engi_pcb_spec_result_release(&r);
		engi_pcb_spec_release(&s);
	} else {
		need(s.p == NULL && s.n == 0);
	}
	engi_pcb_bank_release(&b);
	return 0;
}
