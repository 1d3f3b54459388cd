#!/usr/bin/env bash
# The release workflow's steps (.github/workflows/release.yml), as commands that can also be run
# and tested here; the workflow itself only calls them and tauri-action.
#
#   scripts/release.sh version TAG
#       prints X.Y.Z when TAG is vX.Y.Z and that is the workspace's version (Cargo.toml), else
#       fails; in a workflow also writes it to $GITHUB_OUTPUT as `version`
#   scripts/release.sh create TAG
#       makes the draft GitHub release of TAG (the builds upload into it), unless it is there;
#       writes its id to $GITHUB_OUTPUT as `id` when run in a workflow
#   scripts/release.sh deps macos|windows|linux
#       what a fresh runner needs to build the app: on Linux Tauri's system libraries (apt), on
#       each the UI's npm packages (Rust and Node.js come from the workflow's setup actions)
#   scripts/release.sh cli TAG TARGET
#       the `partner` command alone for TARGET (scripts/cli-archive.sh), attached to the release;
#       on Linux also the bundler configuration that puts it into the .deb and .rpm
#   scripts/release.sh signing macos|windows|linux [--config FILE]...
#       which signing this build can do, from the secrets in its environment (APPLE_CERTIFICATE,
#       APPLE_CERTIFICATE_PASSWORD, APPLE_SIGNING_IDENTITY, APPLE_ID, APPLE_PASSWORD,
#       APPLE_TEAM_ID, TAURI_SIGNING_PRIVATE_KEY, TAURI_SIGNING_PRIVATE_KEY_PASSWORD; an absent
#       secret arrives as an empty string): it passes on to the following steps ($GITHUB_ENV)
#       only those that are set, since the Tauri CLI takes a variable that is set but empty for
#       a credential, and writes to $GITHUB_OUTPUT `args` (the tauri build arguments: the
#       release-only configurations of packaging/release/, on Linux the one `cli` wrote, and
#       each --config FILE), `updater` and `apple` (true or false)
#   scripts/release.sh upload TAG FILE...
#       attaches files to the release of TAG (replacing ones of the same name)
#   scripts/release.sh sums DIR
#       writes DIR/SHA256SUMS: the SHA-256 of every other file in DIR
#   scripts/release.sh publish TAG
#       once every build has uploaded: downloads the release's files, attaches SHA256SUMS and
#       the package managers' manifests (scripts/package-manifests.sh), checks that the
#       updater manifest (latest.json), if any, names every platform and is signed with the
#       key the apps trust, and publishes the draft
#   scripts/release.sh updater-key LATEST_JSON [TAURI_CONF]
#       checks that every signature in an updater manifest is by the key whose public half the
#       apps carry (plugins.updater.pubkey of src-tauri/tauri.conf.json, or TAURI_CONF)
#
# `create`, `cli`, `upload` and `publish` use the GitHub CLI (gh) with GH_TOKEN and GITHUB_REPOSITORY,
# as on a runner.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

die() { echo "release: $*" >&2; exit 1; }
# A path as the programs of this OS take it: on Windows (Git Bash) C:/... rather than /c/...
native_path() { if command -v cygpath >/dev/null; then cygpath -m "$1"; else printf '%s\n' "$1"; fi; }
linux_bundle_config=target/cli-archive/bundle.linux.json
# A Python that runs (on Windows `python3` may be the Store's stand-in), 3.11 or later (tomllib).
python=""
for candidate in python3 python; do
  if "$candidate" -c 'import tomllib' 2>/dev/null; then python=$candidate; break; fi
done
[ -n "$python" ] || die "Python 3.11 or later is needed"

version_of() {
  local tag=$1 version
  version=$("$python" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["workspace"]["package"]["version"])' Cargo.toml)
  [ "$tag" = "v$version" ] ||
    die "the tag $tag is not v$version, the version in Cargo.toml ([workspace.package]): set that version, commit, then tag"
  echo "$version"
}

# Appends NAME=VALUE to a GitHub Actions file ($GITHUB_ENV, $GITHUB_OUTPUT), in the form that
# takes any value (a multi-line one too).
put() {
  local file=$1 name=$2 value=$3 delimiter
  delimiter="EOF_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  printf '%s<<%s\n%s\n%s\n' "$name" "$delimiter" "$value" "$delimiter" >>"$file"
}

