#!/usr/bin/env bash
# Cross-builds the Windows programs (x86_64-pc-windows-gnu) on this Debian machine: `partner.exe`
# by default, with `--app` also `partner-console.exe`, with `--tests` the unit tests of the
# crates that touch files (run under Wine by tests/windows/run.sh). Prints the path
# of partner.exe as its last line.
#
# Why this way (../shared/guide/platforms.md has the facts): rustup cannot download other
# targets here, so Debian's own Rust (`rustc-web`, `cargo-web`, `rust-web-src`) builds the
# target's standard library from source (-Zbuild-std, hence RUSTC_BOOTSTRAP), and MinGW links.
# The target folder lives outside the clone (PARTNER_WINDOWS_TARGET_DIR), so a later run on the
# same machine is warm: about 13 minutes cold on 2 cores, seconds to a minute warm.
set -euo pipefail
cd "$(dirname "$0")/.."

app=false
tests=false
for arg in "$@"; do
  case $arg in
    --app) app=true ;;
    --tests) tests=true ;;
    *) echo "usage: scripts/build-windows.sh [--app] [--tests]" >&2; exit 2 ;;
  esac
done

. scripts/windows-env.sh
build=("${windows_cargo[@]}" build "${windows_flags[@]}")

"${build[@]}" -p partner-cli --bin partner
if $tests; then
  "${windows_cargo[@]}" test --no-run --lib "${windows_flags[@]}" "${windows_test_crates[@]}"
fi
if $app; then
  "${build[@]}" -p partner-console
fi
echo "$CARGO_TARGET_DIR/$target/debug/partner.exe"
