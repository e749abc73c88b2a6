# Every subcommand answers --help on stdout with exit 0; bad usage exits 2.
. "$(dirname "$0")/lib.sh"
# every command the top-level help lists, and at least these
cmds=$("$ENGISWEEP" --help | awk '/^commands:/ { f = 1; next } f && /^  [a-z]/ { print $1 }')
for want in run plan validate audit report compare merge export kernel truth inspect image; do
	grep -qx "$want" <<<"$cmds" || fail "top-level --help does not list $want"
done
for cmd in $cmds; do
	out=$("$ENGISWEEP" "$cmd" --help)
	grep -q "usage: engisweep $cmd" <<<"$out" || fail "$cmd --help prints no usage"
done
for k in fe frame mesh icp distance brep; do
	"$ENGISWEEP" kernel "$k" --help | grep -q "usage: engisweep kernel $k" || fail "kernel $k --help prints no usage"
	"$ENGISWEEP" kernel --help | grep -q "^  $k " || fail "kernel --help does not list $k"
done
says "$ENGISWEEP" --help | grep -q "commands:" || fail "top-level --help"
expect_rc 2 "$ENGISWEEP" nosuchcommand
expect_rc 2 "$ENGISWEEP" run
expect_rc 2 "$ENGISWEEP" run --trials zero "$ENGI_SRC/tasks/demo"
expect_rc 2 "$ENGISWEEP" run --backend nosuch --out x "$ENGI_SRC/tasks/demo"
backends=$("$ENGISWEEP" inspect | sed -n '/^backends:/,/^$/p' | awk 'NR > 1 && $2 ~ /built/ {print $1}' | paste -sd, | sed 's/,/, /g')
# ENGI_QEMU: how the build was configured (the default ON; build_no_qemu.sh
# tests a build without it in full)
if [ "${ENGI_QEMU:?}" = ON ]; then
	echo "$backends" | grep -q "local, qemu, podman, simulate" || fail "inspect lists backends '$backends'"
else
	[ "$backends" = "local, podman, simulate" ] || fail "inspect lists backends '$backends'"
fi
says "$ENGISWEEP" run --backend nosuch --out x "$ENGI_SRC/tasks/demo" | grep -qF "unknown backend 'nosuch' (valid: $backends)" \
	|| fail "unknown backend message"
if [ "$ENGI_QEMU" = ON ]; then
	ENGISWEEP_IMAGES="$T/images" ENGI_QEMU_NO_BUILD=1 says "$ENGISWEEP" run --backend qemu --out x "$ENGI_SRC/tasks/demo" |
		grep -q "image 'tools' is not built (expected in '$T/images/tools-.*'): run \`engisweep image build tools\`" \
		|| fail "missing image message"
	expect_rc 2 "$ENGISWEEP" image build nosuch
	says "$ENGISWEEP" image build nosuch | grep -q "unknown image 'nosuch'" || fail "unknown image message"
else
	says "$ENGISWEEP" run --backend qemu --out x "$ENGI_SRC/tasks/demo" |
		grep -qF "the qemu backend is not built into this binary (configure with -DENGI_QEMU=ON)" \
		|| fail "qemu backend not built message"
fi
expect_rc 2 "$ENGISWEEP" image
says "$ENGISWEEP" run --agents model --out x "$ENGI_SRC/tasks/demo" | grep -q "the agent 'model' needs a models.json entry with a provider" \
	|| fail "model agent without a models.json entry"
says "$ENGISWEEP" run --agents flawed:nosuch --out x "$ENGI_SRC/tasks/demo" | grep -q "no task in .* has a flawed variant 'nosuch'" \
	|| fail "unknown flawed variant message"
[ ! -e x/journal.jsonl ] || fail "a refused run wrote a journal"
says "$ENGISWEEP" inspect | grep -q "mesh" || fail "inspect lists no verifier kinds"
echo "ok"
