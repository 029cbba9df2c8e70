#!/usr/bin/env python3
"""Write a development set from real text, at three tenant sizes, to judge search quality.

    apt-get update -o Acquire::Languages=en          # once: the English descriptions
    python3 scripts/make-devset.py --out devset       # devset/{small,medium,large}/*.jsonl
    python3 scripts/make-devset.py --tiers small --out samples/devset-small --flat
    python3 scripts/make-devset.py --out devset --check   # re-read and assert the invariants
    scripts/fetch-realtext.sh                        # once, for xl: documentation packages
    python3 scripts/make-devset.py --tiers xl --out devset-xl --flat   # 385,000 memories, for benchmarks

The synthetic sample (make-sample.py) reproduces chosen traps; this set asks how
search does on text nobody wrote for it. Memories come from what a Debian
bookworm machine holds: the packages' long descriptions (apt's Translation-en
lists), the functions of the running Python's standard library, the installed
packages' Debian changelogs and, to fill the large tier, chunks of
/usr/share/doc README/NEWS files and stdlib module docstrings and then of the
Rust sources, READMEs and CHANGELOGs of the crates in the local Cargo registry
(~/.cargo/registry/src). The xl tier takes all of these and fills the rest with a
sample of ~1,000-character chunks of Debian documentation packages that
scripts/fetch-realtext.sh unpacks, never installed, into ~/.cache/trine/realtext
(--realtext, $TRINE_REALTEXT; the list is REALTEXT): the kernel's Documentation,
the Python, Rust (books and std), Java SE and Qt API documentation, Erlang/OTP's,
Perl's pods, PostgreSQL's, Django's, Vim's help, Git's, Node.js's, CMake's,
LibreOffice's help, Debian's policy, developer's reference, handbook and
reference, the Linux and FreeBSD man pages and the GCIDE, FOLDOC and Jargon File
dictionaries (HTML read with html.parser). Queries have known answers:
ordinary questions that are not verbatim in the answer (a package's synopsis, a
function's first docstring sentence), exact titles
(changelog headers, whose terms the package's other entries share), identifiers
(qualified Python names, CVE ids) and phrases found in one memory only.

"Verbatim" is trine's (docs/design.md §4, services/core/src/verbatim.rs): both sides
lowercased, whitespace runs folded to one space, ends trimmed, substring of the
text or of the source. Gold sets of titles, identifiers and phrases are every
memory of the tier that holds the query so. Standard library only; one
`random.Random(11)` per tier (and one more that orders the Rust files) and sorted
listings make the output byte-identical on one machine. It depends on the
machine's apt lists, installed packages and Cargo registry, and xl on the
packages fetched.
"""

from __future__ import annotations

import argparse, ast, glob, gzip, hashlib, json, os, random, re, subprocess, sys, sysconfig
import textwrap, time, tokenize, uuid
from bisect import bisect_right
from collections import Counter
from html.parser import HTMLParser

NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://trine.dev/devset/v1")
STOP_WORDS = {
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
}
KINDS = {"debian": "description", "python": "code", "changelog": "changelog", "doc": "doc", "rust": "code"}
QUERY_KINDS = ("question", "title", "identifier", "phrase")
MAX_TEXT = 1 << 20
# memories per project, questions (debian share 60 %), titles, identifiers, phrases
TIERS = {
    "small": dict(debian=200, python=100, changelog=100, cluster=(4, 12), q=40, t=15, i=15, p=15),
    "medium": dict(debian=6500, python=2000, changelog=2500, cluster=(5, 40), q=300, t=60, i=60, p=60),
    "large": dict(everything=110_000, q=400, t=100, i=100, p=100),
    # Not among the default tiers: the real-text corpus at ADR 0172's size, for the benchmarks.
    "xl": dict(everything=385_000, q=400, t=100, i=100, p=100, realtext=True),
}
BIG = ("large", "xl")  # the tiers that take every source, then documentation and Rust chunks
# xl's real text: Debian documentation packages that scripts/fetch-realtext.sh unpacks (never
# installs) into --realtext. (project, package, its folder under usr/share, the files taken there
# (re.fullmatch of their path in it) and left (re.search), reader); man pages as the script renders them.
REALTEXT = (
    ("linux-doc", "linux-doc-6.1", "doc/linux-doc-6.1/Documentation", r".+\.gz", r"\.(svg|dot)\.gz$", "text"),
    ("python-doc", "python3.11-doc", "doc/python3.11/html/_sources", r".+\.txt", None, "text"),
    ("rust-doc", "rust-doc", "doc/rust-doc/html", r"(book|reference|nomicon|rust-by-example|edition-guide"
     r"|embedded-book|rustc|rustdoc|unstable-book|std|alloc|core|proc_macro|test)/.+\.html",
     r"/(core_)?arch/|/print\.html$", "html"),
    ("java-doc", "openjdk-17-doc", "doc/openjdk-17-jre-headless/api", r".+\.html",
     r"(^|/)(index-files|class-use)/|(-tree|-summary|index|-list)\.html$", "html"),
    ("qt-doc", "qtbase5-doc-html", "qt5/doc", r".+\.html", r"-(members|obsolete)\.html$", "html"),
    ("erlang-doc", "erlang-doc", "doc/erlang-doc", r".+\.html", r"/html/java/", "html"),
    ("perl-doc", "perl-doc", "perl/5.36.0/pod", r".+\.pod", None, "text"),
    ("postgresql-doc", "postgresql-doc-15", "doc/postgresql-doc-15/html", r".+\.html", None, "html"),
    ("django-doc", "python-django-doc", "doc/python-django-doc/html", r".+\.html",
     r"^_modules/|^(genindex|py-modindex|search)\.html$", "html"),
    ("vim-doc", "vim-runtime", "vim/vim90/doc", r".+\.txt", None, "text"),
    ("git-doc", "git-doc", "doc/git-doc", r".+\.txt", None, "text"),
    ("nodejs-doc", "nodejs-doc", "doc/nodejs/api", r".+\.md\.gz", None, "text"),
    ("cmake-doc", "cmake-doc", "doc/cmake-data/html/_sources", r".+\.txt", None, "text"),
    ("libreoffice-help", "libreoffice-help-en-us", "libreoffice/help/en-US", r".+\.html", None, "html"),
    ("debian-doc", "debian-policy", "doc/debian-policy/policy.html/_sources", r".+\.txt", None, "text"),
    ("debian-doc", "developers-reference", "developers-reference/_sources", r".+\.txt", None, "text"),
    ("debian-doc", "debian-handbook", "doc/debian-handbook/html/en-US", r".+\.html", None, "html"),
    ("debian-doc", "debian-reference-en", "debian-reference", r".+\.en\.html", None, "html"),
    *(("manpages", package, "man", r"man\d/.+\.txt", None, "man")
      for package in ("manpages", "manpages-dev", "freebsd-manpages")),
    *(("dictionary", package, "dictd", r".+\.dict\.dz", None, "dict")
      for package in ("dict-gcide", "dict-foldoc", "dict-jargon")),
)
KINDS.update((row[0], "doc") for row in REALTEXT)
# Rust's char::is_whitespace (Unicode White_Space); Python's str.split() also splits on \x1c-\x1f.
WHITESPACE = re.compile("[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
CVE = re.compile(r"CVE-\d{4}-\d{4,}")
HEADER = re.compile(r"^(\S+) \(([^()\s]+)\) ([^;]+);.*urgency=", re.I)
SKIP_DIRS = {"test", "tests", "idlelib", "lib2to3", "site-packages", "__pycache__"}
RUST_SKIP_DIRS = {"target", "fixtures", "testdata", "test_data"}
RUST_MAX_FILE = 300_000
# a generator's mark in a file's first lines (not in `///` item docs, which describe generated code)
GENERATED = re.compile(
    r"@generated|\bdo not (edit|modify)\b|\b(auto-?generated|autogenerated|automatically generated"
    r"|generated automatically)\b|\b(file|code|module|bindings)( \w+)? (is|was|has been|were|are)"
    r" (auto-?|automatically )?generated\b|^\W*generated (by|from|with)\b", re.I)
# numeric, char and escape literals: what a table is made of
LITERALS = re.compile(
    r"'(\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^'\\])'|\\x[0-9a-fA-F]{2}|\\u\{[0-9a-fA-F]+\}"
    r"|\b(0x[0-9a-fA-F_]+|0b[01_]+|0o[0-7_]+|\d[\d_]*(\.\d+)?([eE][+-]?\d+)?)"
    r"([iu](8|16|32|64|128|size)|f32|f64)?\b")


def words(text: str) -> list[str]:
    return [w for w in WHITESPACE.split(text) if w]


def fold(text: str) -> str:
    """docs/design.md §4: lowercase char by char, whitespace runs to one space, ends trimmed."""
    return " ".join(w.lower() if "Σ" not in w else "".join(c.lower() for c in w) for w in words(text))


def terms(query: str) -> list[str]:
    """trine's query terms: split on every non-alphanumeric character, lowercase, no stop words, no repeats."""
    out: list[str] = []
    for piece in "".join(c if c.isalnum() else " " for c in query).split():
        piece = piece.lower()
        if piece not in STOP_WORDS and piece not in out:
            out.append(piece)
    return out


def memory(project: str, source: str, text: str, **extra) -> dict:
    return {"project": project, "source": f"{project}/{source}", "text": text, **extra}


# --- Sources -----------------------------------------------------------------------------------

def translations(lang: str) -> list[tuple[str, str, str]]:
    """(package, synopsis, long description) from apt's Translation-LANG lists, sorted by
    package; descriptions under 120 characters, or whose text another package shares, left out."""
    stanzas: dict[str, tuple[str, str]] = {}
    field = f"Description-{lang}: "
    for path in sorted(glob.glob(f"/var/lib/apt/lists/*_i18n_Translation-{lang}*")):
        if not os.path.isfile(path):
            continue
        raw = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path],
                             capture_output=True, check=True).stdout.decode("utf-8", "replace")
        for stanza in raw.split("\n\n"):
            pkg = synopsis = None
            paras, in_desc = [[]], False
            for line in stanza.split("\n"):
                if line.startswith("Package: "):
                    pkg, in_desc = line[9:].strip(), False
                elif line.startswith(field):
                    synopsis, in_desc = line[len(field):].strip(), True
                elif in_desc and line.strip() == ".":  # a paragraph break
                    paras.append([])
                elif in_desc and line.startswith(" "):
                    paras[-1].append(line.strip())
                else:
                    in_desc = False
            body = "\n\n".join("\n".join(p) for p in paras if p)
            if pkg and synopsis and pkg not in stanzas:
                stanzas[pkg] = (synopsis, body)
    bodies = Counter(fold(body) for _, body in stanzas.values())
    return [(pkg, synopsis, body) for pkg, (synopsis, body) in sorted(stanzas.items())
            if len(body) >= 120 and bodies[fold(body)] == 1]


