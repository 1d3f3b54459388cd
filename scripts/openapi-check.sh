#!/usr/bin/env bash
# Does /openapi.json say what the sandbox enforces? A property-based run generated from the
# document (Schemathesis) against the real sandbox over HTTP on 127.0.0.1:
#   - no 5xx, every status, content type, header and body as the document says;
#   - schema-valid requests are accepted, unless refused for a rule the document states in words
#     (see scripts/openapi-check-hooks.py), and schema-invalid ones are refused;
#   - an operation whose valid requests are all refused fails the run (validation_mismatch).
# It installs Schemathesis from PyPI into target/openapi-check/venv (pinned; reused when it is
# there), builds `partner`, starts `partner sandbox --demo` on a free port, and exits non-zero
# on any failure. Nothing but PyPI is reached outside this machine.
#
# Usage: scripts/openapi-check.sh [--max-examples N] [extra schemathesis run options...]
#        scripts/openapi-check.sh --install-only   (only the pinned Schemathesis, then exit:
#                                                    scripts/test.sh runs it while Rust compiles)
#   N (default 200) bounds the generated cases per operation and phase; the default run takes
#   about a minute and a half on 2 cores once built. Runs are deterministic: the same cases every time.
#
# Credentials: the sandbox makes its own demo client and prints it on its stdout, which this
# script reads through a pipe: the secret is in no file and on no command line. Schemathesis gets
# it in its environment and fetches bearer tokens itself from POST /oauth2/v1/token (config in
# scripts/openapi-check.toml), fetching a new one whenever a call answers 401: the run revokes
# tokens and moves the sandbox clock years ahead, and either would otherwise end every later
# authenticated call. The token endpoints get the client as HTTP Basic.
#
# /sandbox/v1/latency and /sandbox/v1/faults are tested in a second, short run after the main
# one: a generated latency of up to a minute would otherwise slow every partner API call that
# follows it, and a generated fault would answer them with its 5xx or drop them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

SCHEMATHESIS_VERSION=4.32.5
max_examples=200
install_only=false
if [ "${1:-}" = "--install-only" ]; then
  install_only=true
elif [ "${1:-}" = "--max-examples" ]; then
  max_examples=$2
  shift 2
fi

# Made at target/'s resolved path: the venv's scripts name its interpreter by absolute path, and
# target/ may be a link to a folder every clone shares (scripts/test.sh).
mkdir -p "${CARGO_TARGET_DIR:-$root/target}/openapi-check"
work=$(cd -P "${CARGO_TARGET_DIR:-$root/target}/openapi-check" && pwd)
venv=$work/venv

echo "== schemathesis $SCHEMATHESIS_VERSION"
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -qx "schemathesis, version $SCHEMATHESIS_VERSION"; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/pip" install --quiet "schemathesis==$SCHEMATHESIS_VERSION"
fi
if $install_only; then
  exit 0
fi

echo "== build partner"
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
# The workspace's binaries with the features `cargo test --workspace` unifies (see
# tests/e2e/run.sh): nothing to compile after the tests, where `-p partner-cli` would rebuild.
cargo build --workspace --bins --examples --locked --quiet
partner=${CARGO_TARGET_DIR:-$root/target}/debug/partner

echo "== start the sandbox"
log=$work/sandbox.log
exec {sandbox_out}< <(exec "$partner" sandbox --addr 127.0.0.1:0 --demo 2>"$log")
sandbox_pid=$!
trap 'kill "$sandbox_pid" 2>/dev/null || true; wait "$sandbox_pid" 2>/dev/null || true' EXIT

read_line() {
  local line
  if ! IFS= read -r -t 60 line <&"$sandbox_out"; then
    echo "the sandbox did not start; its log:" >&2
    cat "$log" >&2
    exit 1
  fi
  printf '%s' "$line"
}
listening=$(read_line)
client_id_line=$(read_line)
client_secret_line=$(read_line)
base_url=${listening#listening on }
export PARTNER_CLIENT_ID=${client_id_line#client id: }
export PARTNER_CLIENT_SECRET=${client_secret_line#client secret: }
case "$base_url" in
  http://127.0.0.1:*) ;;
  *) echo "unexpected first line from the sandbox: $listening" >&2; exit 1 ;;
esac
echo "sandbox at $base_url (log: $log)"

# The client works: one token over HTTP before the run (credentials on curl's stdin, not argv).
status=$(printf 'user = "%s:%s"\n' "$PARTNER_CLIENT_ID" "$PARTNER_CLIENT_SECRET" |
  curl --silent --output /dev/null --write-out '%{http_code}' --config - \
    --data-urlencode grant_type=client_credentials --data-urlencode 'scope=pc pcapi' \
    "$base_url/oauth2/v1/token")
if [ "$status" != 201 ]; then
  echo "token issuance answered $status, not 201" >&2
  exit 1
fi

st() {
  # Run from the work folder so nothing Schemathesis leaves behind lands in the repository.
  (cd "$work" && SCHEMATHESIS_HOOKS="$root/scripts/openapi-check-hooks.py" \
    "$venv/bin/schemathesis" --no-color --config-file "$root/scripts/openapi-check.toml" \
    run "$base_url/openapi.json" --checks all --exclude-checks positive_data_acceptance "$@")
}

started=$SECONDS
echo "== schemathesis: every operation but /sandbox/v1/latency and /sandbox/v1/faults ($max_examples examples each)"
st --max-examples "$max_examples" --exclude-path /sandbox/v1/latency --exclude-path /sandbox/v1/faults "$@"
echo "== schemathesis: /sandbox/v1/latency and /sandbox/v1/faults"
st --max-examples 20 --include-path /sandbox/v1/latency --include-path /sandbox/v1/faults --phases examples,coverage,fuzzing "$@"
echo "openapi-check: the sandbox and its document agree ($((SECONDS - started)) s of testing)"
