#!/usr/bin/env python3
"""Finds circles of imports between the files of the workspace's crates and of the UI (ui/src),
and checks the crate graph.

Why: a file that needs another which needs it back cannot be read, tested or moved alone, and
the circle only grows. Rust accepts such circles inside a crate, so nothing else catches them.

A module is one file (`lib.rs`/`main.rs` is the crate root, `x/mod.rs` is module `x`; an inline
`mod y { ... }` belongs to its file). An edge A -> B means A's own code names an item that is
*defined* in B: paths starting with `crate::`, `super::`, `self::`, a child module or a name A
imports are followed through `use` and `pub use` (re-exports, globs included) to the file that
defines the item. A `pub use` that A only passes on (A's own code never names it) is not an
edge of A: `lib.rs` re-exporting its modules' types is a signpost, not a dependency. Declaring
`mod x;` is not an edge either. Items under `#[cfg(test)]` (inline `mod tests` blocks, test-only
`use` lines and helpers, `#[cfg(test)] mod tests;` files) are ignored, since tests may look
anywhere. Comments and string literals are blanked before reading, so a doc link is no edge.

Every strongly connected component of more than one file is a circle: listed with its files and
the lines that make each of its edges, and the exit status is 1.

The UI (`ui/src`, TypeScript): a module is one `.ts`/`.tsx` file. An edge A -> B is any import
of B by A: `import ... from`, `import type ... from` (a type-only import is still a file that
needs another to be read), `import "./b"`, `export ... from` (a barrel that passes B on needs
B), and `import("./b")`; relative specifiers resolved as the bundler does (`./b` -> b.ts, b.tsx,
b/index.ts(x); `./b.js` -> b.ts), packages left out. Comments are blanked first. Tests
(`*.test.ts(x)`, `ui/src/test/`) are left out, as Rust's test code is. Every circle is printed
with the import lines that make it.

Crate level (`cargo metadata`): the normal and build dependencies between workspace crates form
no cycle (dev-dependency cycles, such as a test kit, are allowed by Cargo and are fine), and no
crate but the shell package `partner-console` depends on `tauri`, directly or through others.

Usage: import_circles.py [--libraries-only] [--no-crates] [--verbose] [--root=DIR] [PATH_PART ...]
  --libraries-only   leave out the shell (src-tauri/src) and the UI; check src-tauri/crates/* only
  --no-crates        skip the cargo metadata checks (module circles only)
  --verbose          print every edge
  --root=DIR         check the repository at DIR instead of this one (the checker's own tests)
  PATH_PART          only report circles with a file whose path contains one of these
                     (`partner-listener`, `src-tauri/src/services`, `ui/src/features`)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

SHELL_PACKAGE = "partner-console"
SHELL_SRC = Path("src-tauri/src")
CRATES_DIR = Path("src-tauri/crates")

IDENT = r"(?:r#)?[A-Za-z_][A-Za-z0-9_]*"


# ---------------------------------------------------------------------------------------------
# Reading Rust text: blank what is not code, drop what is test-only.


def blank_comments_and_literals(text: str) -> str:
    """Replaces comments and the contents of string and char literals with spaces (newlines kept,
    so offsets and line numbers stay those of the file)."""
    out = list(text)
    n = len(text)
    i = 0

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    def ident_char(c: str) -> bool:
        return c.isalnum() or c == "_"

    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "rb" and (i == 0 or not ident_char(text[i - 1])):
            m = re.match(r'(?:br|rb|r)(#*)"', text[i:])
            if m:
                hashes = m.group(1)
                start = i + m.end()
                end = text.find('"' + hashes, start)
                end = n if end < 0 else end + 1 + len(hashes)
                blank(start, end - 1 - len(hashes))
                i = end
            elif c == "b" and text.startswith('b"', i):
                i += 1  # the string itself is handled on the next turn
            elif c == "b" and text.startswith("b'", i):
                i += 1
            else:
                i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a), which is code.
            if i + 1 < n and text[i + 1] == "\\":
                j = text.find("'", i + 2)
                j = n if j < 0 else j
                blank(i + 1, j)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                blank(i + 1, i + 2)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def matching_close(text: str, open_at: int) -> int:
    """Offset just past the bracket that closes the one at `open_at` (text already blanked)."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    stack = [pairs[text[open_at]]]
    j = open_at + 1
    while j < len(text) and stack:
        c = text[j]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}" and c == stack[-1]:
            stack.pop()
        j += 1
    return j


CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")
ATTRIBUTE = re.compile(r"\s*#\s*!?\s*\[")


def drop_test_items(code: str) -> str:
    """Blanks every item under `#[cfg(test)]`: up to its `;` or through its `{...}` body."""
    out = list(code)
    pos = 0
    while True:
        m = CFG_TEST.search(code, pos)
        if not m:
            break
        j = m.end()
        while True:  # further attributes of the same item
            a = ATTRIBUTE.match(code, j)
            if not a:
                break
            j = matching_close(code, a.end() - 1)
        k = j
        end = len(code)
        while k < len(code):
            c = code[k]
            if c in "([":
                k = matching_close(code, k)
                continue
            if c == ";":
                end = k + 1
                break
            if c == "{":
                end = matching_close(code, k)
                break
            k += 1
        for x in range(m.start(), end):
            if out[x] != "\n":
                out[x] = " "
        pos = end
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# `use` trees.


@dataclass
class Import:
    name: str  # the name it brings into scope ("*" for a glob)
    path: list[str]  # as written, first segment may be crate/super/self/a local name
    public: bool
    offset: int  # where the `use` starts


USE_STATEMENT = re.compile(r"(?<![A-Za-z0-9_])use\s+([^;]*);")
VISIBILITY_BEFORE = re.compile(r"pub\s*(\([^)]*\))?\s*$")
TOKEN = re.compile(r"\s*(::|\{|\}|,|\*|" + IDENT + r")")


def tokenize_use(tree: str) -> list[str]:
    tokens, pos = [], 0
    tree = tree.rstrip()
    while pos < len(tree):
        m = TOKEN.match(tree, pos)
        if not m:
            break
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


def parse_use_tree(tokens: list[str]) -> list[tuple[list[str], str]]:
    """`a::{b, c::d as e, f::*}` -> [([a,b], b), ([a,c,d], e), ([a,f], "*")]."""
    result: list[tuple[list[str], str]] = []
    pos = 0

    def tree(prefix: list[str]) -> None:
        nonlocal pos
        path = list(prefix)
        while pos < len(tokens):
            t = tokens[pos]
            if t == "::":
                pos += 1
            elif t == "{":
                pos += 1
                while pos < len(tokens) and tokens[pos] != "}":
                    tree(path)
                    if pos < len(tokens) and tokens[pos] == ",":
                        pos += 1
                pos += 1
                return
            elif t == "*":
                pos += 1
                result.append((path, "*"))
                return
            elif t in (",", "}"):
                break
            elif t == "as":
                pos += 1
                alias = tokens[pos] if pos < len(tokens) else "_"
                pos += 1
                if path and path[-1] == "self":
                    path = path[:-1]
                result.append((path, alias))
                return
            else:
                path.append(t)
                pos += 1
        if path and path[-1] == "self":
            path = path[:-1]
        if path and len(path) > len(prefix):
            result.append((path, path[-1]))
        elif path and path == prefix and tokens and pos > 0 and tokens[pos - 1] == "self":
            result.append((path, path[-1]))

    tree([])
    return result


# ---------------------------------------------------------------------------------------------
# The module tree of one crate target.


@dataclass
class ModuleFile:
    path: Path  # relative to the repository
    module: tuple[str, ...]  # module path from the crate root
    code: str  # blanked, test items dropped
    line_starts: list[int] = field(default_factory=list)
    children: dict[str, Path] = field(default_factory=dict)  # `mod x;` -> file
    inline: list[tuple[int, int, str]] = field(default_factory=list)  # non-test `mod x {}`
    inline_names: set[str] = field(default_factory=set)
    imports: list[Import] = field(default_factory=list)
    defines: set[str] = field(default_factory=set)

    def line_of(self, offset: int) -> int:
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def logical_module(self, offset: int) -> tuple[str, ...]:
        """The module at `offset`, counting the inline modules it sits in."""
        names = [name for (a, b, name) in self.inline if a <= offset < b]
        return self.module + tuple(names)


