# Sourced by scripts/setup.sh on a machine that is not Debian or Ubuntu: says what to install
# there (and installs what Homebrew or winget can), then exits. The project's own tests run on
# Debian (CI); on macOS and Windows the app and the CLI are built and run from source as below,
# and the release workflow builds and tests them on those systems' own runners (README, "Every
# desktop").
other_os_setup() {
  local os
  os=$(uname -s)
  case "$os" in
    Darwin)
      echo "setup: macOS. The app needs Xcode's command line tools, Rust and Node.js 20 or later."
      if ! xcode-select -p >/dev/null 2>&1; then
        echo "setup: installing Xcode's command line tools (a window asks you to confirm)"
        xcode-select --install || true
      fi
      if command -v brew >/dev/null; then
        command -v node >/dev/null || brew install node
        if ! command -v rustup >/dev/null && ! command -v cargo >/dev/null; then
          brew install rustup && rustup-init -y --profile minimal -c clippy,rustfmt
        fi
      else
        command -v node >/dev/null || echo "setup: install Node.js 20+ (https://nodejs.org, or Homebrew: brew install node)"
        command -v cargo >/dev/null || echo "setup: install Rust with rustup (https://rustup.rs)"
      fi
      ;;
    MINGW* | MSYS* | CYGWIN*)
      echo "setup: Windows. The app needs the Microsoft C++ Build Tools, Rust (MSVC), Node.js 20 or"
      echo "later and the WebView2 runtime (part of Windows 11; the installer brings it on Windows 10)."
      if command -v winget >/dev/null; then
        command -v node >/dev/null || winget install --id OpenJS.NodeJS.LTS -e
        command -v cargo >/dev/null || winget install --id Rustlang.Rustup -e
        echo "setup: if Rust's linker is missing, install the C++ build tools:"
        echo "  winget install --id Microsoft.VisualStudio.2022.BuildTools -e --override \"--wait --quiet --add Microsoft.VisualStudio.Workload.VCTools --includeRecommended\""
      else
        echo "setup: install Node.js 20+ (https://nodejs.org), Rust (https://rustup.rs) and the"
        echo "  Microsoft C++ Build Tools (https://visualstudio.microsoft.com/visual-cpp-build-tools/)"
      fi
      ;;
    Linux)
      echo "setup: this Linux has no apt-get. Install Tauri's libraries with your package manager,"
      echo "  e.g. on Fedora: sudo dnf install webkit2gtk4.1-devel openssl-devel libappindicator-gtk3-devel"
      echo "  librsvg2-devel gnome-keyring nodejs npm; Rust from https://rustup.rs."
      ;;
    *)
      echo "setup: $os is not a system Partner Console is built for (Linux, macOS, Windows)." >&2
      exit 1
      ;;
  esac
  if command -v npm >/dev/null && [ -f ui/package.json ] && [ ! -d ui/node_modules ]; then
    (cd ui && npm ci --no-audit --no-fund --loglevel=error)
  fi
  echo "setup: then build and start the app with: cd ui && npm run build && cd .. && cargo run -p partner-console"
  echo "setup: the partner command alone: cargo install --path src-tauri/crates/partner-cli"
  echo "setup: scripts/test.sh (every test, with a virtual display and a Secret Service) runs on Debian or Ubuntu only."
  exit 0
}
