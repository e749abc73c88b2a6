# Task files that are not files are refused, and what names them is shown
# escaped. A FIFO named x.json in a suite folder (made here: git cannot
# store one) once made `run` and `validate` wait forever for a writer: both
# now refuse it at once, naming it. A link to a regular file inside the
# folder loads; a link that leads outside does not. A task file whose name
# holds an escape sequence and a newline, or whose text does, gives a
# one-line message with those bytes written as \x1b and \x0a.
. "$(dirname "$0")/lib.sh"

# expect_refused RC_FILE OUT_FILE NEEDLE: the command ran to an error (no
# timeout), its message names the needle
expect_refused() {
	local rc=$1 out=$2 needle=$3
	[ "$rc" -ne 124 ] || fail "blocked on a FIFO (timed out): $(cat "$out")"
	[ "$rc" -ne 0 ] || fail "accepted what it must refuse: $(cat "$out")"
	grep -qF -- "$needle" "$out" || fail "message lacks '$needle': $(cat "$out")"
}

bash "$HERE/make_suite.sh" fifo 1 0
mkfifo fifo/x.json
set +e
timeout 20 "$ENGISWEEP" validate --quiet --out v fifo > validate.txt 2>&1
rc_v=$?
timeout 20 "$ENGISWEEP" run --quiet --agents noop --out r fifo > run.txt 2>&1
rc_r=$?
timeout 20 "$ENGISWEEP" validate --quiet --out v1 fifo/x.json > one.txt 2>&1
rc_1=$?
set -e
expect_refused $rc_v validate.txt "task file 'fifo/x.json' is not a regular file"
expect_refused $rc_r run.txt "task file 'fifo/x.json' is not a regular file"
expect_refused $rc_1 one.txt "'fifo/x.json' is neither a task file nor a suite folder"

# links: inside the folder to a regular file, fine; outside, refused
bash "$HERE/make_suite.sh" links 1 0
mv links/tetra-1.json links/tetra-1.task
ln -s tetra-1.task links/inside.json
timeout 20 "$ENGISWEEP" validate --quiet --out vl links > links.txt 2>&1 \
	|| fail "a link to a task file inside the suite was refused: $(cat links.txt)"
bash "$HERE/make_suite.sh" elsewhere 1 0
mkdir -p out_link
ln -s "$T/elsewhere/tetra-1.json" out_link/outside.json
set +e
timeout 20 "$ENGISWEEP" validate --quiet --out vo out_link > outside.txt 2>&1
rc_o=$?
set -e
expect_refused $rc_o outside.txt "is a symbolic link that leads outside the suite folder"

# control characters in a file name and in task text
mkdir -p ctl
esc=$(printf '\033')
name=$(printf 'bad\033[31m\nname.json')
printf '{ not json' > "ctl/$name"
set +e
timeout 20 "$ENGISWEEP" validate --quiet --out vc ctl > ctl.txt 2>&1
rc_c=$?
set -e
expect_refused $rc_c ctl.txt 'ctl/bad\x1b[31m\x0aname.json: line 1'
rm -f "ctl/$name"
"$PY" - <<'PY'
import json
t = json.load(open("fifo/tetra-1.json"))
t["type"] = "sing\x1b]0;owned\x07le\nfake line"
json.dump(t, open("ctl/text.json", "w"))
PY
set +e
timeout 20 "$ENGISWEEP" validate --quiet --out vt ctl > text.txt 2>&1
rc_t=$?
set -e
expect_refused $rc_t text.txt 'sing\x1b]0;owned\x07le\x0afake line'
for f in ctl.txt text.txt; do
	grep -qaF "$esc" "$f" && fail "$f holds a raw escape byte"
	[ "$(wc -l < "$f")" -eq 1 ] || fail "$f is not one line: $(cat -A "$f")"
	"$PY" -c 'import sys; d = open(sys.argv[1], "rb").read()[:-1]; sys.exit(any(b < 32 for b in d))' "$f" \
		|| fail "$f holds a control character"
done
# judges: each malformed one refused at load, naming the file and pointer
mkdir -p judges
"$PY" - <<'PY'
import json
base = json.load(open("fifo/tetra-1.json"))
ok = {"name": "j", "rubric": "The summary is right."}
cases = {
    "not-array": ({"name": "j"}, "/judges: expected an array"),
    "empty": ([], "/judges: needs at least 1 item"),
    "too-many": ([dict(ok, name="j%d" % i) for i in range(17)], "/judges: at most 16 judges"),
    "twice": ([ok, ok], "/judges/1/name: 'j' is already /judges/0"),
    "long-name": ([dict(ok, name="n" * 58)], "/judges/0/name: must be 1 to 57 characters"),
    "bad-name": ([dict(ok, name="a b")], "/judges/0/name: 'a b' is not a valid name"),
    "no-rubric": ([{"name": "j"}], "/judges/0/rubric"),
    "long-rubric": ([dict(ok, rubric="x" * 4097)], "/judges/0/rubric: 4097 bytes, at most 4096"),
    "not-deliverable": ([dict(ok, inputs=["../../etc/passwd"])],
                        "/judges/0/inputs/0: '../../etc/passwd' is not one of the deliverables"),
    "input-twice": ([dict(ok, inputs=["tetra.stl", "tetra.stl"])],
                    "/judges/0/inputs/1: 'tetra.stl' is already /judges/0/inputs/0"),
    "unknown-key": ([dict(ok, rubrik="x")], "/judges/0/rubrik: unknown field (valid: name, rubric, inputs, required)"),
    "required-text": ([dict(ok, required="yes")], "/judges/0/required"),
}
with open("judges/cases.txt", "w") as out:
    for name, (judges, want) in cases.items():
        t = dict(base, judges=judges)
        json.dump(t, open("judges/%s.json" % name, "w"))
        out.write("%s\t%s\n" % (name, want))
PY
while IFS=$'\t' read -r name want; do
	set +e
	timeout 20 "$ENGISWEEP" validate --quiet --out "vj-$name" "judges/$name.json" > "judge-$name.txt" 2>&1
	rc=$?
	set -e
	expect_refused $rc "judge-$name.txt" "judges/$name.json: $want"
done < judges/cases.txt

echo "hostile_tasks: ok"
