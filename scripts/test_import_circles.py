#!/usr/bin/env python3
"""Tests of scripts/import_circles.py from outside: a folder laid out as this repository, with
a circle put in on purpose, must fail the check with the circle and its import lines printed;
the same folder without it must pass.

Why beside the checker's built-in self-test (which checks how it reads a small crate and a
small UI before every run): this runs the whole command, as scripts/test.sh does, so a circle
that is read but not reported, or reported with exit status 0, is caught too.

Run: python3 scripts/test_import_circles.py  (no build, no network; about a second)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

CHECKER = Path(__file__).resolve().parent / "import_circles.py"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECKER), "--no-crates", f"--root={root}"],
        capture_output=True,
        text=True,
        timeout=60,
    )


# Listing.tsx <-> SearchBar.tsx as it was: a component, and a part of it importing a type back.
UI_WITH_CIRCLE = {
    "ui/src/features/listing/Listing.tsx": """
        import type { ReactNode } from "react";
        import { SearchBar } from "./SearchBar";
        export interface ListingColumn<T> { id: string; cell: (row: T) => ReactNode }
        export function Listing() { return SearchBar; }
    """,
    "ui/src/features/listing/SearchBar.tsx": """
        import type { ListingColumn } from "./Listing";
        export function SearchBar(columns: ListingColumn<unknown>[]) { return columns; }
    """,
    "ui/src/features/listing/Listing.test.tsx": 'import { Listing } from "./Listing";\n',
}

# The same with the shared type in a file of its own.
UI_WITHOUT_CIRCLE = {
    "ui/src/features/listing/listingColumn.ts": """
        import type { ReactNode } from "react";
        export interface ListingColumn<T> { id: string; cell: (row: T) => ReactNode }
    """,
    "ui/src/features/listing/Listing.tsx": """
        import { SearchBar } from "./SearchBar";
        import type { ListingColumn } from "./listingColumn";
        export type { ListingColumn };
        export function Listing() { return SearchBar; }
    """,
    "ui/src/features/listing/SearchBar.tsx": """
        import type { ListingColumn } from "./listingColumn";
        export function SearchBar(columns: ListingColumn<unknown>[]) { return columns; }
    """,
}

CRATE_WITH_CIRCLE = {
    "src-tauri/crates/demo/src/lib.rs": "mod a;\nmod b;\n",
    "src-tauri/crates/demo/src/a.rs": "pub struct A;\npub fn f() -> crate::b::B { crate::b::B }\n",
    "src-tauri/crates/demo/src/b.rs": "use super::a::A;\npub struct B;\npub fn g() -> A { A }\n",
}


class ImportCircles(unittest.TestCase):
    def test_a_ui_circle_through_a_type_only_import_fails_with_the_cycle_printed(self) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            write(Path(scratch), UI_WITH_CIRCLE)
            result = check(Path(scratch))
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        out = result.stdout
        self.assertIn("CIRCLE 1 in ui: 2 files", out)
        self.assertIn("ui/src/features/listing/Listing.tsx", out)
        self.assertIn(
            'features/listing/SearchBar.tsx -> features/listing/Listing.tsx   '
            '[line 1: import type … "./Listing"]',
            out,
        )
        self.assertIn('features/listing/Listing.tsx -> features/listing/SearchBar.tsx', out)
        self.assertIn("ui: 2 files", out, "the test file is left out")
        self.assertIn("FAILED: 1 module circle(s)", out)

    def test_the_shared_type_in_its_own_file_passes(self) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            write(Path(scratch), UI_WITHOUT_CIRCLE)
            result = check(Path(scratch))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("ui: 3 files, 3 file-to-file edges, 0 circle(s)", result.stdout)
        self.assertIn("OK: no circles", result.stdout)

    def test_a_rust_circle_fails_too(self) -> None:
        with tempfile.TemporaryDirectory() as scratch:
            write(Path(scratch), CRATE_WITH_CIRCLE)
            result = check(Path(scratch))
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("CIRCLE 1 in demo: 2 files", result.stdout)
        self.assertIn("a.rs -> b.rs", result.stdout)
        self.assertIn("b.rs -> a.rs", result.stdout)
        self.assertIn("ui: no ui/src: not checked", result.stdout)


if __name__ == "__main__":
    unittest.main()
