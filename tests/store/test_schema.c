/*
 * Every field of engi/schema.h's list, walked from the list itself: a
 * distinctive value per field goes through the journal line (record_to_json,
 * record_from_json), the HDF5 store (store_append, store_read, the analysis'
 * struct engi_res_episode), back into a record (record_from_row), and,
 * for the fields an episodes CSV has, through the CSV reader; it must come
 * out unchanged at every stage. A field the list gains and one path forgets
 * fails here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engi/alloc.h"
#include "engi/csvin.h"
#include "engi/schema.h"
#include "fixture.h"
#include "record.h"
#include "store.h"

/* The value of field i (its place in the list) of each kind. */
#define TEXT_OF(i, name) "f" #i "-" #name
static int value_int(int i)
{
	return 1000 + 37 * i;
}
static int64_t value_i64(int i)
{
	return 4000000000000LL + i;
}
static int value_bool(int i)
{
	return i % 2; /* neighbours differ: success 1, feasible 0 */
}
static double value_num(int i)
{
	return 0.125 + i / 1024.0;
}
/* not the default "done", not the first or last */
#define VALUE_OUTCOME OUTCOME_AGENT_ERROR
/* an outcome that may be unknown: another one */
#define VALUE_OUTCOME_O OUTCOME_TURN_LIMIT

#define SET_S(r, i, name)                                                                          \
	snprintf(r->name, sizeof(r->name), "%.*s", (int)sizeof(r->name) - 1, TEXT_OF(i, name))
#define SET_M		  SET_S
#define SET_O(r, i, name) (r->name = VALUE_OUTCOME)
#define SET_o(r, i, name) (r->name = VALUE_OUTCOME_O)
#define SET_I(r, i, name) (r->name = value_int(i))
#define SET_L(r, i, name) (r->name = value_i64(i))
#define SET_B(r, i, name) (r->name = value_bool(i))
#define SET_D(r, i, name) (r->name = value_num(i))

/* a record's field against the value it was given */
#define CHECK_REC_S(r, i, name) CHECK_STR(r->name, fit(TEXT_OF(i, name), sizeof(r->name)))
#define CHECK_REC_M		CHECK_REC_S
#define CHECK_REC_O(r, i, name) CHECK_INT(r->name, VALUE_OUTCOME)
#define CHECK_REC_o(r, i, name) CHECK_INT(r->name, VALUE_OUTCOME_O)
#define CHECK_REC_I(r, i, name) CHECK_INT(r->name, value_int(i))
#define CHECK_REC_L(r, i, name) CHECK(r->name == value_i64(i))
#define CHECK_REC_B(r, i, name) CHECK_INT(r->name, value_bool(i))
#define CHECK_REC_D(r, i, name) CHECK(r->name == value_num(i))

/* a row's field against the record it came from */
#define CHECK_ROW_S(e, r, name) CHECK_STR(e->name, r->name)
#define CHECK_ROW_M		CHECK_ROW_S
#define CHECK_ROW_O(e, r, name) CHECK_STR(e->name, outcome_name(r->name))
#define CHECK_ROW_o		CHECK_ROW_O
#define CHECK_ROW_I(e, r, name) CHECK_INT(e->name, r->name)
#define CHECK_ROW_L(e, r, name) CHECK(e->name == r->name)
#define CHECK_ROW_B(e, r, name) CHECK_INT(e->name, r->name)
#define CHECK_ROW_D(e, r, name) CHECK(e->name == r->name)

static char fitted[512];
/* the text as a field of size bytes keeps it */
static const char *fit(const char *s, size_t size)
{
	snprintf(fitted, sizeof(fitted), "%.*s", (int)size - 1, s);
	return fitted;
}

/* the field list as an index: FIELD_<name> is the field's place */
enum {
#define FIELD_INDEX(name, kind, rec, row, since, csv, dflt) FIELD_##name,
	ENGI_EPISODE_FIELDS(FIELD_INDEX)
#undef FIELD_INDEX
	    NFIELDS
};

static void fill(struct record *r)
{
#define SET(name, kind, rec, row, since, csv, dflt) SET_##kind(r, FIELD_##name, name);
	ENGI_EPISODE_FIELDS(SET)
#undef SET
}

static int fields_checked;

static void check_record(const struct record *r)
{
#define CHECK_REC(name, kind, rec, row, since, csv, dflt)                                          \
	CHECK_REC_##kind(r, FIELD_##name, name);                                                   \
	fields_checked++;
	ENGI_EPISODE_FIELDS(CHECK_REC)
#undef CHECK_REC
}

static void check_row(const struct engi_res_episode *e, const struct record *r)
{
#define CHECK_ROW(name, kind, rec, row, since, csv, dflt) CHECK_ROW_##kind(e, r, name);
	ENGI_EPISODE_FIELDS(CHECK_ROW)
#undef CHECK_ROW
}

