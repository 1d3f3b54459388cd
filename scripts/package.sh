#!/usr/bin/env bash
# Builds the release packages with Tauri's bundler: a .deb and an .rpm (no AppImage: its bundler
# downloads linuxdeploy, and this project's machines reach only the package registries).
#
# One package carries both halves of the product:
#   /usr/bin/partner-console             the desktop app, with its desktop entry and icons
#   /usr/bin/partner                     the command-line tool
#   /usr/share/man/man1/partner*.1.gz    its man pages (from the same definitions as --help)
#   bash, zsh and fish completions       in each shell's vendor folder
# The icons are those checked in under icons/png/ at every size the desktop looks for (made by
# scripts/make-icons.sh from icons/app-icon.png). The version is the workspace's (Cargo.toml); nothing else states it.
#
# Usage: scripts/package.sh [--out DIR] [--debug] [--version V] [--features F] [--bundles deb,rpm]   (default DIR: target/package)
#   --debug bundles the debug build instead of the release one: the same files, desktop entry,
#   dependencies and install, from the binaries a test run has already compiled. The test run
#   (scripts/test.sh) uses it, because a release build of the whole app takes about 17 minutes
#   on a 2-core machine and would check nothing about the package the debug build does not;
#   what ships is built without it.
#
# What ships is the release profile's build (Cargo.toml: optimised for size and start-up,
# stripped). Its line tables are split off into DIR/debug/partner.debug and
# DIR/debug/partner-console.debug, a release artefact that symbolicates the binaries' crashes and
# profiles (gdb, perf, addr2line, debuginfod find it by the binary's debug link or build id).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

out=$root/target/package
profile=release
# --version V packages the app as version V (the app itself says V; only the app crate is
# compiled again) and --features F builds it with those features: the update test
# (tests/package/update.sh) makes versions N and N+1 with the test hooks so. With
# TAURI_SIGNING_PRIVATE_KEY (and _PASSWORD) set, each package gets the updater's signature
# beside it (NAME.sig: minisign, bound to the version), which the update manifest carries.
version_override=""
app_features=""
# --bundles LIST: which packages (default deb,rpm); the update test needs only the .deb.
bundles=deb,rpm
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --debug) profile=debug; shift ;;
    --version) version_override=$2; shift 2 ;;
    --features) app_features=$2; shift 2 ;;
    --bundles) bundles=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

scripts/setup.sh
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"

target_dir=${CARGO_TARGET_DIR:-$root/target}
if [ "$profile" = release ]; then
  # The profile's own split (`split-debuginfo = "packed"`, a .dwp on Linux) needs the skeleton
  # it leaves in the binary, which stripping removes; so here the binaries are linked whole
  # (the same code: only where the debug information goes differs) and split after the link
  # with objcopy, the way Linux debuggers and debuginfod expect (split_debug_info below).
  export CARGO_PROFILE_RELEASE_STRIP=none CARGO_PROFILE_RELEASE_SPLIT_DEBUGINFO=off
  # Linked again on every run, so a binary stripped by an earlier run is never split twice.
  rm -f "$target_dir/release/partner" "$target_dir/release/partner-console"
fi
if [ "$profile" = debug ]; then
  # The debug build with the features `cargo test --workspace` unifies (as tests/e2e/run.sh
  # builds it), so after a test run nothing is compiled again but the app crate.
  cargo_args=(--workspace --bins --examples)
  tauri_args=(--debug)
  # The Tauri CLI builds `cargo build --bins` of the app's package alone, whose dependencies'
  # features Cargo unifies over that package only: 179 crates were compiled again in another
  # variant (6 minutes of a bare run; a warm target had kept them). Handed the workspace's
  # selection, the build has the test build's features and compiles only the app crate.
  tauri_cargo_args=(-- --workspace --examples)
else
  cargo_args=(--release -p partner-cli)
  tauri_args=()
  tauri_cargo_args=()
fi
if [ -n "$app_features" ]; then tauri_args+=(--features "$app_features"); fi

echo "package: building the partner command ($profile)"
cargo build "${cargo_args[@]}" --locked --quiet

stage=$out/stage
rm -rf "$stage" "$out/debug"
mkdir -p "$stage/man" "$stage/completions"

# BINARY's debug information into DIR/debug/NAME.debug, then BINARY stripped (as the release
# profile strips it) with a debug link to that file.
split_debug_info() {
  local binary=$1 debug
  debug="$out/debug/$(basename "$1").debug"
  mkdir -p "$out/debug"
  objcopy --only-keep-debug --compress-debug-sections=zlib "$binary" "$debug"
  objcopy --strip-all --add-gnu-debuglink="$debug" "$binary"
}
partner_bin=$target_dir/$profile/partner
if [ "$profile" = release ]; then
  cp "$target_dir/release/partner" "$stage/partner"
  partner_bin=$stage/partner
  split_debug_info "$partner_bin"
