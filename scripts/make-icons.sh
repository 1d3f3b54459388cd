#!/usr/bin/env bash
# Makes every icon the packages need from the one source image, icons/app-icon.png (512×512),
# with the Tauri CLI's icon command, into icons/ (checked in): icon.ico (Windows), icon.icns
# (macOS), 32x32.png, 128x128.png, 128x128@2x.png and icon.png (Linux, the window), the Windows
# Store's Square*Logo.png, and icons/png/SIZExSIZE.png at every size a Linux desktop's hicolor
# theme looks for. Run it after changing the source image, and commit what it writes.
#
# Why checked in rather than made at packaging time: the Windows build's tauri-build needs
# icons/icon.ico before any packaging step, and a release runner then packages exactly what was
# reviewed. Android and iOS icons are not made: the console is a desktop app.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tauri=(npx --no-install tauri)
[ -x ui/node_modules/.bin/tauri ] || { echo "make-icons: run scripts/setup.sh first (the Tauri CLI is a UI dev dependency)" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
make() { (cd ui && "${tauri[@]}" icon "$root/icons/app-icon.png" "$@") >"$scratch/log" 2>&1 || { cat "$scratch/log" >&2; exit 1; }; }
make --output "$scratch/all"
make --output "$scratch/png" --png 16,24,32,48,64,128,256,512
rm -rf "$scratch/all/android" "$scratch/all/ios"
find icons -mindepth 1 ! -name app-icon.png -delete
cp -r "$scratch/all/." icons/
mkdir -p icons/png
cp "$scratch"/png/*x*.png icons/png/
echo "make-icons: $(find icons -type f | wc -l) files in icons/"
