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
echo "hostile_tasks: ok"
