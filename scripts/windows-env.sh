# Sourced by scripts/build-windows.sh and tests/windows/run.sh: the environment of a Windows
# cross-build (x86_64-pc-windows-gnu) with Debian's Rust and MinGW, and the cargo command line
# that builds the target's standard library. See scripts/build-windows.sh for why.
target=x86_64-pc-windows-gnu
for tool in /usr/bin/cargo /usr/bin/rustc x86_64-w64-mingw32-gcc; do
  if ! command -v "$tool" >/dev/null; then
    echo "windows build: $tool is missing: run scripts/setup.sh (it installs rustc-web, cargo-web, rust-web-src and MinGW)" >&2
    exit 1
  fi
done
export CARGO_TARGET_DIR=${PARTNER_WINDOWS_TARGET_DIR:-/var/tmp/partner-console-windows-target}
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CARGO_INCREMENTAL=0
# Only line tables, as the Linux debug builds: the test binaries stay small enough to link fast.
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
# shellcheck source=scripts/cross-source.sh
. scripts/cross-source.sh
sync_cross_source
windows_cargo=(/usr/bin/cargo)
windows_flags=(--locked --manifest-path "$cross_source/Cargo.toml" -Zbuild-std=std,panic_abort --target "$target")
# The crates whose unit tests run under Wine: those that touch files (the listener's store and
# journal, the local settings and audit log, the support index).
windows_test_crates=(-p partner-listener -p partner-local -p partner-index)