def debian_memories() -> list[dict]:
    """One memory per package long description; `synopsis` is its question."""
    return [memory("debian", pkg, f"{pkg}: {body}", synopsis=synopsis)
            for pkg, synopsis, body in translations("en")]


def stdlib_files() -> list[tuple[str, str]]:
    """(module name, path) of every stdlib .py outside tests, idlelib, lib2to3, site-packages."""
    root = sysconfig.get_paths()["stdlib"]
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            parts = os.path.relpath(os.path.join(dirpath, name), root)[:-3].split(os.sep)
            if parts[-1] == "__init__":
                parts.pop()
            if name.endswith(".py") and parts and all(p.isidentifier() for p in parts):
                out.append((".".join(parts), os.path.join(dirpath, name)))
    return out


def first_sentence(doc: str) -> str:
    flat = " ".join(doc.strip().split("\n\n")[0].split())
    m = re.search(r"(?<=[.!?])\s", flat)
    return flat[: m.start()] if m else flat


def python_memories(files: list[tuple[str, str]]) -> list[dict]:
    """Every function or method with a docstring: header line, then its source without the docstring."""
    out, seen = [], set()

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from visit(child, prefix + [child.name])
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + [child.name], child
                yield from visit(child, prefix + [child.name, "<locals>"])
            else:
                yield from visit(child, prefix)

    for module, path in files:
        with tokenize.open(path) as f:
            src = f.read()
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        src_lines = src.split("\n")  # tokenize.open reads universal newlines
        for qual, node in visit(tree, []):
            doc = ast.get_docstring(node)
            name = f"{module}.{'.'.join(qual)}"
            ds = node.body[0]
            if not doc or len(node.body) < 2 or ds.lineno == node.lineno or name in seen:
                continue
            # ast.get_source_segment(src, node, padded=True), without re-splitting src each call
            lines = src_lines[node.lineno - 1: node.end_lineno]
            lines[-1] = lines[-1].encode()[: node.end_col_offset].decode()  # a UTF-8 offset
            del lines[ds.lineno - node.lineno: ds.end_lineno - node.lineno + 1]
            text = name + "\n" + textwrap.dedent("\n".join(lines)).rstrip()
            if len(text) <= 2000:
                seen.add(name)
                out.append(memory("python", name, text, qualname=name, sentence=first_sentence(doc)))
    return out


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


def decode_lines(data: bytes) -> list[str]:
    """Lines of an old text file: UTF-8 where it is, Latin-1 where it is not."""
    def one(raw: bytes) -> str:
        try:
            return raw.decode("utf-8").rstrip()
        except UnicodeDecodeError:
            return raw.decode("latin-1").rstrip()
    return [one(raw) for raw in data.split(b"\n")]


def changelog_memories() -> list[dict]:
    """Each entry of every installed changelog.Debian.gz, header through trailer, as written."""
    out, seen, paths = [], set(), set()
    for path in sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz")):
        real = os.path.realpath(path)
        if real in paths:
            continue
        paths.add(real)
        entry: list[str] = []
        for line in decode_lines(read_bytes(real)):
            if HEADER.match(line):
                entry = [line]
            elif entry:
                entry.append(line)
                if line.startswith(" -- "):
                    pkg, version, _ = HEADER.match(entry[0]).groups()
                    text = "\n".join(entry)
                    if (pkg, version) not in seen and len(text.encode()) < MAX_TEXT:
                        seen.add((pkg, version))
                        title = entry[0][: entry[0].index(";")].rstrip()
                        out.append(memory("changelog", f"{pkg}/{version}", text, package=pkg, title=title))
                    entry = []
    return out


def chunks(text: str, size: int = 1000) -> list[str]:
    out, cur = [], []
    for line in text.split("\n"):
        cur.append(line.rstrip())
        length = sum(len(c) + 1 for c in cur)
        if (length >= size and not line.strip()) or length >= 1.5 * size:
            out.append("\n".join(cur).strip())
            cur = []
    out.append("\n".join(cur).strip())
    return [c for c in out if len(c) >= 50]


