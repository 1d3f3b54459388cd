#!/usr/bin/env bash
# Sets up a fresh machine and runs the main job: the Partner Console desktop app on its embedded
# sandbox (demo data, a demo client signed in, the webhook listener on loopback). Extra arguments
# go to the app. Needs a display (a desktop session, or `xvfb-run` for a headless one).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"

echo "run: building the UI and the app (the first build takes several minutes)"
(cd ui && npm run --silent build >/dev/null)
cargo build -p partner-console --locked --quiet
target_dir=${CARGO_TARGET_DIR:-$(pwd)/target}
exec "$target_dir/debug/partner-console" "$@"
