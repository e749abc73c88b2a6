# A guest gets a network card only when its task asks for one; then it
# reaches the host through QEMU's user-mode NAT (10.0.2.2).
. "$ENGI_SRC/tests/integration/lib.sh"
driver=$1
mkdir www && echo engisweep-net-ok > www/index.html
"$PY" -u -m http.server --bind 127.0.0.1 --directory www 0 > http.log 2>&1 &
srv=$!
trap 'kill $srv 2>/dev/null' EXIT
for _ in $(seq 100); do
	port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' http.log | head -1)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || fail "the HTTP server did not start"
"$driver" net "$T" "$port"