MOD_DECL = re.compile(r"(?<![A-Za-z0-9_])mod\s+(" + IDENT + r")\s*(;|\{)")
DEFINITION = re.compile(
    r"(?<![A-Za-z0-9_])(?:struct|enum|union|trait|type|fn|const|static|mod|macro_rules!)\s+("
    + IDENT
    + r")"
)


class Crate:
    def __init__(self, repo: Path, package: str, root_file: Path):
        self.repo = repo
        self.package = package
        self.root_file = root_file
        self.files: dict[tuple[str, ...], ModuleFile] = {}
        self.problems: list[str] = []
        self._load(root_file, ())

    def _load(self, path: Path, module: tuple[str, ...]) -> None:
        text = (self.repo / path).read_text(encoding="utf-8")
        code = drop_test_items(blank_comments_and_literals(text))
        mf = ModuleFile(path=path, module=module, code=code)
        mf.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.files[module] = mf

        is_dir_owner = path.name in ("mod.rs", "lib.rs", "main.rs") or path == self.root_file
        child_dir = path.parent if is_dir_owner else path.parent / path.stem
        for m in MOD_DECL.finditer(code):
            name = m.group(1).removeprefix("r#")
            if m.group(2) == "{":
                end = matching_close(code, m.end() - 1)
                mf.inline.append((m.start(), end, name))
                mf.inline_names.add(name)
                continue
            if any(a <= m.start() < b for (a, b, _) in mf.inline):
                self.problems.append(f"{path}: `mod {name};` inside an inline module: not followed")
                continue
            for candidate in (child_dir / f"{name}.rs", child_dir / name / "mod.rs"):
                if (self.repo / candidate).is_file():
                    mf.children[name] = candidate
                    break
            else:
                self.problems.append(f"{path}: no file for `mod {name};`")

        for m in DEFINITION.finditer(code):
            mf.defines.add(m.group(1).removeprefix("r#"))

        for m in USE_STATEMENT.finditer(code):
            before = code[max(0, m.start() - 40) : m.start()]
            public = bool(VISIBILITY_BEFORE.search(before))
            for segments, name in parse_use_tree(tokenize_use(m.group(1))):
                mf.imports.append(Import(name, segments, public, m.start()))

        for name, child in mf.children.items():
            self._load(child, module + (name,))

    # -- resolution ---------------------------------------------------------------------------

    def absolute(self, mf: ModuleFile, segments: list[str], offset: int) -> list[str] | None:
        """The path from the crate root that `segments`, written at `offset` in `mf`, names, or
        None when it leaves the crate (another crate, std)."""
        if not segments:
            return None
        here = list(mf.logical_module(offset))
        first = segments[0]
        if first in ("crate", "$crate"):
            return segments[1:]
        if first in ("self", "super"):
            base, rest = here, segments
            while rest and rest[0] in ("self", "super"):
                if rest[0] == "super":
                    base = base[:-1]
                rest = rest[1:]
            return base + rest
        # A name in scope: a child module, an inline module, or something this file imports.
        if first in mf.children or first in mf.inline_names:
            return here + segments
        for imp in mf.imports:
            if imp.name == first and imp.path:
                target = self.absolute(mf, imp.path, imp.offset)
                if target is not None:
                    return target + segments[1:]
        return None

    def resolve(self, path: list[str], seen: frozenset = frozenset()):
        """The module (file) that defines the item `path` names; EXTERNAL when it is another
        crate's item passed on; None when it is not found (a macro's item, say)."""
        module: tuple[str, ...] = ()
        i = 0
        while i < len(path) and path[i] in self.files[module].children:
            module = module + (path[i],)
            i += 1
        mf = self.files[module]
        if i == len(path):
            return module  # the path names the module itself
        name = path[i]
        if name in mf.inline_names or name in mf.defines:
            return module
        key = (module, name)
        if key in seen:
            return None
        seen = seen | {key}
        for imp in mf.imports:
            if imp.name == name:
                target = self.absolute(mf, imp.path, imp.offset)
                if target is None:
                    return EXTERNAL
                return self.resolve(target + path[i + 1 :], seen)
        for imp in mf.imports:
            if imp.name == "*":
                target = self.absolute(mf, imp.path, imp.offset)
                if target is None:
                    continue
                found = self.resolve(target + path[i:], seen)
                if found is not None and found is not EXTERNAL:
                    return found
        return None

    def defining_module(self, path: list[str]):
        """The module an edge goes to: where the item is defined, else the deepest module the
        path reaches (an item a macro makes); None for another crate's item."""
        found = self.resolve(path)
        if found is EXTERNAL:
            return None
        if found is not None:
            return found
        module: tuple[str, ...] = ()
        for segment in path:
            if segment not in self.files[module].children:
                break
            module = module + (segment,)
        return module


