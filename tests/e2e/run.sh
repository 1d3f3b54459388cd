#!/usr/bin/env bash
# End-to-end tests of the real app: builds the UI and the app (UI embedded), then under a private
# session bus (with an unlocked gnome-keyring) and Xvfb starts tauri-driver, which starts the app
# through WebKitWebDriver, and runs tests/e2e/specs.mjs. Screenshots go to target/e2e-screenshots/
# (or $PARTNER_SCREENSHOTS), never into the tracked docs/screenshots/: a test run leaves the working
# tree as it found it. scripts/refresh-screenshots.sh runs this and copies them into docs/.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
export PATH="$HOME/.cargo/bin:$PATH"

echo "e2e: building the UI and the app"
(cd ui && npm run --silent build >/dev/null)
# Every binary of the workspace and its examples (the second implementation of the service,
# other_service, is one), in one build whose features are unified as `cargo test --workspace`
# unifies them: after the tests this only links the app, where `-p` builds would recompile a
# hundred crates with other features. The app gets its test hooks (`test-hooks`: the dialogs
# answered from $PARTNER_TEST_DIALOG_DIR, below), a feature of the app crate alone, so no other
# crate is built again for it; the packages never turn it on.
cargo build --workspace --bins --examples --locked --quiet --features partner-console/test-hooks
target_dir=${CARGO_TARGET_DIR:-$root/target}
export PARTNER_APP_BINARY="$target_dir/debug/partner-console"
# The restart specs run `partner` beside the app: a sandbox with --data, products subscribe,
# listen export, all on the app's data folder and keyring.
export PARTNER_CLI_BINARY="$target_dir/debug/partner"
export PARTNER_OTHER_SERVICE_BINARY="$target_dir/debug/examples/other_service"
# The team workspace's specs start a throwaway PostgreSQL (partner-testkit's example) and
# `partner server` on it.
export PARTNER_PG_BINARY="$target_dir/debug/examples/throwaway_postgres"
[ -x "$PARTNER_APP_BINARY" ] || { echo "e2e: no app binary at $PARTNER_APP_BINARY" >&2; exit 1; }
command -v tauri-driver >/dev/null || { echo "e2e: tauri-driver is missing (scripts/setup.sh installs it)" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export XDG_DATA_HOME=$scratch/data XDG_CACHE_HOME=$scratch/cache XDG_CONFIG_HOME=$scratch/config
export XDG_RUNTIME_DIR=$scratch/run
mkdir -p "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
export PARTNER_DATA_DIR=$scratch/app-data
export PARTNER_E2E_SCRATCH=$scratch
export PARTNER_E2E_EXPORTS=$scratch/exports
# The app's save and open dialogs answer from this folder instead of showing a window
# (WebDriver cannot reach a GTK dialog): saves land under the suggested name, opens read it.
# Only an app built with the `test-hooks` feature (as above) reads it.
export PARTNER_TEST_DIALOG_DIR=$PARTNER_E2E_EXPORTS
if [ -z "${PARTNER_SCREENSHOTS:-}" ]; then
  export PARTNER_SCREENSHOTS="$root/target/e2e-screenshots"
  # This run's shots only (refresh-screenshots.sh copies what is here).
  rm -f "$PARTNER_SCREENSHOTS"/*.png
fi
mkdir -p "$PARTNER_SCREENSHOTS" "$PARTNER_E2E_EXPORTS"

dbus-run-session -- xvfb-run -a -s "-screen 0 1280x800x24" bash -c '
  set -euo pipefail
  echo -n "partner-console-e2e" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  tauri-driver --port 4444 >"$XDG_RUNTIME_DIR/tauri-driver.log" 2>&1 &
  driver=$!
  trap "kill $driver 2>/dev/null || true" EXIT
  for _ in $(seq 1 50); do
    (echo >/dev/tcp/127.0.0.1/4444) 2>/dev/null && break
    sleep 0.2
  done
  # The app writes its log to the driver'"'"'s output: shown when a spec fails.
  node tests/e2e/specs.mjs || {
    echo "e2e: the last lines the app and the driver logged:"
    tail -n 120 "$XDG_RUNTIME_DIR/tauri-driver.log" | sed "s/\x1b\[[0-9;]*m//g"
    exit 1
  }
'
