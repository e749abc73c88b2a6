# guest.sh DRIVER MODE: runs the qemu_guest_test driver in a scratch folder
# and checks that no QEMU process of ours is left afterwards.
. "$ENGI_SRC/tests/integration/lib.sh"
driver=$1 mode=$2
"$driver" "$mode" "$T"
sleep 0.5
if pgrep -f "qemu-system.*$T/work" >/dev/null; then
	pgrep -af "qemu-system.*$T/work" >&2
	fail "a QEMU process outlived its environment"
fi
[ -z "$(ls -A "$T/work")" ] || fail "files left in the work folder: $(ls -A "$T/work")"