EXTERNAL = object()


# ---------------------------------------------------------------------------------------------
# Edges.

PATH_IN_CODE = re.compile(
    r"(?<![A-Za-z0-9_:])(\$?crate|super|self|" + IDENT + r")((?:\s*::\s*(?:" + IDENT + r"))+)"
)
WORD = re.compile(IDENT)


def module_edges(crate: Crate) -> dict[tuple[Path, Path], list[str]]:
    edges: dict[tuple[Path, Path], list[str]] = {}

    def add(mf: ModuleFile, target: tuple[str, ...] | None, offset: int, what: str) -> None:
        if target is None or target not in crate.files:
            return
        dest = crate.files[target].path
        if dest == mf.path:
            return
        reasons = edges.setdefault((mf.path, dest), [])
        reason = f"line {mf.line_of(offset)}: {what}"
        if reason not in reasons:
            reasons.append(reason)

    for mf in crate.files.values():
        # Code without its `use` lines and `mod x;` declarations: what the file's own code names.
        own = list(mf.code)
        declarations = [m for m in MOD_DECL.finditer(mf.code) if m.group(2) == ";"]
        for m in list(USE_STATEMENT.finditer(mf.code)) + declarations:
            for k in range(m.start(), m.end()):
                if own[k] != "\n":
                    own[k] = " "
        own_code = "".join(own)
        words = set(w.removeprefix("r#") for w in WORD.findall(own_code))

        for imp in mf.imports:
            absolute = crate.absolute(mf, imp.path, imp.offset)
            if absolute is None:
                continue
            shown = "::".join(imp.path) + ("::*" if imp.name == "*" else "")
            if imp.name == "*":
                if not imp.public:  # a private glob: assume its names are used
                    add(mf, crate.defining_module(absolute), imp.offset, f"use {shown}")
                continue
            if imp.name in words:  # the file's own code names it (a re-export alone does not count)
                add(mf, crate.defining_module(absolute), imp.offset, f"use {shown}")

        for m in PATH_IN_CODE.finditer(own_code):
            segments = [s.strip().removeprefix("r#") for s in (m.group(1) + m.group(2)).split("::")]
            first = segments[0]
            if first not in ("crate", "$crate", "self", "super") and not (
                first in mf.children
                or first in mf.inline_names
                or any(i.name == first for i in mf.imports)
            ):
                continue
            absolute = crate.absolute(mf, segments, m.start())
            if absolute is None:
                continue
            add(mf, crate.defining_module(absolute), m.start(), "::".join(segments))
    return edges


