# Every function and variable that a library of the build exports carries its
# module's prefix: engi_ for kernels/, verifiers/ and analysis/, and one of the
# module prefixes below for src/. A generic name (read_file, mkdir_p, rm_rf)
# would collide with a caller's own; a new module adds its prefix here.
. "$(dirname "$0")/lib.sh"
BUILD=$(cd "$(dirname "$ENGISWEEP")/.." && pwd)
SRC_PREFIXES="agent anthropic arena backend base64 cell child clk cond episode ewxml fs http image
judge journal matrix model openai outcome payload pconv preply progress provider qchan qemu qga qmp record replay
sched screen secrets source step store suite sweep sweepdef task text trace vcpu wire"
check() { # LIBRARY ALLOWED-REGEX
	# names from the compiler and sanitizers (__odr_asan.*, __x86.*) are not ours
	nm -g --defined-only "$1" | awk '$2 ~ /^[TDBRCGS]$/ && $3 !~ /^__/ {print $3}' |
		grep -Ev "$2" || true
}
bad=""
nlib=0
for lib in "$BUILD"/kernels/*.a "$BUILD"/verifiers/*.a "$BUILD"/analysis/*.a; do
	[ -e "$lib" ] || continue
	nlib=$((nlib + 1))
	bad+=$(check "$lib" '^engi_')
done
re="^(engi|$(echo $SRC_PREFIXES | tr ' ' '|'))_"
for lib in "$BUILD"/src/*.a; do
	nlib=$((nlib + 1))
	bad+=$(check "$lib" "$re")
done
[ "$nlib" -ge 8 ] || fail "only $nlib libraries found under $BUILD"
# the check can fail: an object exporting read_file is caught
printf 'int read_file(void) { return 0; }\n' > generic.c
cc -c generic.c -o generic.o && ar rc libgeneric.a generic.o
[ -n "$(check libgeneric.a "$re")" ] || fail "an unprefixed symbol went unnoticed"
[ -z "$bad" ] || fail "exported without a module prefix: $(echo $bad)"
echo "ok: every symbol of $nlib libraries carries its module prefix"
