/*
 * policy.h - a command policy (`engisweep run --command-policy FILE`):
 * rules that refuse an agent's commands before they run.
 *
 * The file is a JSON object {"rules": [{"pattern": ERE, "message": TEXT},
 * ...]}: at most EPISODE_POLICY_RULES_MAX rules, each a POSIX extended
 * regular expression matched anywhere in a command (or in Python code) and
 * the message the agent is told when it matches. Everything is checked and
 * compiled when the file is loaded, before anything runs; an error names
 * the file and the JSON pointer of what is wrong. A loaded policy is read
 * only: any number of episodes may match against it at once.
 */
#ifndef ENGI_EPISODE_POLICY_H
#define ENGI_EPISODE_POLICY_H

#include "engi/error.h"

#define EPISODE_POLICY_RULES_MAX   256
#define EPISODE_POLICY_FILE_CAP	   ((size_t)1 << 20)
#define EPISODE_POLICY_PATTERN_MAX 4096
#define EPISODE_POLICY_MESSAGE_MAX 1024

struct episode_policy;

/* ENGI_EINVALID (a bad or unreadable file: "FILE: /rules/2/pattern: ..."),
 * ENGI_ENOMEM. */
int episode_policy_load(const char *path, struct episode_policy **out, struct engi_error *err);
void episode_policy_free(struct episode_policy *p);
/* The index of the first rule that matches text, or -1 (also for p NULL). */
int episode_policy_match(const struct episode_policy *p, const char *text);
const char *episode_policy_message(const struct episode_policy *p, int rule);
const char *episode_policy_pattern(const struct episode_policy *p, int rule);

#endif
