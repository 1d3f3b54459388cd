#!/usr/bin/env bash
# Installs what building, running, packaging and testing Partner Console needs on a fresh Debian or Ubuntu
# machine: Tauri's system libraries, a virtual display, a Secret Service keychain, the WebKit
# WebDriver, the UI's npm packages and tauri-driver. Safe to run again: it skips what is present.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

apt_packages=(
  libwebkit2gtk-4.1-dev build-essential pkg-config file libxdo-dev libssl-dev
  libayatana-appindicator3-dev librsvg2-dev
  xvfb xauth x11-utils imagemagick webkit2gtk-driver
  dbus-x11 gnome-keyring libsecret-tools desktop-file-utils rpm man-db
  nodejs npm curl
)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# Node and npm may come from elsewhere than Debian (as on the project's machines): then keep them.
if command -v node >/dev/null && command -v npm >/dev/null; then
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
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
  echo "setup: installing the Rust toolchain with rustup"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
rustup component list --installed 2>/dev/null | grep -q clippy || rustup component add clippy rustfmt

if [ -f ui/package.json ]; then
  if [ ! -d ui/node_modules ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then
    echo "setup: installing the UI's npm packages"
    (cd ui && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi

# End-to-end tests drive the real app through tauri-driver (which starts WebKitWebDriver).
if ! command -v tauri-driver >/dev/null && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
  echo "setup: installing tauri-driver"
  cargo install tauri-driver --locked --quiet
fi
