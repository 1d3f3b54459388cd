#!/usr/bin/env bash
# The Windows build, checked on this Linux machine: cross-builds `partner.exe` and the unit
# tests of the crates that touch files (scripts/build-windows.sh), then runs them under Wine:
# - the unit tests of the listener (store, journal, recovery after a crash), the local settings
#   and audit log, and the support index;
# - a smoke run of the CLI as a Windows user would use it: the sandbox, a token, listings, the
#   client secret kept in the Windows credential store and used from there, the listener with a
#   signed and a forged notification, killed and exported (the journal's recovery), and a demo
#   scenario played to its end;
# - the CLI's installer (scripts/build-cli-installer.sh, makensis) built from that partner.exe,
#   installed silently per user and machine-wide, `partner --version` run by name from a new
#   console, and uninstalled (tests/windows/installer.sh).
# What cannot run here: the app (it needs Microsoft's WebView2 runtime); `--app` builds it, so
# that at least its link is checked.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

build_args=(--tests)
for arg in "$@"; do
  case $arg in
    --app) build_args+=(--app) ;;
    *) echo "usage: tests/windows/run.sh [--app]" >&2; exit 2 ;;
  esac
done
partner_exe=$(scripts/build-windows.sh "${build_args[@]}" | tail -1)
. scripts/windows-env.sh

# A Wine prefix of our own, kept outside the clone (creating one takes a few seconds), with the
# stand-in for the DLL Wine 8 lacks (tests/windows/bcryptprimitives.c says why).
export WINEPREFIX=${PARTNER_WINE_PREFIX:-/var/tmp/partner-console-wine}
export WINEDEBUG=-all
# No Mono or Gecko install prompt: nothing here uses .NET or HTML.
export WINEDLLOVERRIDES="mscoree,mshtml="
wine=(wine)
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  echo "windows: making the Wine prefix $WINEPREFIX"
  "${wine[@]}" wineboot --init >/dev/null 2>&1
  wineserver -w
fi
system32="$WINEPREFIX/drive_c/windows/system32"
if [ ! -f "$system32/bcryptprimitives.dll" ] ||
  [ tests/windows/bcryptprimitives.c -nt "$system32/bcryptprimitives.dll" ]; then
  x86_64-w64-mingw32-gcc -shared -O2 -o "$system32/bcryptprimitives.dll" \
    tests/windows/bcryptprimitives.c -ladvapi32
fi

echo "== windows: unit tests under Wine"
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine \
  "${windows_cargo[@]}" test --lib "${windows_flags[@]}" "${windows_test_crates[@]}"

echo "== windows: partner.exe under Wine"
tests/windows/smoke.sh "${wine[@]}" "$partner_exe"

echo "== windows: the CLI's installer under Wine"
tests/windows/installer.sh "$partner_exe"
