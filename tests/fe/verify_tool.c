/*
 * fe_verify_tool VERIFIER.json TASK_DIR ARTIFACT_DIR: runs one verifier
 * kind on delivered files, as an episode would, and prints one line per
 * assertion ("name state value detail") for the test scripts. Exit 0 when
 * the kind ran, 2 when the verifier object is refused (message on stderr).
 */
#include "engi/error.h"
#include "engi/verify.h"

#include <jansson.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: fe_verify_tool VERIFIER.json TASK_DIR ARTIFACT_DIR\n");
		return 2;
	}
	json_error_t je;
	json_t *ver = json_load_file(argv[1], 0, &je);
	if (!ver) {
		fprintf(stderr, "%s: %s\n", argv[1], je.text);
		return 2;
	}
	struct engi_error err;
	engi_error_init(&err);
	const struct engi_verifier_kind *k =
	    engi_verifier_lookup(json_string_value(json_object_get(ver, "kind")), &err);
	void *crit = NULL;
	if (!k || k->parse(ver, argv[1], NULL, "/verifier", &crit, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		json_decref(ver);
		return 2;
	}
	struct engi_verify_ctx ctx = {.artifact_dir = argv[3], .task_dir = argv[2]};
	struct engi_verdict v;
	engi_verdict_init(&v);
	int rc = engi_verify_file(k, crit, json_string_value(json_object_get(ver, "file")), &ctx,
				  &v, &err);
	if (rc < 0)
		fprintf(stderr, "%s\n", err.msg);
	for (size_t i = 0; i < v.na; i++)
		printf("%s %s %.9g %s\n", v.a[i].name, engi_astate_name(v.a[i].state), v.a[i].value,
		       v.a[i].detail);
	engi_verdict_release(&v);
	engi_verifier_free(k, crit);
	json_decref(ver);
	return rc < 0 ? 1 : 0;
}
