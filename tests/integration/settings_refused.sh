# Every setting is checked before anything runs: a bad models.json field,
# condition, grid axis or value, option or flawed 'failing' name makes plan
# and run exit 2 with a message naming the file or option and the pointer
# or key, and no output folder, journal or episode comes into being.
. "$(dirname "$0")/lib.sh"
bash "$HERE/make_suite.sh" suite 2 0
cat > temp.json <<'JSON'
{"models": [{"name": "a", "provider": "openai", "model": "x"},
            {"name": "b", "provider": "openai", "model": "x"},
            {"name": "c", "provider": "openai", "model": "x", "temperature": "hot"}]}
JSON
cat > hist.json <<'JSON'
{"models": [{"name": "a", "provider": "openai", "model": "x", "history_turns": 0}]}
JSON
cat > typo.json <<'JSON'
{"models": [{"name": "a", "provider": "anthropic", "model": "x", "max_tokns": 10}]}
JSON
cat > scripted.json <<'JSON'
{"models": [{"name": "r", "agent": "reference", "reasoning_effort": "high"}]}
JSON
cat > header.json <<'JSON'
{"models": [{"name": "a", "provider": "openai", "model": "x", "headers": {"X-A": 3}}]}
JSON
mkdir badflaw
sed 's/"failing": \["closed"\]/"failing": ["closed", "volum"]/' suite/tetra-1.json > badflaw/tetra-1.json
grep -q '"volum"' badflaw/tetra-1.json || fail "the flawed case was not written"

n=0
# refused CMDS WANT ARGS...: each of CMDS (plan, run, validate) exits 2
# and says WANT; run and validate leave no --out folder
refused() {
	local cmds=$1 want=$2
	shift 2
	for cmd in $cmds; do
		n=$((n + 1))
		local out=()
		[ "$cmd" = plan ] || out=(--out "out-$n")
		set +e
		"$ENGISWEEP" "$cmd" "$@" "${out[@]}" > "log-$n" 2>&1
		local rc=$?
		set -e
		[ "$rc" -eq 2 ] || { cat "log-$n"; fail "$cmd $*: exited $rc, expected 2"; }
		grep -qF -- "$want" "log-$n" || { cat "log-$n"; fail "$cmd $*: no '$want' in the message"; }
		[ ! -e "out-$n" ] || fail "$cmd $*: the refused sweep created its output folder"
	done
}

# models.json: every field of every entry, with its file and pointer
refused "plan run" "temp.json: /models/2/temperature: expected a number ≥ 0, found a string ('hot')" \
	--models temp.json suite
refused "plan run" "hist.json: /models/0/history_turns: expected an integer from 1 to 1000000, found an integer (0)" \
	--models hist.json suite
refused "plan run" "typo.json: /models/0/max_tokns: unknown field 'max_tokns' (did you mean max_tokens?)" \
	--models typo.json suite
refused "plan run" "scripted.json: /models/0/reasoning_effort: a setting of the agent 'model'; the agent 'reference' takes none" \
	--models scripted.json suite
refused "plan run" "header.json: /models/0/headers/X-A: expected a one-line string" \
	--models header.json suite
# conditions and grid axes, against the one table of condition settings
refused "plan run" "--grid 'bogus_axis=1,2': unknown axis 'bogus_axis' (known: history_turns, tools, image_tool, screen_scale, drawings)" \
	--grid bogus_axis=1,2 suite
refused "plan run" "--condition 'x:histroy_turns=3': unknown setting 'histroy_turns' (did you mean history_turns?)" \
	-c x:histroy_turns=3 suite
refused "plan run" "--grid 'screen_scale=3,7': screen_scale=3: expected a number in (0, 1]" \
	--grid screen_scale=3,7 suite
refused "plan run" "--condition 'x:screen_scale=1.5': screen_scale=1.5: expected a number in (0, 1]" \
	-c x:screen_scale=1.5 suite
refused "plan run" "--grid 'history_turns=5,2.5': history_turns=2.5: expected an integer from 1 to 1000000" \
	--grid history_turns=5,2.5 suite
