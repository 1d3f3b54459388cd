#!/usr/bin/env bash
# Builds the Windows installer of the `partner` command alone on this Linux machine, with Debian's
# makensis (packaging/windows/partner-cli.nsi says what the installer does): per user by default,
# machine-wide with /ALLUSERS, silent with /S, with an uninstaller that takes its PATH entry away.
#
# Usage: scripts/build-cli-installer.sh [--exe PARTNER_EXE] [--out DIR] [--fast]
#   --exe    the partner.exe to install (default: the one scripts/build-windows.sh cross-builds,
#            a debug build). What is installed is stripped; its debug information and
#            symbols, if it has any, are split off into DIR/partner.exe.debug (objcopy
#            --only-keep-debug, with a debug link in the .exe), which symbolicates its crashes.
#   --out    where the installer goes (default: target/windows-installer)
#   --fast   stored without compression: seconds instead of minutes for a debug build (the tests)
# Prints the installer's path as its last line. The version is the workspace's (Cargo.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

exe=""
out=$root/target/windows-installer
fast=false
while [ $# -gt 0 ]; do
  case $1 in
    --exe) exe=$(realpath "$2"); shift 2 ;;
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --fast) fast=true; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-cli-installer: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for tool in makensis x86_64-w64-mingw32-gcc x86_64-w64-mingw32-objcopy; do
  if ! command -v "$tool" >/dev/null; then
    echo "build-cli-installer: $tool is missing: run scripts/setup.sh (it installs nsis and MinGW)" >&2
    exit 1
  fi
done
if [ -z "$exe" ]; then
  exe=$(scripts/build-windows.sh | tail -1)
fi

version=$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml","rb"))["workspace"]["package"]["version"])')
# Windows' version resource wants four numbers: 1.2.3-beta.4 gives 1.2.3.0.
product_version=$(python3 -c 'import re,sys; n=re.findall(r"\d+", sys.argv[1].split("-")[0])[:3]; print(".".join(n + ["0"] * (4 - len(n))))' "$version")

mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# What is installed carries no debug information; what there was goes beside the installer.
cp "$exe" "$work/partner.exe"
rm -f "$out/partner.exe.debug"
if x86_64-w64-mingw32-objdump -h "$work/partner.exe" | grep -q ' \.debug_info '; then
  x86_64-w64-mingw32-objcopy --only-keep-debug "$work/partner.exe" "$out/partner.exe.debug"
  x86_64-w64-mingw32-objcopy --strip-all --add-gnu-debuglink="$out/partner.exe.debug" "$work/partner.exe"
else
  x86_64-w64-mingw32-objcopy --strip-all "$work/partner.exe"
fi

x86_64-w64-mingw32-gcc -municode -O2 -s -Wall -Wextra -Werror \
  -o "$work/path-entry.exe" packaging/windows/path-entry.c

installer=$out/partner-cli-$version-x64-setup.exe
defines=(-DVERSION="$version" -DPRODUCT_VERSION="$product_version" -DPARTNER_EXE="$work/partner.exe"
  -DPATH_ENTRY_EXE="$work/path-entry.exe" -DOUT_FILE="$installer" -DICON="$root/icons/icon.ico")
$fast && defines+=(-DFAST)
makensis -V2 -WX "${defines[@]}" packaging/windows/partner-cli.nsi >&2
echo "build-cli-installer: $(du -h "$installer" | cut -f1) $installer (partner.exe $(du -h "$work/partner.exe" | cut -f1))" >&2
echo "$installer"
