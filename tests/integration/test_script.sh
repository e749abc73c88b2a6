# scripts/test runs both passes even when the first fails, lists every
# failure at the end and exits non-zero. Run on a copy of the scripts with
# stand-ins for the package check, the build and ctest, so only the
# script's own logic is under test.
. "$(dirname "$0")/lib.sh"
mkdir -p repo/scripts bin
cp "$ENGI_SRC/scripts/test" "$ENGI_SRC/scripts/env.sh" repo/scripts/
printf '#!/bin/sh\nexit 0\n' > repo/scripts/deps
printf '#!/bin/sh\nmkdir -p "$BUILD_DIR"; echo "build $BUILD_DIR $*" >> "%s/calls"\n' "$T" > repo/scripts/build
# ctest: fails the tests named in FAIL_<pass> (build-asan -> FAIL_asan)
cat > bin/ctest <<SH
#!/bin/bash
d=\$(basename "\$PWD"); echo "ctest \$d \$*" >> "$T/calls"
v=FAIL_\${d#build-}; [ "\$d" = build ] && v=FAIL_plain
mkdir -p Testing/Temporary
rm -f Testing/Temporary/LastTestsFailed.log
[ -z "\${!v:-}" ] && exit 0
n=1; for t in \${!v}; do echo "\$n:\$t" >> Testing/Temporary/LastTestsFailed.log; n=\$((n+1)); done
exit 8
SH
chmod +x repo/scripts/* bin/ctest
run() { (cd repo && PATH="$T/bin:$PATH" "$@" bash scripts/test) > out.log 2>&1; }

rm -f calls
expect_rc 1 run env FAIL_asan="image_tiny qemu_guest"
grep -q "ctest build -" calls || fail "the plain pass did not run after the sanitizer pass failed"
grep -q "sanitizer build (ASan + UBSan): image_tiny qemu_guest" out.log || { cat out.log; fail "sanitizer failures not listed"; }
grep -q "== FAILED" out.log || fail "no failure summary"

rm -f calls
expect_rc 1 run env FAIL_plain="slurm_sweep"
grep -q "release build, whole suite: slurm_sweep" out.log || { cat out.log; fail "plain failures not listed"; }
grep -q "ctest build-asan" calls || fail "sanitizer pass did not run"

rm -f calls
expect_rc 1 run env FAIL_asan="a" FAIL_plain="b"
grep -q "sanitizer build (ASan + UBSan): a" out.log && grep -q "release build, whole suite: b" out.log \
	|| { cat out.log; fail "both failures not listed"; }

rm -f calls
expect_rc 1 run env FAIL_fuzz="fuzz_run_stl"
grep -q "libFuzzer build, fuzz targets: fuzz_run_stl" out.log || { cat out.log; fail "fuzz failures not listed"; }
grep -q "ctest build -" calls || fail "the plain pass did not run after the fuzz pass failed"
grep -q "build build-fuzz -DENGI_SANITIZE=ON -DENGI_FUZZ=ON" calls || { cat calls; fail "fuzz build options lost"; }

rm -f calls
expect_rc 0 run env
grep -q "== all passes passed" out.log || { cat out.log; fail "no success line"; }
grep -q -- "-DENGI_SANITIZE=ON" calls || fail "sanitizer build options lost"
