#!/usr/bin/env bash
# Fails when files of a crate or of the UI (ui/src) import each other in a circle, when the
# workspace crates depend on each other in a cycle, or when a crate other than the shell depends
# on tauri. The reading of the code and why is in scripts/import_circles.py (its own tests:
# scripts/test_import_circles.py). Takes seconds: no build, only the sources and `cargo metadata`.
#   scripts/check-import-circles.sh                   # every crate, the shell (src-tauri/src), ui/src
#   scripts/check-import-circles.sh --libraries-only  # src-tauri/crates/* only
#   scripts/check-import-circles.sh --verbose [PATH_PART ...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
exec python3 scripts/import_circles.py "$@"
