# Every relative link of README.md and docs/*.md resolves: the file or
# folder exists, and an #anchor names a heading of the Markdown file it
# points at (GitHub's heading ids). Then a copy with one broken file link
# and one broken anchor must be refused, each named.
. "$(dirname "$0")/lib.sh"
cat > check_links.py <<'PY'
import glob, os, re, sys

root = os.path.abspath(sys.argv[1])
pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")

def prose(path):
    """The lines outside code fences, inline code blanked, with their numbers."""
    inside = False
    for n, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield n, re.sub(r"(`+).*?\1", "", line)

def slug(text):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = text.strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")

def heading_lines(path):
    inside = False
    for line in open(path, encoding="utf-8").read().split("\n"):
        if FENCE.match(line):
            inside = not inside
        elif not inside and re.match(r"#{1,6} ", line):
            yield line.lstrip("#").strip()

anchors = {}
def anchors_of(path):
    """GitHub's heading ids: a repeated heading gets -1, -2, ..."""
    if path not in anchors:
        seen, ids = {}, set()
        for line in heading_lines(path):
            s = slug(line)
            k = seen.get(s, 0)
            seen[s] = k + 1
            ids.add(s if k == 0 else f"{s}-{k}")
        anchors[path] = ids
    return anchors[path]

bad, nlinks = [], 0
for page in pages:
    rel_page = os.path.relpath(page, root)
    for n, line in prose(page):
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                continue  # http:, https:, mailto:
            nlinks += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            where = f"{rel_page}:{n}: '{target}'"
            if not dest.startswith(root + os.sep):
                bad.append(f"{where}: leads out of the repository")
            elif not os.path.exists(dest):
                bad.append(f"{where}: no such file {os.path.relpath(dest, root)}")
            elif anchor:
                if not dest.endswith(".md") or os.path.isdir(dest):
                    bad.append(f"{where}: an anchor into a file that is not Markdown")
                elif anchor not in anchors_of(dest):
                    bad.append(f"{where}: no heading '#{anchor}' in {os.path.relpath(dest, root)}")
for b in bad:
    print(b)
if bad:
    sys.exit(1)
print(f"ok: {nlinks} relative links of {len(pages)} pages resolve")
PY
"$PY" check_links.py "$ENGI_SRC" || fail "broken links in README.md or docs/*.md"

# the checker refuses a missing file and a missing anchor, naming both: a
# copy of the pages (the rest of the tree linked in) passes, then fails
# once the two links are added
mkdir -p copy/docs
for f in "$ENGI_SRC"/* "$ENGI_SRC"/.[!.]*; do
	case "$(basename "$f")" in README.md | docs | .git) ;; *) ln -s "$f" copy/ ;; esac
done
cp "$ENGI_SRC/README.md" copy/
cp "$ENGI_SRC"/docs/*.md copy/docs/
"$PY" check_links.py copy > clean.out || { cat clean.out; fail "the copy's links do not resolve"; }
printf '\nSee [nothing](docs/no-such-page.md) and [a heading](docs/running.md#no-such-heading).\n' >> copy/README.md
set +e
"$PY" check_links.py copy > broken.out
rc=$?
set -e
cat broken.out
[ "$rc" -ne 0 ] || fail "broken links were not noticed"
grep -q "README.md:.*'docs/no-such-page.md': no such file docs/no-such-page.md" broken.out \
	|| fail "the missing page is not named"
grep -q "README.md:.*'docs/running.md#no-such-heading': no heading '#no-such-heading' in docs/running.md" broken.out \
	|| fail "the missing anchor is not named"
echo "ok: every relative link and anchor of README.md and docs/*.md resolves"
