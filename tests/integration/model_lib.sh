# Sourced by the model_*.sh tests after lib.sh: starts the test model server
# (model_server.py) on a free loopback port and stops it on exit.
# start_model_server SCRIPT.json [--key KEY]: sets MODEL_PORT.
# Loopback requests never go through a proxy a CI machine may have set.
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
MODEL_SERVER_PID=
stop_model_server() {
	if [ -n "$MODEL_SERVER_PID" ]; then
		kill "$MODEL_SERVER_PID" 2>/dev/null || true
		wait "$MODEL_SERVER_PID" 2>/dev/null || true
		MODEL_SERVER_PID=
	fi
}
trap stop_model_server EXIT
start_model_server() {
	local script=$1
	shift
	rm -f port server.log
	"$PY" "$HERE/model_server.py" --script "$script" --port-file port --log server.log "$@" &
	MODEL_SERVER_PID=$!
	for _ in $(seq 100); do
		[ -s port ] && break
		sleep 0.05
	done
	[ -s port ] || fail "the test model server did not start"
	MODEL_PORT=$(cat port)
}

# The STL of a closed unit tetrahedron, as a shell command writing tetra.stl.
TETRA_CMD="printf 'solid t\\n facet normal 0 0 0\\n  outer loop\\n   vertex 0 0 0\\n   vertex 0 1 0\\n   vertex 1 0 0\\n  endloop\\n endfacet\\n facet normal 0 0 0\\n  outer loop\\n   vertex 0 0 0\\n   vertex 1 0 0\\n   vertex 0 0 1\\n  endloop\\n endfacet\\n facet normal 0 0 0\\n  outer loop\\n   vertex 0 0 0\\n   vertex 0 0 1\\n   vertex 0 1 0\\n  endloop\\n endfacet\\n facet normal 0 0 0\\n  outer loop\\n   vertex 1 0 0\\n   vertex 0 1 0\\n   vertex 0 0 1\\n  endloop\\n endfacet\\nendsolid t\\n' > tetra.stl"
export TETRA_CMD
