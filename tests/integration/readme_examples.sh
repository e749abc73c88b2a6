# README.md's example outputs are what the binary prints for the demo now:
# scripts/readme-examples rewrites every marked block of a copy whose blocks
# were made stale, and the copy must come out equal to README.md.
. "$(dirname "$0")/lib.sh"
"$PY" - "$ENGI_SRC/README.md" README.md <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
stale, n = re.subn(r"(<!-- BEGIN example:([\w-]+) -->\n).*?(<!-- END example:\2 -->)",
                   r"\1STALE-EXAMPLE\n\3", text, flags=re.S)
assert n >= 4, f"only {n} example blocks in README.md"
for name in ("report", "evidence", "compare", "plan"):
    assert f"<!-- BEGIN example:{name} -->" in text, name
open(sys.argv[2], "w", encoding="utf-8").write(stale)
PY
ENGISWEEP="$ENGISWEEP" ENGI_PYTHON="$PY" "$ENGI_SRC/scripts/readme-examples" README.md > gen.log 2>&1 \
	|| { cat gen.log; fail "scripts/readme-examples failed"; }
grep -q STALE-EXAMPLE README.md && fail "a block was not rewritten"
diff -u "$ENGI_SRC/README.md" README.md \
	|| fail "README.md's example outputs are stale: run scripts/readme-examples and commit README.md"
echo "ok: README.md's examples match the demo"