signing() {
  local os=${1:-} args=() missing=() present=() name apple=false updater=false
  shift || true
  case "$os" in macos | windows | linux) ;; *) die "signing: macos, windows or linux, not '$os'" ;; esac
  while [ $# -gt 0 ]; do
    case "$1" in
      --config) args+=(--config "$(native_path "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")")"); shift 2 ;;
      *) die "signing: unknown argument '$1'" ;;
    esac
  done
  : "${GITHUB_ENV:?signing: GITHUB_ENV is not set (it runs in a workflow, or a test gives it a file)}"
  : "${GITHUB_OUTPUT:?signing: GITHUB_OUTPUT is not set}"

  # The updater's signature of every bundle, from which tauri-action writes latest.json.
  if [ -n "${TAURI_SIGNING_PRIVATE_KEY:-}" ]; then
    updater=true
    put "$GITHUB_ENV" TAURI_SIGNING_PRIVATE_KEY "$TAURI_SIGNING_PRIVATE_KEY"
    [ -z "${TAURI_SIGNING_PRIVATE_KEY_PASSWORD:-}" ] ||
      put "$GITHUB_ENV" TAURI_SIGNING_PRIVATE_KEY_PASSWORD "$TAURI_SIGNING_PRIVATE_KEY_PASSWORD"
    args+=(--config "$(native_path "$root/packaging/release/updater.json")")
    echo "release: updater bundles signed with TAURI_SIGNING_PRIVATE_KEY; latest.json is written"
  else
    echo "release: no TAURI_SIGNING_PRIVATE_KEY: no updater bundles and no latest.json (installs do not update themselves)"
  fi

  if [ "$os" = macos ]; then
    # Signing needs the certificate, its password and the identity; notarization the Apple ID,
    # its app-specific password and the team. All of them, or none (an ad-hoc signature then).
    for name in APPLE_CERTIFICATE APPLE_CERTIFICATE_PASSWORD APPLE_SIGNING_IDENTITY APPLE_ID APPLE_PASSWORD APPLE_TEAM_ID; do
      if [ -n "${!name:-}" ]; then present+=("$name"); else missing+=("$name"); fi
    done
    if [ ${#missing[@]} -eq 0 ]; then
      apple=true
      for name in "${present[@]}"; do put "$GITHUB_ENV" "$name" "${!name}"; done
      echo "release: macOS: signed with APPLE_SIGNING_IDENTITY and notarized"
    elif [ ${#present[@]} -eq 0 ]; then
      args+=(--config "$(native_path "$root/packaging/release/macos-unsigned.json")")
      echo "release: macOS: no Apple signing secrets: signed ad hoc, not notarized (Gatekeeper asks the user to confirm)"
    else
      die "macOS: some Apple signing secrets are set (${present[*]}) and others are not (${missing[*]}): set all six, or none"
    fi
  fi

  if [ "$os" = linux ]; then
    [ -f "$linux_bundle_config" ] || die "no $linux_bundle_config: run scripts/release.sh cli first"
    args+=(--config "$root/$linux_bundle_config")
  fi
  put "$GITHUB_OUTPUT" args "${args[*]}"
  put "$GITHUB_OUTPUT" updater "$updater"
  put "$GITHUB_OUTPUT" apple "$apple"
}

sums() {
  local dir=$1
  [ -d "$dir" ] || die "sums: no folder $dir"
  local list
  list=$(mktemp)
  (
    cd "$dir"
    rm -f SHA256SUMS
    find . -maxdepth 1 -type f -printf '%f\n' | LC_ALL=C sort |
      while IFS= read -r file; do sha256sum -- "$file"; done >"$list"
  )
  chmod 644 "$list"
  mv "$list" "$dir/SHA256SUMS"
  echo "release: $(wc -l <"$dir/SHA256SUMS") files summed in $dir/SHA256SUMS"
}

# Checks that every signature in the updater manifest LATEST_JSON is by the key whose public
# half the apps carry (CONFIG, default src-tauri/tauri.conf.json: plugins.updater.pubkey): a
# release signed with another key would be refused by every installed app as "not signed with
# Partner Console's release key", so it is stopped here, before it is published. Both are
# minisign blobs: a signature and a public key each carry the key's 8-byte id after their
# 2-byte algorithm.
updater_key() {
  local manifest=$1 config=${2:-$root/src-tauri/tauri.conf.json}
  "$python" - "$manifest" "$config" <<'PY' || die "the updater manifest is not signed with the apps' key (above)"
import base64, json, sys
manifest, config = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def key_id(blob_line):
    blob = base64.b64decode(blob_line)
    return blob[2:10][::-1].hex().upper()
def second_line(text_b64):
    return base64.b64decode(text_b64).decode().splitlines()[1]
trusted = key_id(second_line(config["plugins"]["updater"]["pubkey"]))
wrong = {name: key_id(second_line(entry["signature"]))
         for name, entry in manifest.get("platforms", {}).items()}
wrong = {name: found for name, found in wrong.items() if found != trusted}
if wrong:
    for name, found in sorted(wrong.items()):
        print(f"release: {name} is signed with key {found}; the apps trust {trusted} "
              f"(plugins.updater.pubkey in {sys.argv[2]})", file=sys.stderr)
    sys.exit(1)
print(f"release: every update in the manifest is signed with the apps' key {trusted}")
PY
}

publish() {
  local tag=$1 version scratch platform
  version=$(version_of "$tag")
  : "${GITHUB_REPOSITORY:?publish: GITHUB_REPOSITORY (owner/name) is not set}"
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' RETURN
  mkdir "$scratch/assets"
  gh release download "$tag" --dir "$scratch/assets"
  rm -f "$scratch/assets/SHA256SUMS" "$scratch"/assets/package-manifests_*.tar.gz
  sums "$scratch/assets"
  bash scripts/package-manifests.sh "$version" --sums "$scratch/assets/SHA256SUMS" \
    --base-url "https://github.com/$GITHUB_REPOSITORY/releases/download/$tag" --out "$scratch/manifests"
  tar -czf "$scratch/package-manifests_$version.tar.gz" -C "$scratch/manifests" .
  if [ -f "$scratch/assets/latest.json" ]; then
    updater_key "$scratch/assets/latest.json"
    for platform in darwin-aarch64 darwin-x86_64 windows-x86_64 linux-x86_64; do
      "$python" -c 'import json, sys; sys.exit(sys.argv[2] not in json.load(open(sys.argv[1]))["platforms"])' \
        "$scratch/assets/latest.json" "$platform" ||
        die "latest.json has no $platform: a build's upload raced another's; run its job again, then this one"
    done
  fi
  gh release upload "$tag" --clobber "$scratch/assets/SHA256SUMS" "$scratch/package-manifests_$version.tar.gz"
  gh release edit "$tag" --draft=false
  echo "release: $tag published with $(wc -l <"$scratch/assets/SHA256SUMS") files summed"
}

command=${1:-}
shift || true
case "$command" in
  version)
    [ $# -eq 1 ] || die "usage: release.sh version TAG"
    version=$(version_of "$1")
    echo "$version"
    [ -z "${GITHUB_OUTPUT:-}" ] || put "$GITHUB_OUTPUT" version "$version"
    ;;
  create)
    [ $# -eq 1 ] || die "usage: release.sh create TAG"
    version=$(version_of "$1")
    if gh release view "$1" >/dev/null 2>&1; then
      echo "release: $1 exists; the builds upload into it"
    else
      gh release create "$1" --draft --verify-tag --title "Partner Console $version" --generate-notes
    fi
    if [ -n "${GITHUB_OUTPUT:-}" ]; then
      id=$(gh api "repos/$GITHUB_REPOSITORY/releases" --paginate --jq ".[] | select(.tag_name == \"$1\") | .id" | head -1)
      [ -n "$id" ] || die "the release of $1 is not listed"
      put "$GITHUB_OUTPUT" id "$id"
    fi
    ;;
  deps)
    case "${1:-}" in
      linux)
        # Tauri's build dependencies on Ubuntu (the oldest supported, for the glibc the packages need).
        sudo apt-get update -qq
        sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libwebkit2gtk-4.1-dev build-essential \
          curl wget file libxdo-dev libssl-dev libayatana-appindicator3-dev librsvg2-dev >/dev/null
        ;;
      macos | windows) ;;
      *) die "usage: release.sh deps macos|windows|linux" ;;
    esac
    (cd ui && npm ci --no-audit --no-fund --loglevel=error)
    ;;
  cli)
    [ $# -eq 2 ] || die "usage: release.sh cli TAG TARGET"
    version_of "$1" >/dev/null
    bundle_args=()
    case "$2" in *linux*) bundle_args=(--bundle-config "$linux_bundle_config") ;; esac
    mkdir -p target/cli-archive
    archive=$(bash scripts/cli-archive.sh "$2" --out target/cli-archive ${bundle_args[@]+"${bundle_args[@]}"} | tail -1)
    gh release upload "$1" --clobber "$archive"
    ;;
  signing) signing "$@" ;;
  upload)
    [ $# -ge 2 ] || die "usage: release.sh upload TAG FILE..."
    gh release upload "$1" --clobber "${@:2}"
    ;;
  sums) [ $# -eq 1 ] || die "usage: release.sh sums DIR"; sums "$1" ;;
  publish) [ $# -eq 1 ] || die "usage: release.sh publish TAG"; publish "$1" ;;
  updater-key)
    if [ $# -lt 1 ] || [ $# -gt 2 ]; then die "usage: release.sh updater-key LATEST_JSON [TAURI_CONF]"; fi
    updater_key "$@"
    ;;
  *) sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