refused "plan run" "--condition 'x:image_tool=maybe': image_tool=maybe: expected true or false" \
	-c x:image_tool=maybe suite
refused "plan run" "--grid 'drawings=files,paper': drawings=paper: expected message, files or none" \
	--grid drawings=files,paper suite
refused "plan run" "--subset: seed='x' is not a number" --subset "strata=type per=1 seed=x" suite
refused "plan run" "--subset: strata 'type' is named twice" --subset "strata=type,type per=1" suite
refused "plan run" "--agents: 'a b' is not a valid agent name" --agents "a b" suite
refused "plan run" "no task in 'suite' has a flawed variant 'nope'" --agents flawed:nope suite
refused "plan run" "--trials: '0' is not an integer from 1 to 1000" --trials 0 suite
# the options of run
refused run "--resource 'lic=0': the count '0' is not an integer from 1 to 100000" --resource lic=0 suite
refused run "--resource 'lic=2x': the count '2x' is not an integer from 1 to 100000" --resource lic=2x suite
refused run "--resource 'l/c=1': expected NAME=N" --resource l/c=1 suite
refused run "--resource 'lic=2': 'lic' is given twice" --resource lic=1 --resource lic=2 suite
refused run "--shard '2/2': expected K/N with 0 <= K < N" --shard 2/2 suite
refused run "--shard '-1/2': expected K/N with 0 <= K < N" --shard -1/2 suite
refused run "--deadline '1000': that time has passed" --deadline 1000 suite
refused run "--deadline: 'soon' is not a number" --deadline soon suite
refused run "--budget-usd: '-5' is not a number from 0" --budget-usd -5 suite
refused run "--retries: '101' is not an integer from 0 to 100" --retries 101 suite
refused run "--retry-wait: 'x' is not a number from 0 to 300" --retry-wait x suite
refused run "--jobs: '-2' is not an integer from 0 to 1024" --jobs -2 suite
refused run "--grace: '-1' is not a number" --grace -1 suite
refused run "--cmd-timeout: '0' is not a number" --cmd-timeout 0 suite
refused run "--progress-every: '0' is not an integer" --progress-every 0 suite
refused run "unknown backend" --backend nowhere suite
# the judge of tasks' judges: a model of --models, and a suite with judges
# does not run without one
refused run "--judge-attempts: '11' is not an integer from 1 to 10" --judge-attempts 11 suite
refused run "--judge 'x': names an entry of --models FILE; none given" --judge x suite
echo '{"models": [{"name": "r", "agent": "reference"}]}' > ref.json
refused run "--judge 'b': no model of that name in 'ref.json'" --models ref.json --judge b suite
refused run "--judge 'r': ref.json: /models/0: the judge is a language model (an entry with a provider), not the agent 'reference'" \
	--models ref.json --judge r suite
mkdir judged
"$PY" -c '
import json, sys
t = json.load(open("suite/tetra-1.json"))
t["judges"] = [{"name": "says-why", "rubric": "The summary says why it is closed."}]
json.dump(t, open("judged/tetra-1.json", "w"))'
refused run "'judged': 1 of its 1 tasks have judges (a rubric a language model applies): name the judge model with --judge MODEL" \
	judged
# a flawed variant failing on an assertion the task does not have: at load
refused "plan run validate" "badflaw/tetra-1.json: /flawed/0/failing/1: no assertion 'volum' (the task's assertions: delivered:tetra.stl, closed, volume)" \
	badflaw
[ ! -e results ] || fail "a refused sweep wrote the default results folder"

# the same settings, valid, are accepted
"$ENGISWEEP" plan --grid history_turns=5,15 --grid screen_scale=0.6,1.0 -c x:drawings=none suite \
	> plan.txt || fail "valid settings refused"
grep -q "= 10 cells" plan.txt || { cat plan.txt; fail "cell count"; }
"$ENGISWEEP" run --quiet --resource lic=2 --shard 0/2 --deadline +3600 --retries 0 --retry-wait 0 \
	--grid screen_scale=0.5,1 --out ok suite || fail "a valid sweep failed"
[ -f ok/journal.jsonl ] || fail "no journal from the valid sweep"
echo "ok"