def doc_memories(files: list[tuple[str, str]]) -> list[dict]:
    """Extra real text for the large tier, never a query's source: README*/NEWS* and module docstrings."""
    texts, paths = [], set()
    for path in sorted(glob.glob("/usr/share/doc/**/*", recursive=True)):
        base, real = os.path.basename(path), os.path.realpath(path)
        if (not base.startswith(("README", "NEWS")) or not os.path.isfile(real) or real in paths
                or base.endswith((".html", ".htm", ".pdf"))):
            continue
        paths.add(real)
        data = read_bytes(real)
        if b"\0" not in data:
            texts.append((os.path.relpath(path, "/usr/share/doc"), "\n".join(decode_lines(data))))
    for module, path in files:
        with tokenize.open(path) as f:
            try:
                doc = ast.get_docstring(ast.parse(f.read()))
            except SyntaxError:
                doc = None
        if doc:
            texts.append((f"python/{module}", doc))
    out, seen = [], set()
    for name, text in texts:
        for n, chunk in enumerate(chunks(text)):
            if fold(chunk) not in seen:
                seen.add(fold(chunk))
                out.append(memory("doc", f"{name}#{n}", chunk))
    return out


def rust_files() -> list[tuple[str, str]]:
    """(`<crate>-<version>/<path>`, file) of each registry crate's README*, CHANGELOG* and src/**/*.rs."""
    home = os.environ.get("CARGO_HOME") or os.path.expanduser("~/.cargo")
    out, crates = [], set()
    for index in sorted(glob.glob(os.path.join(home, "registry", "src", "*"))):
        for crate in sorted(os.listdir(index)) if os.path.isdir(index) else ():
            top = os.path.join(index, crate)
            if crate in crates or not os.path.isdir(top):  # the same crate from a second index
                continue
            crates.add(crate)
            out += [(f"{crate}/{name}", os.path.join(top, name)) for name in sorted(os.listdir(top))
                    if name.startswith(("README", "CHANGELOG")) and os.path.isfile(os.path.join(top, name))]
            for dirpath, dirnames, filenames in os.walk(os.path.join(top, "src")):
                dirnames[:] = sorted(d for d in dirnames if d not in RUST_SKIP_DIRS)
                for name in sorted(f for f in filenames if f.endswith(".rs")):
                    path = os.path.join(dirpath, name)
                    out.append((f"{crate}/{os.path.relpath(path, top)}", path))
    return out


def code_chunks(lines: list[str], lo: int = 600, hi: int = 1200) -> list[str]:
    """Runs of whole lines of lo to hi characters, cut where the cut is best: between top-level
    items, then at a blank line or a closing brace, then after a statement; a short tail joins
    the chunk before it."""
    def quality(i):  # of a cut after line i
        cur, nxt = lines[i], lines[i + 1] if i + 1 < len(lines) else ""
        top = nxt[:1] not in ("", " ", "\t", "}", ")", "]")  # an item, attribute, comment or heading
        if not cur.strip():
            return 3 if top else 2
        if cur in ("}", "};", ")", ");") or (top and not cur.startswith(("#[", "///", "//!"))):
            return 2 if top or not nxt.strip() else 1
        dedent = len(nxt) - len(nxt.lstrip()) <= len(cur) - len(cur.lstrip())
        return int(bool(nxt.strip()) and dedent and cur.endswith(("}", ";", ",")))

    out, start = [], 0
    while True:
        while start < len(lines) and not lines[start].strip():
            start += 1
        if start == len(lines):
            break
        length, best, score, i = 0, None, -1, start
        while i < len(lines):
            length += len(lines[i]) + 1
            if length > hi and i > start:
                break
            if length >= lo and quality(i) >= score:  # the best cut, the last of equals
                best, score = i, quality(i)
            i += 1
        best = len(lines) - 1 if i == len(lines) else best if best is not None else max(i - 1, start)
        out.append("\n".join(lines[start: best + 1]).strip("\n"))
        start = best + 1
    if len(out) > 1 and len(out[-1]) < 200:
        out[-2:] = [out[-2] + "\n" + out[-1]]
    return [c for c in out if len(c.strip()) >= 50]


def tabular(chunk: str) -> bool:
    """Mostly literals: under a quarter of its non-space characters are letters outside them."""
    letters = sum(c.isalpha() for c in LITERALS.sub(" ", chunk))
    return letters < 0.25 * sum(not c.isspace() for c in chunk)


def rust_memories(limit: int, seen: set[str]) -> list[dict]:
    """Extra real text for the large tier, never a query's source: chunks of whole registry files,
    taken in an order of their own random.Random(11) until there are `limit`, listed in file order.
    Files over 300 KB, generated files and chunks that are tables or repeat one of `seen` are left out."""
    files, out = rust_files(), []
    for k in random.Random(11).sample(range(len(files)), len(files)) if limit > 0 else ():
        name, path = files[k]
        if len(out) >= limit:
            break
        if os.path.getsize(path) > RUST_MAX_FILE:
            continue
        with open(path, "rb") as f:
            data = f.read()
        lines = decode_lines(data)
        if b"\0" in data or (path.endswith(".rs") and any(
                GENERATED.search(line) for line in lines[:25] if not line.lstrip().startswith("///"))):
            continue
        for n, chunk in enumerate(code_chunks(lines)):
            if len(out) < limit and len(chunk) <= 2000 and not tabular(chunk) and fold(chunk) not in seen:
                seen.add(fold(chunk))
                out.append((k, n, memory("rust", f"{name}#{n}", chunk)))
    return [m for _, _, m in sorted(out, key=lambda t: t[:2])]


