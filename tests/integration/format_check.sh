# Every C file of the tree is formatted as .clang-format says (clang-format-14,
# Debian's, from scripts/deps). Fix with:
#   git ls-files '*.c' '*.h' | xargs clang-format-14 -i
. "$(dirname "$0")/lib.sh"
CF=$(command -v clang-format-14 || command -v clang-format) \
	|| fail "clang-format-14 is not installed (scripts/deps installs it)"
cd "$ENGI_SRC"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t files < <(git ls-files '*.c' '*.h')
else
	mapfile -t files < <(find src kernels verifiers analysis tests bench -name '*.[ch]' 2>/dev/null | sort)
fi
[ ${#files[@]} -gt 100 ] || fail "only ${#files[@]} C files found under $ENGI_SRC"
bad=()
for f in "${files[@]}"; do
	"$CF" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
cd - >/dev/null
# the check can fail: a file with one line broken by hand is reported
printf 'int f(int a,int b){return a+b;}\n' > misformatted.c
cp "$ENGI_SRC/.clang-format" .
"$CF" --dry-run -Werror misformatted.c >/dev/null 2>&1 && fail "clang-format accepted a misformatted file"
[ ${#bad[@]} -eq 0 ] || fail "${#bad[@]} files differ from .clang-format: ${bad[*]}"
echo "ok: ${#files[@]} C files formatted as .clang-format says"
