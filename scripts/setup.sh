#!/usr/bin/env bash
# Installs what building, running, packaging and testing Partner Console needs on a fresh Debian or
# Ubuntu machine (on macOS, Windows or another Linux it says what to install there, see
# scripts/setup-other-os.sh): Tauri's system libraries, a virtual display, a Secret Service keychain, the WebKit
# WebDriver, the UI's npm packages, the workspace's crates and tauri-driver. Safe to run again:
# it skips what is present.
#
# The steps that need nothing from each other run side by side: on a fresh machine apt waits on
# the network and dpkg, `cargo install tauri-driver` on the CPU, `npm ci` and `cargo fetch` on
# the network, so one after another they took the sum of the four.
set -euo pipefail
cd "$(dirname "$0")/.."

# On macOS, Windows (Git Bash) or a Linux without apt: what to install there, then stop.
if ! command -v apt-get >/dev/null || [ "$(uname -s)" != Linux ]; then
  # shellcheck source=scripts/setup-other-os.sh
  . scripts/setup-other-os.sh
  other_os_setup
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# The steps started in the background: each one's name, process and log. `finish` waits for all
# of them and fails, with the log of each that failed, if any did.
background_names=()
background_pids=()
background_logs=()
logs_dir=$(mktemp -d)
trap 'rm -rf "$logs_dir"' EXIT
in_background() {
  local name=$1
  shift
  local log
  log="$logs_dir/${#background_names[@]}.log"
  echo "setup: $name (in the background)"
  "$@" >"$log" 2>&1 &
  background_names+=("$name")
  background_pids+=("$!")
  background_logs+=("$log")
}
finish() {
  local failed=0 i
  for i in "${!background_pids[@]}"; do
    if ! wait "${background_pids[$i]}"; then
      echo "setup: ${background_names[$i]} FAILED:" >&2
      tail -40 "${background_logs[$i]}" >&2
      failed=1
    fi
  done
  return $failed
}

install_npm_packages() {
  if [ -f ui/package.json ]; then
    if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
      in_background "installing the UI's npm packages" \
        bash -c 'cd ui && npm ci --no-audit --no-fund --loglevel=error'
    fi
  fi
}

rust_steps_started=false
start_rust_steps() {
  $rust_steps_started && return 0
  rust_steps_started=true
  # The workspace's crates, so the first build does not download them one after another.
  in_background "downloading the workspace's crates" cargo fetch --locked --quiet
  # End-to-end tests drive the real app through tauri-driver (which starts WebKitWebDriver).
  if ! command -v tauri-driver >/dev/null && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
    in_background "installing tauri-driver" cargo install tauri-driver --locked --quiet
  fi
}

# Node and npm may come from elsewhere than Debian (as on the project's machines): then they are
# kept, and the npm packages come down while apt works.
node_present=false
if command -v node >/dev/null && command -v npm >/dev/null; then
  node_present=true
  install_npm_packages
fi
# The project's toolchain is rustup's (with clippy and rustfmt); Debian's `cargo-web`, installed
# below for the Windows build, is another cargo in /usr/bin and must not be taken for it.
# shellcheck disable=SC1091
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
command -v rustup >/dev/null && start_rust_steps

apt_packages=(
  libwebkit2gtk-4.1-dev build-essential pkg-config file libxdo-dev libssl-dev
  libayatana-appindicator3-dev librsvg2-dev
  xvfb xauth x11-utils imagemagick webkit2gtk-driver
  dbus-x11 gnome-keyring libsecret-tools desktop-file-utils rpm man-db
  nodejs npm curl
  # The Windows build checked here (scripts/build-windows.sh, tests/windows/run.sh): Debian's own
  # Rust builds the target's standard library from source (rustup cannot download targets here),
  # MinGW links, Wine runs the programs; clang type-checks the macOS crates' C (ring); makensis
  # builds the CLI's Windows installer (scripts/build-cli-installer.sh).
  rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 wine wine64 clang rsync nsis
  # The release check (tests/release/run.sh) checks the Homebrew cask's Ruby syntax.
  ruby
  # The team server's tests start a throwaway PostgreSQL (partner-testkit/src/postgres.rs) with
  # /usr/lib/postgresql/*/bin/initdb and pg_ctl: Debian's `postgresql` brings the current
  # postgresql-NN, whatever other initdb is on PATH. The system's own cluster and service are
  # not used.
  postgresql
)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if $node_present; then
  filtered=()
  for pkg in "${missing[@]}"; do
    case "$pkg" in nodejs|npm) ;; *) filtered+=("$pkg") ;; esac
  done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi
# The OpenAPI check installs Schemathesis into a virtual environment: Debian splits venv off.
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then missing+=(python3-venv); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${missing[*]}"
  if ! { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
    finish || true
    echo "setup: installing the system packages failed" >&2
    exit 1
  fi
fi

if ! command -v rustup >/dev/null; then
  echo "setup: installing the Rust toolchain with rustup"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
rustup component list --installed 2>/dev/null | grep -q clippy || rustup component add clippy rustfmt
start_rust_steps
$node_present || install_npm_packages

finish