class HTMLText(HTMLParser):
    """The text of a page: blocks on lines of their own, <pre> as it is, navigation, scripts,
    sidebars and (rustdoc) trait implementations left out."""
    BLOCKS = {"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
              "table", "tr", "blockquote", "section", "article", "br", "hr", "summary", "details",
              "figcaption", "caption"}
    SKIP = {"script", "style", "nav", "head", "noscript", "svg", "button", "form", "header", "footer"}
    SKIP_CLASSES = {"headerlink", "sphinxsidebar", "related", "navheader", "navfooter", "footer", "sidebar",
                    "nav", "navigation", "toc", "out-of-band", "rightside", "srclink", "anchor", "test-arrow",
                    "hideme", "notable-traits"}
    SKIP_IDS = {"trait-implementations-list", "synthetic-implementations-list", "blanket-implementations-list",
                "implementors-list", "synthetic-implementors-list", "menu-bar", "sidebar", "search", "hd",
                "ft", "breadcrumbs"}
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
            "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out, self.skip, self.pre = [], None, 0

    def handle_starttag(self, tag, attrs):
        if self.skip:
            self.skip[1] += tag == self.skip[0]
            return
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        if tag not in self.VOID and (tag in self.SKIP or a.get("id") in self.SKIP_IDS
                                     or a.get("role") == "navigation" or classes & self.SKIP_CLASSES):
            self.skip = [tag, 1]
        elif tag in self.BLOCKS:
            self.pre += tag == "pre"
            self.out.append("\n\n" if tag in ("p", "pre", "table") or tag[0] == "h" else "\n")

    def handle_endtag(self, tag):
        if self.skip:
            self.skip[1] -= tag == self.skip[0]
            self.skip = self.skip if self.skip[1] else None
        elif tag in self.BLOCKS:
            self.pre = max(0, self.pre - (tag == "pre"))
            self.out.append("\n\n" if tag in ("p", "pre", "table") or tag[0] == "h" else "\n")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data if self.pre else re.sub(r"\s+", " ", data))

    @classmethod
    def text(cls, page: str) -> str:
        parser = cls()
        parser.feed(page)
        parser.close()
        return re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in "".join(parser.out).split("\n")))


def dict_text(path: str) -> str:
    """A dictd database's entries (offsets and lengths in base64 in its .index) in file order, a blank
    line apart, without its 00-database-* entries."""
    digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    number = lambda b64: sum(digits.index(c) * 64 ** i for i, c in enumerate(reversed(b64)))
    data, spans = gzip.decompress(read_bytes(path)), set()
    with open(path[: -len(".dict.dz")] + ".index", encoding="utf-8", errors="replace") as f:
        for line in f:
            word, offset, length = line.rstrip("\n").split("\t")[:3]
            if not re.match("00-?database", word):
                spans.add((number(offset), number(length)))
    return "\n\n".join("\n".join(decode_lines(data[o: o + n])).strip() for o, n in sorted(spans))


def realtext_memories(cache: str, seen: set[str]) -> tuple[list[dict], list[str]]:
    """xl's real text, never a query's source: chunks of the REALTEXT files under cache/<package>/,
    in table and then file order; chunks over 4,000 characters or repeating one of `seen` are left
    out. Returns them and the packages the cache lacks."""
    out, missing, paths = [], [], set()
    shared = Counter(row[0] for row in REALTEXT)  # a project of more than one package names it in sources
    for project, package, folder, take, leave, reader in REALTEXT:
        top = os.path.join(cache, package, "usr/share", folder)
        if not os.path.isdir(top):
            missing.append(package)
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                rel, real = os.path.relpath(path, top).replace(os.sep, "/"), os.path.realpath(path)
                if (not re.fullmatch(take, rel) or (leave and re.search(leave, rel)) or real in paths
                        or not os.path.isfile(real)):
                    continue
                paths.add(real)
                text = dict_text(real) if reader == "dict" else "\n".join(decode_lines(read_bytes(real)))
                for n, chunk in enumerate(chunks(HTMLText.text(text) if reader == "html" else text)):
                    if len(chunk) <= 4000 and fold(chunk) not in seen:
                        seen.add(fold(chunk))
                        name = f"{package}/{rel}" if shared[project] > 1 else rel
                        out.append(memory(project, f"{name}#{n}", chunk))
    return out, missing


# --- Verbatim index and the tiers --------------------------------------------------------------