/* Every field is a key of the journal line, in the list's order. */
static void check_line_keys(const char *line)
{
	const char *at = line;
#define KEY(name, kind, rec, row, since, csv, dflt)                                                \
	{                                                                                          \
		const char *k = strstr(at, "\"" #name "\":");                                      \
		CHECK(k != NULL);                                                                  \
		if (k)                                                                             \
			at = k;                                                                    \
	}
	ENGI_EPISODE_FIELDS(KEY)
#undef KEY
}

static void test_journal_store_reader(const char *dir)
{
	struct engi_error err;
	engi_error_init(&err);
	struct record a, b;
	record_init(&a);
	record_init(&b);
	fill(&a);
	fields_checked = 0;
	check_record(&a);
	CHECK_INT(fields_checked, NFIELDS);

	/* the journal line and back */
	char *line = NULL;
	size_t len = 0;
	CHECK_INT(record_to_json(&a, &line, &len, &err), 0);
	check_line_keys(line);
	CHECK_INT(record_from_json(line, len, &b, &err), 0);
	check_record(&b);
	engi_free(line);

	/* the HDF5 store, read by the analysis reader */
	char path[512];
	snprintf(path, sizeof(path), "%s/schema.h5", dir);
	struct fixture_meta f;
	fixture_meta_init(&f, 16);
	struct store *s = NULL;
	CHECK_INT(store_create(&s, path, &f.meta, &err), 0);
	CHECK_INT(store_append(s, &b, &err), 0);
	CHECK_INT(store_close(&s, &err), 0);
	struct engi_results res;
	CHECK_INT(store_read(path, &res, &err), 0);
	CHECK_INT(res.nepisodes, 1);
	if (res.nepisodes == 1) {
		check_row(&res.episodes[0], &b);
		/* and from the row back into a record */
		struct record c;
		record_init(&c);
		CHECK_INT(record_from_row(&c, &res.episodes[0], &err), 0);
		check_record(&c);
		record_release(&c);
	}
	engi_results_release(&res);
	fixture_meta_release(&f);
	record_release(&a);
	record_release(&b);
}

/* The fields an episodes CSV has: one column each, its value read into
 * the row unchanged. */
static void test_csv(const char *dir)
{
	struct record a;
	record_init(&a);
	fill(&a);
	struct engi_res_episode want;
	record_to_row(&a, &want);
	char path[512];
	snprintf(path, sizeof(path), "%s/schema.csv", dir);
	FILE *fp = fopen(path, "w");
	CHECK(fp != NULL);
	int ncols = 0;
	const char *sep = "";
#define HEAD_no(name)
#define HEAD_COL(name)                                                                             \
	fprintf(fp, "%s%s", sep, #name);                                                           \
	sep = ",";                                                                                 \
	ncols++;
#define HEAD_req				     HEAD_COL
#define HEAD_opt				     HEAD_COL
#define HEAD_like				     HEAD_COL
#define HEAD(name, kind, rec, row, since, csv, dflt) HEAD_##csv(name)
	ENGI_EPISODE_FIELDS(HEAD)
	fputs("\n", fp);
	sep = "";
#define CELL_S(name) fprintf(fp, "%s%s", sep, want.name)
#define CELL_M	     CELL_S
#define CELL_O	     CELL_S
#define CELL_o	     CELL_S
#define CELL_I(name) fprintf(fp, "%s%d", sep, (int)want.name)
#define CELL_L(name) fprintf(fp, "%s%lld", sep, (long long)want.name)
#define CELL_B	     CELL_I
#define CELL_D(name) fprintf(fp, "%s%.17g", sep, want.name)
#define VAL_no(name, kind)
#define VAL_COL(name, kind)                                                                        \
	CELL_##kind(name);                                                                         \
	sep = ",";
#define VAL_req					    VAL_COL
#define VAL_opt					    VAL_COL
#define VAL_like				    VAL_COL
#define VAL(name, kind, rec, row, since, csv, dflt) VAL_##csv(name, kind)
	ENGI_EPISODE_FIELDS(VAL)
	fputs("\n", fp);
	fclose(fp);
	CHECK(ncols >= 10);

	struct engi_results res;
	struct engi_error err;
	engi_error_init(&err);
	CHECK_INT(engi_results_read_csv(path, NULL, &res, &err), 0);
	CHECK_INT(res.nepisodes, 1);
	if (res.nepisodes == 1) {
		const struct engi_res_episode *e = &res.episodes[0];
#define SAME_S(name) CHECK_STR(engi_res_str(&res, e->name), want.name)
#define SAME_M	     SAME_S
#define SAME_O	     SAME_S
#define SAME_o	     SAME_S
#define SAME_I(name) CHECK_INT(e->name, want.name)
#define SAME_L(name) CHECK(e->name == want.name)
#define SAME_B	     SAME_I
#define SAME_D(name) CHECK(e->name == want.name)
#define SAME_no(name, kind)
#define SAME_COL(name, kind)			     SAME_##kind(name);
#define SAME_req				     SAME_COL
#define SAME_opt				     SAME_COL
#define SAME_like				     SAME_COL
#define SAME(name, kind, rec, row, since, csv, dflt) SAME_##csv(name, kind)
		ENGI_EPISODE_FIELDS(SAME)
	}
	engi_results_release(&res);
	record_release(&a);
}

int main(void)
{
	char dir[] = "/tmp/engi_schema_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	test_journal_store_reader(dir);
	test_csv(dir);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
	return check_exit();
}
