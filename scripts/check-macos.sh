#!/usr/bin/env bash
# Type-checks for macOS (aarch64-apple-darwin) every crate this Linux machine can: those with
# no C code that needs Apple's SDK. partner-api, partner-client (with keyring's macOS Keychain
# store, `apple-native`) and partner-conformance check here; the crates that link SQLCipher or
# mimalloc include the SDK's stdio.h and are built and tested on a macOS runner by the release
# workflow instead (../shared/guide/platforms.md has the facts).
#
# How: Debian's Rust (`rustc-web`, `rust-web-src`) builds the target's standard library from
# source for the check (rustup cannot download targets here); ring's C is compiled by clang
# freestanding, with a stand-in for the SDK's TargetConditionals.h (tests/macos/). The target
# folder lives outside the clone, so a later run on the same machine is warm.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in /usr/bin/cargo /usr/bin/rustc clang; do
  if ! command -v "$tool" >/dev/null; then
    echo "check-macos: $tool is missing: run scripts/setup.sh" >&2
    exit 1
  fi
done
target=aarch64-apple-darwin
export CARGO_TARGET_DIR=${PARTNER_MACOS_TARGET_DIR:-/var/tmp/partner-console-macos-target}
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
export RUSTC_BOOTSTRAP=1
export CARGO_INCREMENTAL=0
# shellcheck source=scripts/cross-source.sh
. scripts/cross-source.sh
sync_cross_source
# In the copy, whose path does not change from run to run (a changed flag rebuilds ring).
stand_in=$cross_source/tests/macos
export CC_aarch64_apple_darwin=clang
export CFLAGS_aarch64_apple_darwin="-ffreestanding -nostdlibinc -DRING_CORE_NOSTDLIBINC -I$stand_in"
# Where cc-rs would ask xcrun for the SDK: any folder will do for a freestanding compile.
export SDKROOT=$stand_in
/usr/bin/cargo check --locked --manifest-path "$cross_source/Cargo.toml" \
  -Zbuild-std=std,panic_abort --target "$target" \
  -p partner-api -p partner-client -p partner-conformance
echo "check-macos: partner-api, partner-client and partner-conformance type-check for $target"