class Verbatim:
    """Folded texts and sources of one tier, searched as two UTF-8 blobs (substrings survive UTF-8)."""

    def __init__(self, mems: list[dict]) -> None:
        self.blobs = []
        for field in ("text", "source"):
            parts = [fold(m[field]).encode() for m in mems]
            starts, pos = [], 0
            for p in parts:
                starts.append(pos)
                pos += len(p) + 1
            self.blobs.append((b"\n".join(parts), starts))

    def holders(self, query: str) -> list[int]:
        needle, hits = fold(query).encode(), set()
        for blob, starts in self.blobs if needle else ():
            i = blob.find(needle)
            while i != -1:
                k = bisect_right(starts, i) - 1
                hits.add(k)
                i = blob.find(needle, starts[k + 1]) if k + 1 < len(starts) else -1
        return sorted(hits)


def question_candidates(pool: dict[str, list[dict]]) -> dict[str, list[tuple[dict, str]]]:
    def ok(m, q):
        return q and fold(q) not in fold(m["text"]) and fold(q) not in fold(m["source"])
    synopses = Counter(" ".join(m["synopsis"].casefold().split()) for m in pool["debian"])
    sentences = Counter(fold(m["sentence"]) for m in pool["python"])
    return {
        "debian": [(m, m["synopsis"]) for m in pool["debian"] if len(words(m["synopsis"])) >= 3
                   and synopses[" ".join(m["synopsis"].casefold().split())] == 1 and ok(m, m["synopsis"])],
        "python": [(m, m["sentence"]) for m in pool["python"] if 4 <= len(words(m["sentence"])) <= 25
                   and sentences[fold(m["sentence"])] == 1 and not re.search(">>>|->", m["sentence"])
                   and m["sentence"][0].isalpha() and ok(m, m["sentence"])],
    }


def choose_memories(tier: str, pool: dict, rng: random.Random, questions: list) -> list[dict]:
    spec, chosen = TIERS[tier], {id(m): m for m, _ in questions}
    if "everything" in spec:
        base = [m for p in ("debian", "python", "changelog") for m in pool[p]]
        need = max(0, spec["everything"] - len(base))
        docs = sorted(rng.sample(range(len(pool["doc"])), min(need, len(pool["doc"]))))
        rust = pool[f"rust-{tier}"][: need - len(docs)]
        real = pool["realtext"] if spec.get("realtext") else []  # a sample, in order, of what the rest leaves
        left = min(need - len(docs) - len(rust), len(real))
        more = sorted(rng.sample(range(len(real)), left)) if real else []
        return base + [pool["doc"][i] for i in docs] + rust + [real[i] for i in more]
    by_pkg: dict[str, list[dict]] = {}
    for m in pool["changelog"]:
        by_pkg.setdefault(m["package"], []).append(m)
    pkgs = sorted(by_pkg)
    rng.shuffle(pkgs)
    taken = 0
    for pkg in pkgs:  # clusters of a package's newest entries: titles that share their terms
        for m in by_pkg[pkg][: min(rng.randint(*spec["cluster"]), spec["changelog"] - taken)]:
            chosen[id(m)], taken = m, taken + 1
    for project in ("debian", "python"):
        rest = [m for m in pool[project] if id(m) not in chosen]
        have = len(pool[project]) - len(rest)
        for m in rng.sample(rest, max(0, spec[project] - have)):
            chosen[id(m)] = m
    order = {id(m): i for i, m in enumerate(m for p in ("debian", "python", "changelog") for m in pool[p])}
    return sorted(chosen.values(), key=lambda m: order[id(m)])


def random_span(rng: random.Random, ws: list[str]) -> list[str] | None:
    """Five to seven consecutive words at a random place (None when fewer): a phrase's draw."""
    n = rng.randint(5, 7)
    if len(ws) < n:
        return None
    start = rng.randrange(len(ws) - n + 1)
    return ws[start: start + n]


def pick(rng, candidates, n, make):
    """Up to n queries from shuffled candidates; make(c) returns (query, gold indices) or None."""
    out = []
    for c in rng.sample(candidates, len(candidates)):
        if len(out) == n:
            break
        got = make(c)
        if got:
            out.append(got)
    return out