def strongly_connected(nodes: list[Path], edges: dict[tuple[Path, Path], list[str]]):
    """Tarjan's algorithm, iteratively (a deep crate must not hit Python's recursion limit)."""
    succ: dict[Path, list[Path]] = {n: [] for n in nodes}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        succ.setdefault(b, [])
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    on_stack: set[Path] = set()
    stack: list[Path] = []
    components: list[list[Path]] = []
    counter = 0
    for start in succ:
        if start in index:
            continue
        work = [(start, iter(succ[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(succ[nxt])))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                components.append(sorted(component))
    return components


# ---------------------------------------------------------------------------------------------
# The UI's TypeScript (ui/src): the same question of its files.

UI_SRC = Path("ui/src")
TS_EXTENSIONS = (".ts", ".tsx")


def blank_ts_comments(text: str) -> str:
    """Replaces `//` and `/* */` comments with spaces (newlines kept), stepping over string and
    template literals so that `"http://x"` is not a comment and a commented-out import is no
    edge. The strings themselves are kept: a module specifier is one."""
    out = list(text)
    n = len(text)
    i = 0

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c in "'\"`":
            j = i + 1
            while j < n and text[j] != c:
                if c != "`" and text[j] == "\n":
                    break  # an unterminated quote: not a string after all
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return "".join(out)


# Every form that names another module: `import … from "m"` (`import type` too: a type-only
# import is still a file needing another), `import "m"`, `export … from "m"`, `import("m")`
# (dynamic, or `typeof import("m")` in a type). The part before `from` holds no quote or `;`.
TS_IMPORT = re.compile(
    r"""(?<![\w$.])(?:"""
    r"""(?P<kind>import|export)(?P<body>\s+(?:type\s+)?[^'";]*?\bfrom\s*)(?P<q1>['"])(?P<m1>[^'"\n]+)(?P=q1)"""
    r"""|import\s*(?P<q2>['"])(?P<m2>[^'"\n]+)(?P=q2)"""
    r"""|import\s*\(\s*(?P<q3>['"])(?P<m3>[^'"\n]+)(?P=q3)\s*\)"""
    r""")"""
)


def ts_specifiers(code: str) -> list[tuple[str, int, str]]:
    """(specifier, offset, the statement's first words) of each import of `code`."""
    found = []
    for m in TS_IMPORT.finditer(code):
        spec = m.group("m1") or m.group("m2") or m.group("m3")
        if m.group("m1") and m.group("kind") == "export" and not re.match(
            r"\s+(?:type\s+)?(?:\*|\{)", m.group("body")
        ):
            continue  # `export const x = …` followed later by a `from`: not a re-export
        words = " ".join(m.group(0).split()[:2])
        found.append((spec, m.start(), words))
    return found


def resolve_ts(repo: Path, importer: Path, spec: str) -> Path | None:
    """The file a relative specifier names (`./x` → x.ts, x.tsx, x/index.ts(x); `./x.js` → x.ts),
    or None for a package (`react`) or a file that is not TypeScript (`./styles.css`)."""
    if not spec.startswith("."):
        return None
    base = importer.parent / spec
    stem = base.with_suffix("") if base.suffix in (".js", ".jsx", ".mjs") else base
    candidates = [base] if base.suffix in TS_EXTENSIONS else []
    candidates += [stem.with_name(stem.name + ext) for ext in TS_EXTENSIONS]
    candidates += [stem / f"index{ext}" for ext in TS_EXTENSIONS]
    for candidate in candidates:
        full = repo / candidate
        if full.is_file():
            return Path(os.path.normpath(candidate))
    return None


def is_ts_test(path: Path, src: Path) -> bool:
    """Tests and their set-up (`*.test.ts(x)`, `src/test/`) may import anything, as Rust's
    `#[cfg(test)]` code may: left out."""
    return path.name.endswith((".test.ts", ".test.tsx")) or (src / "test") in path.parents


def ts_files(repo: Path, src: Path) -> list[Path]:
    return sorted(
        p.relative_to(repo)
        for p in (repo / src).rglob("*")
        if p.suffix in TS_EXTENSIONS
        and not p.name.endswith(".d.ts")
        and "node_modules" not in p.parts
        and not is_ts_test(p.relative_to(repo), src)
    )


def ts_edges(repo: Path, files: list[Path]) -> dict[tuple[Path, Path], list[str]]:
    edges: dict[tuple[Path, Path], list[str]] = {}
    known = set(files)
    for path in files:
        text = (repo / path).read_text(encoding="utf-8")
        code = blank_ts_comments(text)
        line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        for spec, offset, words in ts_specifiers(code):
            target = resolve_ts(repo, path, spec)
            if target is None or target == path or target not in known:
                continue
            line = sum(1 for s in line_starts if s <= offset)
            reasons = edges.setdefault((path, target), [])
            reason = f'line {line}: {words} … "{spec}"'
            if reason not in reasons:
                reasons.append(reason)
    return edges


def check_ui(repo: Path, src: Path, prefixes: list[str], verbose: bool) -> int:
    """Circles between the UI's files; the number found (each printed with its edges)."""
    if not (repo / src).is_dir():
        print(f"  ui: no {src}: not checked")
        return 0
    files = ts_files(repo, src)
    edges = ts_edges(repo, files)
    print(f"  ui ({src}): {len(files)} files, {len(edges)} edges (tests left out)")
    circles = report_circles("ui", src, files, edges, prefixes, verbose, 0)
    print(f"ui: {len(files)} files, {len(edges)} file-to-file edges, {circles} circle(s)")
    return circles


# ---------------------------------------------------------------------------------------------
# Crate targets of the workspace.


def crate_targets(repo: Path, libraries_only: bool) -> list[tuple[str, Path]]:
    """(package, root file) for each library and binary target read from the source folders."""
    crates_dir = repo / CRATES_DIR
    folders = sorted(p for p in crates_dir.iterdir() if (p / "src").is_dir()) if crates_dir.is_dir() else []
    sources = [(p.name, p / "src") for p in folders]
    if not libraries_only and (repo / SHELL_SRC).is_dir():
        sources.append((SHELL_PACKAGE, repo / SHELL_SRC))
    targets = []
    for package, src in sources:
        for root in ("lib.rs", "main.rs"):
            if (src / root).is_file():
                targets.append((package, (src / root).relative_to(repo)))
        if (src / "bin").is_dir():
            for bin_root in sorted((src / "bin").glob("*.rs")):
                targets.append((package, bin_root.relative_to(repo)))
            for bin_root in sorted((src / "bin").glob("*/main.rs")):
                targets.append((package, bin_root.relative_to(repo)))
    return targets


def check_modules(repo: Path, libraries_only: bool, prefixes: list[str], verbose: bool) -> int:
    circles = 0
    total_files = total_edges = 0
    for package, root in crate_targets(repo, libraries_only):
        crate = Crate(repo, package, root)
        for problem in crate.problems:
            print(f"  note: {problem}")
        edges = module_edges(crate)
        nodes = sorted(mf.path for mf in crate.files.values())
        total_files += len(nodes)
        total_edges += len(edges)
        print(f"  {package} ({root}): {len(nodes)} files, {len(edges)} edges")

        circles = report_circles(package, root.parent, nodes, edges, prefixes, verbose, circles)
    print(f"modules: {total_files} files, {total_edges} file-to-file edges, {circles} circle(s)")
    return circles


def report_circles(
    name: str,
    src: Path,
    nodes: list[Path],
    edges: dict[tuple[Path, Path], list[str]],
    prefixes: list[str],
    verbose: bool,
    circles: int,
) -> int:
    """Prints each circle among `nodes` (its files and the lines that make its edges) and
    returns `circles` plus how many it printed."""

    def short(path: Path) -> str:
        return str(path.relative_to(src))

    if verbose:
        for (a, b), reasons in sorted(edges.items()):
            print(f"      {short(a)} -> {short(b)}   ({reasons[0]})")
    for component in strongly_connected(nodes, edges):
        if len(component) < 2:
            continue
        if prefixes and not any(p in str(f) for f in component for p in prefixes):
            continue
        circles += 1
        members = set(component)
        print(f"\nCIRCLE {circles} in {name}: {len(component)} files")
        for f in component:
            print(f"    {f}")
        print("  edges inside it:")
        for (a, b), reasons in sorted(edges.items()):
            if a in members and b in members:
                shown = "; ".join(reasons[:3]) + (" ..." if len(reasons) > 3 else "")
                print(f"    {short(a)} -> {short(b)}   [{shown}]")
        print()
    return circles


def check_crates(repo: Path) -> int:
    result = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        print(f"crates: cargo metadata failed:\n{result.stderr.strip()}")
        return 1
    meta = json.loads(result.stdout)
    packages = {p["id"]: p for p in meta["packages"]}
    members = set(meta["workspace_members"])
    name = {pid: packages[pid]["name"] for pid in packages}
    runtime_deps: dict[str, list[str]] = {}  # normal + build
    all_direct: dict[str, list[str]] = {}
    for node in meta["resolve"]["nodes"]:
        runtime_deps[node["id"]] = []
        all_direct[node["id"]] = []
        for dep in node["deps"]:
            kinds = {k["kind"] for k in dep["dep_kinds"]}
            all_direct[node["id"]].append(dep["pkg"])
            if kinds - {"dev"}:
                runtime_deps[node["id"]].append(dep["pkg"])

    failures = 0
    member_edges = {
        (a, b): ["depends"] for a in members for b in runtime_deps.get(a, []) if b in members
    }
    cycles = [c for c in strongly_connected(sorted(members), member_edges) if len(c) > 1]
    for cycle in cycles:
        failures += 1
        print("crates: CYCLE between " + ", ".join(name[p] for p in cycle))
    print(
        f"crates: {len(members)} workspace crates, {len(member_edges)} normal/build dependencies "
        f"between them, {len(cycles)} cycle(s)"
    )

    def reaches_tauri(start: str) -> list[str] | None:
        """The chain of packages from `start`'s direct dependencies (any kind) to `tauri`."""
        frontier = [(d, [name[d]]) for d in all_direct.get(start, [])]
        seen = set()
        while frontier:
            pid, chain = frontier.pop()
            if pid in seen:
                continue
            seen.add(pid)
            if name[pid] == "tauri":
                return chain
            frontier.extend((d, chain + [name[d]]) for d in runtime_deps.get(pid, []))
        return None

    checked = []
    for pid in sorted(members, key=lambda p: name[p]):
        if name[pid] == SHELL_PACKAGE:
            continue
        checked.append(name[pid])
        chain = reaches_tauri(pid)
        if chain:
            failures += 1
            print(f"crates: {name[pid]} depends on tauri: {name[pid]} -> " + " -> ".join(chain))
    print(f"crates: no tauri below the shell: checked {', '.join(checked)}")
    return failures



# ---------------------------------------------------------------------------------------------
# A check of the checker: a small crate whose edges are known, read before every run (a few
# milliseconds), so a change to the reading above cannot quietly stop seeing edges.

SELF_TEST_CRATE = {
    "src/lib.rs": """
        //! `crate::b::X` in a comment is no edge
        pub mod a;
        mod b;
        mod c;
        mod d;
        pub use b::{X as Y, self};
        pub use c::*;
        fn f() { let s = "crate::c::Z"; }
        #[cfg(test)]
        mod tests { use crate::c::Z; }
    """,
    "src/a/mod.rs": "mod inner;\npub struct A;\nfn g() { inner::h(); }\n",
    "src/a/inner.rs": "use super::A;\npub fn h() -> A { let _ = crate::Z; A }\n",
    "src/b.rs": "pub struct X;\nmod m { use super::X; fn q() -> X { X } }\n",
    "src/c.rs": "pub struct Z;\nfn k() -> crate::Y { todo!() }\n",
    "src/d.rs": "#[cfg(test)]\nuse crate::a::A;\nfn r() -> char { 'a' }\nfn s<'a>(x: &'a str) -> &'a str { x }\n",
}
SELF_TEST_EDGES = {
    ("src/a/mod.rs", "src/a/inner.rs"),  # a child module named in code
    ("src/a/inner.rs", "src/a/mod.rs"),  # super::
    ("src/a/inner.rs", "src/c.rs"),  # crate::Z through lib.rs's glob re-export
    ("src/c.rs", "src/b.rs"),  # crate::Y, a renamed re-export
}


def self_test() -> None:
    import tempfile
    import textwrap

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for name, text in SELF_TEST_CRATE.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(textwrap.dedent(text))
        crate = Crate(root, "self-test", Path("src/lib.rs"))
        found = {(str(a), str(b)) for a, b in module_edges(crate)}
        circles = [c for c in strongly_connected(sorted(crate.files[m].path for m in crate.files),
                                                 module_edges(crate)) if len(c) > 1]
    if found != SELF_TEST_EDGES or len(circles) != 1:
        raise SystemExit(
            f"import_circles.py reads its own test crate wrongly: edges {sorted(found)}, "
            f"expected {sorted(SELF_TEST_EDGES)}; circles {circles}"
        )


SELF_TEST_UI = {
    "ui/src/a.tsx": """
        // import { gone } from "./gone";   a comment is no edge
        import type { B } from "./b";
        import {
          c,
        } from "./c.js";
        const url = "http://x/*not a comment*/";
        export const a = 1;
    """,
    "ui/src/b.ts": 'export type B = number;\nexport * from "./lib";\nimport "./side";\n',
    "ui/src/c.ts": 'export const c = 1;\nexport const d = () => import("./a");\nimport React from "react";\n',
    "ui/src/lib/index.ts": "export const l = 1;\n",
    "ui/src/side.ts": "export {};\n",
    "ui/src/a.test.tsx": 'import { a } from "./a";\nimport { c } from "./c";\n',
    "ui/src/test/setup.ts": 'import "../b";\n',
}
SELF_TEST_UI_EDGES = {
    ("ui/src/a.tsx", "ui/src/b.ts"),  # a type-only import
    ("ui/src/a.tsx", "ui/src/c.ts"),  # over lines, `./c.js` naming c.ts
    ("ui/src/b.ts", "ui/src/lib/index.ts"),  # a re-export of a folder's index
    ("ui/src/b.ts", "ui/src/side.ts"),  # an import for its effect
    ("ui/src/c.ts", "ui/src/a.tsx"),  # a dynamic import
}


def self_test_ui() -> None:
    import tempfile
    import textwrap

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for name, text in SELF_TEST_UI.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(textwrap.dedent(text))
        files = ts_files(root, UI_SRC)
        edges = ts_edges(root, files)
    found = {(str(a), str(b)) for a, b in edges}
    circles = [c for c in strongly_connected(files, edges) if len(c) > 1]
    if found != SELF_TEST_UI_EDGES or len(circles) != 1:
        raise SystemExit(
            f"import_circles.py reads its own test UI wrongly: edges {sorted(found)}, "
            f"expected {sorted(SELF_TEST_UI_EDGES)}; circles {circles}"
        )


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--")}
    unknown = {f for f in flags if not f.startswith("--root=")} - {
        "--libraries-only",
        "--no-crates",
        "--verbose",
        "--help",
    }
    if unknown or "--help" in flags:
        print(__doc__)
        return 2 if unknown else 0
    self_test()
    self_test_ui()
    roots = [f.removeprefix("--root=") for f in flags if f.startswith("--root=")]
    repo = Path(roots[0]).resolve() if roots else Path(__file__).resolve().parent.parent
    os.chdir(repo)
    libraries_only = "--libraries-only" in flags
    scope = "the libraries (src-tauri/crates/*)" if libraries_only else "every crate, the shell and the UI"
    print(f"import circles: {scope}" + (f", reporting circles with a file matching {', '.join(args)}" if args else ""))
    circles = check_modules(repo, libraries_only, args, "--verbose" in flags)
    if not libraries_only:
        circles += check_ui(repo, UI_SRC, args, "--verbose" in flags)
    crate_failures = 0 if "--no-crates" in flags else check_crates(repo)
    if circles or crate_failures:
        print(f"FAILED: {circles} module circle(s), {crate_failures} crate problem(s)")
        return 1
    print("OK: no circles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
