# A second build tree configured with -DENGI_QEMU=OFF (docs/building.md):
# only the engisweep target, with this build's compiler but plain flags
# (never the sanitizers of the build that runs the test), in its own folder
# of the build tree (ENGI_NESTED_DIR). The qemu backend's files are not
# compiled, and every way of asking for it says it is not built and exits 2
# before anything runs.
. "$(dirname "$0")/lib.sh"
: "${ENGI_NESTED_DIR:?}" "${ENGI_NESTED_CC:?}"
MSG="the qemu backend is not built into this binary (configure with -DENGI_QEMU=ON)"

# the build that runs the test has the qemu backend (the default)
out=$("$ENGISWEEP" inspect)
echo "$out" | grep -Eq '^  qemu +built ' || fail "the default build lacks qemu: $out"
! echo "$out" | grep -q "not built into this binary" || fail "the default build names a part it lacks: $out"

unset CFLAGS CPPFLAGS LDFLAGS
cmake -S "$ENGI_SRC" -B "$ENGI_NESTED_DIR" -DCMAKE_C_COMPILER="$ENGI_NESTED_CC" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DENGI_QEMU=OFF -DENGI_SANITIZE=OFF -DENGI_FUZZ=OFF \
	-DENGI_WERROR=ON -DBUILD_TESTING=OFF >configure.log 2>&1 || {
	cat configure.log
	fail "configuring with -DENGI_QEMU=OFF failed"
}
grep -q "^ENGI_QEMU:BOOL=OFF$" "$ENGI_NESTED_DIR/CMakeCache.txt" || fail "ENGI_QEMU is not OFF in the nested cache"
grep -q "^ENGI_SANITIZE:BOOL=OFF$" "$ENGI_NESTED_DIR/CMakeCache.txt" || fail "the nested build is sanitized"
cmake --build "$ENGI_NESTED_DIR" --target engisweep -j"$(nproc)" >build.log 2>&1 || {
	tail -40 build.log
	fail "building engisweep with -DENGI_QEMU=OFF failed"
}
BIN="$ENGI_NESTED_DIR/src/engisweep"
[ -x "$BIN" ] || fail "no binary at $BIN"

# what is compiled: the backend library without the qemu backend's files
objs=$(ar t "$ENGI_NESTED_DIR/src/libengibackend.a")
for o in backend local simulate screen_image; do
	grep -qx "$o.c.o" <<<"$objs" || fail "$o.c is missing from the backend library: $objs"
done
for o in qemu qga qchan image screen_action images_embed; do
	! grep -qx "$o.c.o" <<<"$objs" || fail "$o.c is compiled with -DENGI_QEMU=OFF"
done
syms=$(nm "$BIN")
for s in backend_qemu qemu_prepare qemu_accel image_build image_recipe_files; do
	! grep -Eq " $s\$" <<<"$syms" || fail "the binary holds $s"
done
[ ! -e "$ENGI_NESTED_DIR/src/images_embed.c" ] || fail "the image recipes were embedded"

# run and validate --backend qemu: refused before the suite is read
expect_rc 2 "$BIN" run --backend qemu --out x "$ENGI_SRC/tasks/demo"
says "$BIN" run --backend qemu --out x "$ENGI_SRC/tasks/demo" | grep -qF "$MSG" || fail "run --backend qemu: $(says "$BIN" run --backend qemu --out x "$ENGI_SRC/tasks/demo")"
[ ! -e x ] || fail "a refused run made its results folder"
out=$(says "$BIN" run --backend qemu --out x "$T/no-such-suite")
grep -qF "$MSG" <<<"$out" || fail "the suite was read before the backend was refused: $out"
expect_rc 2 "$BIN" validate --backend qemu --out v "$ENGI_SRC/tasks/demo"
says "$BIN" validate --backend qemu --out v "$ENGI_SRC/tasks/demo" | grep -qF "$MSG" || fail "validate --backend qemu"
[ ! -e v ] || fail "a refused validate made its results folder"
out=$(says "$BIN" run --backend nosuch --out x "$ENGI_SRC/tasks/demo")
grep -qF "unknown backend 'nosuch' (valid: local, podman, simulate)" <<<"$out" || fail "unknown backend: $out"

# the image command: every subcommand refused, nothing made in the cache
export ENGISWEEP_IMAGES="$T/images"
for sub in "list" "build tiny" "path tiny" ""; do
	# shellcheck disable=SC2086 # the subcommand's words
	expect_rc 2 "$BIN" image $sub
	# shellcheck disable=SC2086
	out=$(says "$BIN" image $sub)
	grep -qF "$MSG" <<<"$out" || fail "image $sub: $out"
done
[ ! -e "$T/images" ] || fail "image made its cache"
out=$("$BIN" image --help) || fail "image --help exited $?"
grep -q "usage: engisweep image" <<<"$out" || fail "image --help prints no usage"
grep -qF "$MSG" <<<"$out" || fail "image --help does not say qemu is not built"

# inspect: the backends built, and the one that is not, named
out=$("$BIN" inspect) || fail "inspect exited $?"
built=$(sed -n '/^backends:/,/^$/p' <<<"$out" | awk 'NR > 1 && $2 == "built" {print $1}' | paste -sd, | sed 's/,/, /g')
[ "$built" = "local, podman, simulate" ] || fail "inspect lists the backends '$built' as built: $out"
grep -qx "  qemu: not built into this binary (configure with -DENGI_QEMU=ON)" <<<"$out" || fail "inspect does not name qemu as not built: $out"
! grep -q "qemu accelerator" <<<"$out" || fail "inspect probes the qemu accelerator: $out"
grep -q "^verifier kinds:" <<<"$out" || fail "inspect stops early: $out"
echo "ok: -DENGI_QEMU=OFF leaves the qemu backend out and says so"