def build_tier(tier: str, pool: dict, cands: dict) -> tuple[list[dict], list[dict]]:
    rng, spec = random.Random(11), TIERS[tier]
    nq_debian = round(spec["q"] * 0.6)
    questions = (rng.sample(cands["debian"], nq_debian) + rng.sample(cands["python"], spec["q"] - nq_debian))
    mems = choose_memories(tier, pool, rng, questions)
    index, pos = Verbatim(mems), {id(m): i for i, m in enumerate(mems)}
    used: set[str] = set()

    def exact(query, max_gold=10, one=None):
        gold = index.holders(query)
        if fold(query) in used or len(terms(query)) < 2 or not 0 < len(gold) <= max_gold \
                or (one is not None and gold != [one]):
            return None
        used.add(fold(query))
        return query, gold

    queries = [("question", q, [pos[id(m)]]) for m, q in questions]
    changelogs = [m for m in mems if m["project"] == "changelog"]
    per_pkg = Counter(m["package"] for m in changelogs)
    hard = [m for m in changelogs if per_pkg[m["package"]] >= 3] or changelogs
    queries += [("title", *q) for q in pick(rng, hard, spec["t"], lambda m: exact(m["title"]))]
    cves = sorted({c for m in changelogs for c in CVE.findall(m["text"])})
    names = sorted(m["qualname"] for m in mems if m["project"] == "python" and "<locals>" not in m["qualname"])
    ids = pick(rng, cves, spec["i"] // 2, exact)
    ids += pick(rng, names, spec["i"] - len(ids), exact)
    queries += [("identifier", *q) for q in ids]

    def phrase(i, letters):
        ws = words(mems[i]["text"])
        for _ in range(10):
            span = random_span(rng, ws)
            if span is None:
                return None
            if (not letters or all(w.isalpha() for w in span)) and len(terms(" ".join(span))) >= 3:
                got = exact(" ".join(span), one=i)
                if got:
                    return got
        return None
    phrasable = [i for i, m in enumerate(mems) if m["project"] in ("debian", "python", "changelog")]
    phrases = pick(rng, phrasable, spec["p"], lambda i: phrase(i, True))  # ordinary words first
    phrases += pick(rng, phrasable, spec["p"] - len(phrases), lambda i: phrase(i, False))
    queries += [("phrase", *q) for q in phrases]

    ids_of = [str(uuid.uuid5(NAMESPACE, f"{tier}/{m['source']}")) for m in mems]
    out_mems = [{"id": ids_of[i], "text": m["text"], "source": m["source"], "tenant": tier,
                 "project": m["project"], "kind": KINDS[m["project"]]} for i, m in enumerate(mems)]
    prefix = tier[0]
    out_q = [{"qid": f"{prefix}-q{n:04d}", "query": q, "tenant": tier, "gold": [ids_of[g] for g in gold],
              "kind": kind} for n, (kind, q, gold) in enumerate(queries, 1)]
    split_halves(out_q, QUERY_KINDS)
    return out_mems, out_q


def split_halves(queries: list[dict], kinds) -> None:
    """Each kind half `tune`, half `held`, by a hash of the qid."""
    for kind in kinds:
        of_kind = sorted((q for q in queries if q["kind"] == kind),
                         key=lambda q: hashlib.sha256(q["qid"].encode()).hexdigest())
        for n, q in enumerate(of_kind):
            q["split"] = "tune" if n < len(of_kind) // 2 else "held"


def duplicate_errors(mems: list[dict], queries: list[dict]) -> list[str]:
    """A memory id or a qid that occurs twice."""
    if len({m["id"] for m in mems}) != len(mems) or len({q["qid"] for q in queries}) != len(queries):
        return ["duplicate memory ids or qids"]
    return []


def split_errors(queries: list[dict], kinds) -> list[str]:
    """What is wrong with the halves of each kind."""
    errors = []
    for kind in kinds:
        split = Counter(q["split"] for q in queries if q["kind"] == kind)
        if set(split) - {"tune", "held"} or abs(split["tune"] - split["held"]) > 1:
            errors.append(f"{kind}: splits not balanced: {dict(split)}")
    return errors


def read_set(folder: str) -> tuple[list[dict], list[dict]]:
    """A set's memories and queries; OSError or ValueError when they cannot be read."""
    return (read_jsonl(os.path.join(folder, "memories.jsonl")),
            read_jsonl(os.path.join(folder, "queries.jsonl")))


# --- Output, check, summary --------------------------------------------------------------------

def write_jsonl(path: str, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_jsonl(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def check(folder: str) -> tuple[list[str], list[dict], list[dict]]:
    try:
        mems, queries = read_set(folder)
    except (OSError, ValueError) as e:
        return [f"cannot read: {e}"], [], []
    errors, index = duplicate_errors(mems, queries), Verbatim(mems)
    pos = {m["id"]: i for i, m in enumerate(mems)}
    tenants = {m["tenant"] for m in mems} | {q["tenant"] for q in queries}
    if len(tenants) != 1:
        errors.append(f"more than one tenant: {sorted(tenants)}")
    for m in mems:
        if not m["text"].strip() or len(m["text"].encode("utf-8")) >= MAX_TEXT:
            errors.append(f"{m['source']}: text empty or over 1 MiB")
        if KINDS.get(m["project"]) != m["kind"] or not m["source"].startswith(m["project"] + "/"):
            errors.append(f"{m['source']}: project {m['project']!r} and kind {m['kind']!r} do not agree")
    for q in queries:
        if not q["gold"] or any(g not in pos for g in q["gold"]):
            errors.append(f"{q['qid']}: gold missing from the tier")
            continue
        gold = sorted(pos[g] for g in q["gold"])
        if q["kind"] == "question":
            if any(fold(q["query"]) in fold(mems[g]["text"]) + "\n" + fold(mems[g]["source"]) for g in gold):
                errors.append(f"{q['qid']}: question {q['query']!r} is verbatim in its gold")
        elif index.holders(q["query"]) != gold or len(terms(q["query"])) < 2:
            errors.append(f"{q['qid']}: gold of {q['query']!r} is not the set of memories holding it")
        if q["kind"] == "phrase" and len(gold) != 1:
            errors.append(f"{q['qid']}: a phrase must have one gold memory")
    return errors + split_errors(queries, QUERY_KINDS), mems, queries


def summary(tier: str, mems: list[dict], queries: list[dict]) -> str:
    per_project = Counter(m["project"] for m in mems)
    lines = [f"{tier}: {len(mems)} memories ("
             + ", ".join(f"{p} {per_project[p]}" for p in KINDS if per_project[p])
             + f"), mean text {sum(len(m['text']) for m in mems) / max(1, len(mems)):.0f} chars"]
    for kind in QUERY_KINDS:
        split = Counter(q["split"] for q in queries if q["kind"] == kind)
        lines.append(f"  {kind:<10} {sum(split.values()):4d}  (tune {split['tune']}, held {split['held']})")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="devset", help="output folder (default devset/)")
    ap.add_argument("--tiers", default="small,medium,large", help="comma-separated tiers")
    ap.add_argument("--flat", action="store_true", help="one tier, written straight into --out")
    ap.add_argument("--check", action="store_true", help="only re-read the outputs and check them")
    ap.add_argument("--realtext", default=os.environ.get("TRINE_REALTEXT", "~/.cache/trine/realtext"),
                    help="xl's unpacked documentation packages (scripts/fetch-realtext.sh; default "
                         "$TRINE_REALTEXT or ~/.cache/trine/realtext)")
    ap.add_argument("--packages", action="store_true",
                    help="print the packages xl reads (package, folder, reader a line) for fetch-realtext.sh")
    args = ap.parse_args()
    if args.packages:
        print("\n".join(f"{pkg} usr/share/{folder} {reader}" for _, pkg, folder, _, _, reader in REALTEXT))
        return 0
    tiers = [t for t in args.tiers.split(",") if t]
    if any(t not in TIERS for t in tiers) or (args.flat and len(tiers) != 1):
        ap.error(f"tiers are {', '.join(TIERS)}; --flat takes exactly one")
    folder = {t: args.out if args.flat else os.path.join(args.out, t) for t in tiers}
    if not args.check:
        started = time.monotonic()
        files = stdlib_files()
        big = [t for t in tiers if t in BIG]
        pool = {"debian": debian_memories(), "python": python_memories(files),
                "changelog": changelog_memories(), "doc": doc_memories(files) if big else []}
        if not pool["debian"]:
            sys.exit("no package descriptions: run `apt-get update -o Acquire::Languages=en` first")
        base = sum(len(pool[p]) for p in ("debian", "python", "changelog"))
        for tier in big:  # each its own draw, so that a larger tier leaves the smaller one as it was
            room = TIERS[tier]["everything"] - base - len(pool["doc"])  # what the doc chunks leave
            pool[f"rust-{tier}"] = rust_memories(room, {fold(m["text"]) for m in pool["doc"]})
        print(f"sources: debian {len(pool['debian'])}, python {len(pool['python'])}, changelog "
              f"{len(pool['changelog'])} = {base} memories; doc chunks {len(pool['doc'])}, rust chunks "
              + ", ".join(f"{len(pool[f'rust-{t}'])} ({t})" for t in big)
              + f" ({time.monotonic() - started:.1f} s)")
        real = [t for t in big if TIERS[t].get("realtext")]
        if real:  # after the Rust chunks, which it must not repeat
            cache = os.path.expanduser(args.realtext)
            pool["realtext"], missing = realtext_memories(cache, {fold(m["text"]) for t in real for p in (
                "doc", f"rust-{t}") for m in pool[p]})
            per = Counter(m["project"] for m in pool["realtext"])
            print(f"real text in {cache}: " + ", ".join(f"{p} {n}" for p, n in per.items())
                  + f" = {len(pool['realtext'])} chunks ({time.monotonic() - started:.1f} s)")
            if missing:
                print(f"real text: {cache} lacks {', '.join(missing)}: run scripts/fetch-realtext.sh")
        for tier in big:
            extra = len(pool["doc"]) + len(pool[f"rust-{tier}"]) + (tier in real and len(pool["realtext"]))
            if base + extra < TIERS[tier]["everything"]:
                print(f"{tier}: the sources hold {base + extra} memories, fewer than "
                      f"{TIERS[tier]['everything']}; it takes every one")
        cands = question_candidates(pool)
        print(f"question candidates: debian {len(cands['debian'])}, python {len(cands['python'])}")
        for tier in tiers:
            mems, queries = build_tier(tier, pool, cands)
            os.makedirs(folder[tier], exist_ok=True)
            write_jsonl(os.path.join(folder[tier], "memories.jsonl"), mems)
            write_jsonl(os.path.join(folder[tier], "queries.jsonl"), queries)
            print(summary(tier, mems, queries))
        print(f"written in {time.monotonic() - started:.1f} s")
    failed = False
    for tier in tiers:  # after writing too: what was written is what --check reads
        errors, mems, queries = check(folder[tier])
        for e in errors[:20]:
            print(f"check {folder[tier]}: {e}", file=sys.stderr)
        failed |= bool(errors)
        if args.check and not errors:
            print(summary(mems[0]["tenant"], mems, queries) + f"\ncheck {folder[tier]}: ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
