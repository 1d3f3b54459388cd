#!/usr/bin/env bash
# The `partner` command's tests and the unit tests of the crates it is made of, on any OS: what
# CI runs on its macOS and Windows runners (.github/workflows/ci.yml), where the command really
# runs (scripts/test.sh covers Linux, and Windows only under Wine). On Windows, in Git Bash.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck disable=SC1091
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
export CARGO_INCREMENTAL=0
cargo test --locked -p partner-cli
cargo test --locked --lib -p partner-api -p partner-client -p partner-conformance \
  -p partner-listener -p partner-local -p partner-index -p partner-sandbox
