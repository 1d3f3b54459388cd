#!/usr/bin/env bash
# The `partner` command alone, as a release artefact: builds it for TARGET in release and packs
# it with its man pages, shell completions, the README and the licence into one archive,
# a .tar.gz on macOS and Linux and a .zip on Windows:
#
#   partner-cli_VERSION_TARGET/partner[.exe]
#                              man/partner*.1                 (man 1 pages, as `partner man` writes them)
#                              completions/partner.bash, _partner, partner.fish, _partner.ps1
#                              README.md, LICENSE
#
# It prints the archive's path as its last line. The release workflow runs it on each OS's own
# runner (.github/workflows/release.yml); it runs here too, for x86_64-unknown-linux-gnu.
# The version is the workspace's (Cargo.toml). With --bundle-config FILE it also writes the Tauri
# bundler configuration that puts the same binary, man pages and completions into the Linux
# .deb and .rpm (what scripts/package.sh does for the packages built here), so the release's
# packages carry the command as well as the app.
#
# Usage: scripts/cli-archive.sh TARGET [--out DIR] [--bundle-config FILE]
#   TARGET   a Rust target triple (x86_64-unknown-linux-gnu, aarch64-apple-darwin,
#            x86_64-apple-darwin, x86_64-pc-windows-msvc, ...); the host's own is built
#            without --target, so it shares the compiled dependencies of the app's build
#   DIR      where the archive goes (default: target/cli-archive)
# CARGO_TARGET_DIR is honoured (a release build; here use one outside the shared target folder).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

target=""
out=$root/target/cli-archive
bundle_config=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --bundle-config) bundle_config=$2; shift 2 ;;
    -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "cli-archive: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) [ -z "$target" ] || { echo "cli-archive: one target only" >&2; exit 2; }; target=$1; shift ;;
  esac
done
[ -n "$target" ] || { echo "usage: scripts/cli-archive.sh TARGET [--out DIR] [--bundle-config FILE]" >&2; exit 2; }

# shellcheck disable=SC1091
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
# A Python that runs (on Windows `python3` may be the Store's stand-in), 3.11 or later (tomllib).
python=""
for candidate in python3 python; do
  if "$candidate" -c 'import tomllib' 2>/dev/null; then python=$candidate; break; fi
done
[ -n "$python" ] || { echo "cli-archive: Python 3.11 or later is needed" >&2; exit 1; }
version=$("$python" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["workspace"]["package"]["version"])' Cargo.toml)
target_dir=${CARGO_TARGET_DIR:-$root/target}
host=$(rustc -vV | sed -n 's/^host: //p')

exe=""
case "$target" in *windows*) exe=.exe ;; esac
if [ "$target" = "$host" ]; then
  cargo build --release --locked -p partner-cli
  binary=$target_dir/release/partner$exe
else
  cargo build --release --locked -p partner-cli --target "$target"
  binary=$target_dir/$target/release/partner$exe
fi

name=partner-cli_${version}_$target
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$out/$name
rm -rf "$stage"
mkdir -p "$stage/man" "$stage/completions"
cp "$binary" "$stage/"
cp README.md LICENSE "$stage/"
# The man pages and completions come from the binary itself (the same definitions as --help),
# so it must run on the build machine: each OS's runner builds its own.
"$stage/partner$exe" man --out "$stage/man" >/dev/null 2>&1 ||
  { echo "cli-archive: $stage/partner$exe does not run on this machine (a $target build on $host?)" >&2; exit 1; }
"$stage/partner$exe" completions bash >"$stage/completions/partner.bash"
"$stage/partner$exe" completions zsh >"$stage/completions/_partner"
"$stage/partner$exe" completions fish >"$stage/completions/partner.fish"
"$stage/partner$exe" completions powershell >"$stage/completions/_partner.ps1"

case "$target" in
  *windows*)
    archive=$out/$name.zip
    rm -f "$archive"
    (cd "$out" && "$python" -m zipfile -c "$archive" "$name")
    ;;
  *)
    archive=$out/$name.tar.gz
    # With GNU tar (Linux) the files are owned by nobody in particular and in a stable order;
    # macOS's bsdtar packs them as they are.
    if tar --version 2>/dev/null | grep -q GNU; then
      (cd "$out" && tar --sort=name --owner=0 --group=0 --numeric-owner -czf "$archive" "$name")
    else
      (cd "$out" && tar -czf "$archive" "$name")
    fi
    ;;
esac

if [ -n "$bundle_config" ]; then
  # The packages' man pages are compressed, as Debian's policy wants them.
  man_gz=$out/$name.man-gz
  rm -rf "$man_gz"
  cp -R "$stage/man" "$man_gz"
  gzip -9n "$man_gz"/*.1
  "$python" - "$stage" "$man_gz" >"$bundle_config" <<'PY'
import json, os, sys
stage, man_gz = sys.argv[1], sys.argv[2]
files = {"/usr/bin/partner": f"{stage}/partner"}
for page in sorted(os.listdir(man_gz)):
    files[f"/usr/share/man/man1/{page}"] = f"{man_gz}/{page}"
files["/usr/share/bash-completion/completions/partner"] = f"{stage}/completions/partner.bash"
files["/usr/share/zsh/vendor-completions/_partner"] = f"{stage}/completions/_partner"
files["/usr/share/fish/vendor_completions.d/partner.fish"] = f"{stage}/completions/partner.fish"
print(json.dumps({"bundle": {"linux": {"deb": {"files": files}, "rpm": {"files": files}}}}, indent=2))
PY
  echo "cli-archive: the .deb and .rpm files in $bundle_config" >&2
fi
echo "$archive"