fi

"$target_dir/$profile/partner" man --out "$stage/man" 2>/dev/null
gzip -9n "$stage"/man/*.1
"$target_dir/$profile/partner" completions bash >"$stage/completions/partner.bash"
"$target_dir/$profile/partner" completions zsh >"$stage/completions/_partner"
"$target_dir/$profile/partner" completions fish >"$stage/completions/partner.fish"

sizes=16,24,32,48,64,128,256,512

# The bundler's configuration for this build: the generated files, by absolute path, merged over
# tauri.conf.json (which holds everything that does not change from build to build).
python3 - "$stage" "$partner_bin" "$sizes" >"$out/tauri.package.json" <<'PY'
import json, os, sys
stage, partner, sizes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
files = {"/usr/bin/partner": partner}
for page in sorted(os.listdir(f"{stage}/man")):
    files[f"/usr/share/man/man1/{page}"] = f"{stage}/man/{page}"
files["/usr/share/bash-completion/completions/partner"] = f"{stage}/completions/partner.bash"
files["/usr/share/zsh/vendor-completions/_partner"] = f"{stage}/completions/_partner"
files["/usr/share/fish/vendor_completions.d/partner.fish"] = f"{stage}/completions/partner.fish"
icons = [f"{os.getcwd()}/icons/png/{s}x{s}.png" for s in sizes]
print(json.dumps({"bundle": {"icon": icons,
                             "linux": {"deb": {"files": files}, "rpm": {"files": files}}}}, indent=2))
PY

# The version asked for, and the updater's signatures when a signing key is given.
python3 - "$out/tauri.package.json" "$version_override" "${TAURI_SIGNING_PRIVATE_KEY:+sign}" <<'PY'
import json, sys
path, version, sign = sys.argv[1], sys.argv[2], sys.argv[3] == "sign"
config = json.load(open(path))
if version:
    config["version"] = version
if sign:
    config["bundle"]["createUpdaterArtifacts"] = True
json.dump(config, open(path, "w"), indent=2)
PY

rm -rf "$target_dir/$profile/bundle"
echo "package: building the app ($profile; a first release build takes several minutes)"
tauri=$root/ui/node_modules/.bin/tauri
(cd src-tauri && "$tauri" build "${tauri_args[@]}" --ci --no-bundle --config "$out/tauri.package.json" "${tauri_cargo_args[@]}")
[ "$profile" = release ] && split_debug_info "$target_dir/release/partner-console"
echo "package: bundling"
(cd src-tauri && "$tauri" bundle "${tauri_args[@]}" --ci --bundles "$bundles" --config "$out/tauri.package.json")

# The bundler names the files after the product's display name; give them the package's name,
# as apt and dnf users expect to find them.
version=${version_override:-$(python3 -c 'import tomllib; print(tomllib.load(open("Cargo.toml","rb"))["workspace"]["package"]["version"])')}
rm -f "$out"/*.deb "$out"/*.rpm "$out"/*.sig
cp "$target_dir"/"$profile"/bundle/deb/*_"$version"_amd64.deb "$out/partner-console_${version}_amd64.deb"
rpm=false
case ",$bundles," in *,rpm,*) rpm=true ;; esac
if $rpm; then
  cp "$target_dir"/"$profile"/bundle/rpm/*-"$version"-1.x86_64.rpm "$out/partner-console-${version}-1.x86_64.rpm"
fi
if [ -n "${TAURI_SIGNING_PRIVATE_KEY:-}" ]; then
  cp "$target_dir"/"$profile"/bundle/deb/*_"$version"_amd64.deb.sig "$out/partner-console_${version}_amd64.deb.sig"
  if $rpm; then
    cp "$target_dir"/"$profile"/bundle/rpm/*-"$version"-1.x86_64.rpm.sig "$out/partner-console-${version}-1.x86_64.rpm.sig"
  fi
fi
echo "package: done"
ls -1 "$out"/*.deb "$out"/*.rpm 2>/dev/null || true
# What a user downloads and installs, and the debug information kept beside it (a test run,
# which packages the debug build, prints its own sizes).
if [ "$profile" = release ]; then
  du -h "$partner_bin" "$target_dir/release/partner-console" "$out"/*.deb "$out"/*.rpm "$out"/debug/*.debug |
    sed "s|$root/||; s|^|package: size |"
fi
