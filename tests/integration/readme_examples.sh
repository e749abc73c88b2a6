# The example outputs of README.md and docs/*.md are what the binary prints
# for the demo now: every file holding example blocks is copied with all its
# blocks made stale, scripts/readme-examples rewrites the copies, and each
# copy must come out equal to its original.
. "$(dirname "$0")/lib.sh"
mkdir docs
"$PY" - "$ENGI_SRC" > files.txt <<'PY'
import glob, os, re, sys
src = sys.argv[1]
paths = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
block = re.compile(r"(<!-- BEGIN example:([\w-]+) -->\n).*?(<!-- END example:\2 -->)", re.S)
names, total = set(), 0
for path in paths:
    text = open(path, encoding="utf-8").read()
    if "<!-- BEGIN example:" not in text:
        continue
    stale, n = block.subn(r"\1STALE-EXAMPLE\n\3", text)
    assert n == text.count("<!-- BEGIN example:"), f"{path}: a block without its END"
    names.update(m.group(2) for m in block.finditer(text))
    total += n
    rel = os.path.relpath(path, src)
    open(rel, "w", encoding="utf-8").write(stale)
    print(rel)
for name in ("run", "scores", "report", "evidence", "compare", "plan"):
    assert name in names, f"no example block '{name}' in README.md or docs/*.md"
assert total >= 6, f"only {total} example blocks"
PY
grep -qx README.md files.txt || fail "README.md holds no example block"
mapfile -t files < files.txt
ENGISWEEP="$ENGISWEEP" ENGI_PYTHON="$PY" "$ENGI_SRC/scripts/readme-examples" "${files[@]}" > gen.log 2>&1 \
	|| { cat gen.log; fail "scripts/readme-examples failed"; }
for f in "${files[@]}"; do
	grep -q STALE-EXAMPLE "$f" && fail "$f: a block was not rewritten"
	diff -u "$ENGI_SRC/$f" "$f" \
		|| fail "$f: its example outputs are stale: run scripts/readme-examples and commit it"
done
echo "ok: the examples of ${files[*]} match the demo"
