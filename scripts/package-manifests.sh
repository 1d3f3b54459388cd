#!/usr/bin/env bash
# Writes, and checks, the package managers' manifests of a release from its SHA256SUMS: a
# Homebrew cask (the app's .dmg for arm64 and x64), a winget manifest set (schema 1.6.0: the
# NSIS installer, per user or machine-wide) and a Scoop manifest (the `partner` command's
# Windows zip), laid out as a tap, winget-pkgs and a bucket lay them out:
#
#   DIR/Casks/partner-console.rb
#   DIR/winget/manifests/p/PartnerConsole/PartnerConsole/VERSION/*.yaml
#   DIR/bucket/partner.json
#
# Publishing a version is then this one command and a copy of each into its repository (the
# tap, a pull request to winget-pkgs or `wingetcreate submit DIR/winget/manifests/...`, the
# bucket). The release workflow runs it once every artefact is uploaded and attaches the result
# to the release as package-manifests_VERSION.tar.gz.
#
# Usage: scripts/package-manifests.sh VERSION [--sums FILE|URL] [--base-url URL] [--out DIR]
#   --base-url  where the release's files are downloaded from (default: the GitHub release of
#               tag vVERSION of this clone's `origin`)
#   --sums      the release's SHA256SUMS (default: BASE-URL/SHA256SUMS, downloaded)
#   --out       default: target/package-manifests/VERSION
# The checks need PyYAML (PYTHON names the Python to use; scripts/test.sh gives it one with it);
# without it the manifests are written and the check is skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."

version=""
sums=""
base_url=""
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --sums) sums=$2; shift 2 ;;
    --base-url) base_url=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "package-manifests: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) version=${1#v}; shift ;;
  esac
done
[ -n "$version" ] || { echo "usage: scripts/package-manifests.sh VERSION [--sums FILE|URL] [--base-url URL] [--out DIR]" >&2; exit 2; }
python=${PYTHON:-python3}

if [ -z "$base_url" ]; then
  origin=$(git remote get-url origin 2>/dev/null) ||
    { echo "package-manifests: no --base-url and no git remote 'origin' to derive it from" >&2; exit 2; }
  repo=$(printf '%s\n' "$origin" | sed -E 's#^(git@github\.com:|https://github\.com/)##; s#\.git$##')
  base_url=https://github.com/$repo/releases/download/v$version
fi
out=${out:-target/package-manifests/$version}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
case "${sums:-$base_url/SHA256SUMS}" in
  http://* | https://*)
    curl --fail --silent --show-error --location -o "$scratch/SHA256SUMS" "${sums:-$base_url/SHA256SUMS}"
    sums=$scratch/SHA256SUMS
    ;;
esac

"$python" packaging/manifests/manifests.py write "$version" --sums "$sums" --base-url "$base_url" --out "$out"
if "$python" -c 'import yaml' 2>/dev/null; then
  "$python" packaging/manifests/manifests.py check "$out"
else
  echo "package-manifests: not checked ($python has no PyYAML)" >&2
fi
