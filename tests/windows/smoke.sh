#!/usr/bin/env bash
# A smoke run of the `partner` CLI as a Windows user would use it, under Wine by
# tests/windows/run.sh (`tests/windows/smoke.sh wine partner.exe`); any other command line
# runs the same steps (`tests/windows/smoke.sh target/debug/partner` on Linux):
# the sandbox, a token, listings, the client secret kept in the OS's credential store and used
# from there, the listener with a signed and a forged notification, killed (kill -9) and
# exported (the journal's recovery), and a demo scenario played to its end.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: tests/windows/smoke.sh COMMAND... (the partner program)" >&2; exit 2; }
partner_command=("$@")
under_wine=false
case ${partner_command[0]} in wine*) under_wine=true ;; esac

scratch=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  if $under_wine; then wineserver -k 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT
# A path the program understands: Windows programs under Wine see the Linux root as Z:.
native_path() {
  if $under_wine; then printf 'Z:%s' "${1//\//\\}"; else printf '%s' "$1"; fi
}
# The CLI's data folder (%LOCALAPPDATA%\partner-console otherwise).
PARTNER_DATA_DIR=$(native_path "$scratch/data")
export PARTNER_DATA_DIR
partner() { "${partner_command[@]}" "$@"; }
fail() { echo "smoke: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Waits until FILE has a line starting with PREFIX (at most 60 s); prints the rest of that line.
wait_for_line() {
  local file=$1 prefix=$2 i
  for i in $(seq 600); do
    if grep -q "^$prefix" "$file" 2>/dev/null; then
      grep -m1 "^$prefix" "$file" | sed "s/^$prefix//" | tr -d '\r'
      return 0
    fi
    sleep 0.1
  done
  cat "$file" >&2
  fail "no line starting with '$prefix' in $file"
}

sandbox_port=$(free_port)
partner sandbox --demo --allow-http-callbacks --addr "127.0.0.1:$sandbox_port" \
  >"$scratch/sandbox.out" 2>"$scratch/sandbox.err" &
pids+=($!)
wait_for_line "$scratch/sandbox.out" "listening on " >/dev/null
PARTNER_CLIENT_ID=$(wait_for_line "$scratch/sandbox.out" "client id: ")
client_secret=$(wait_for_line "$scratch/sandbox.out" "client secret: ")
export PARTNER_BASE_URL="http://127.0.0.1:$sandbox_port" PARTNER_CLIENT_ID

echo "-- a token, listings"
PARTNER_CLIENT_SECRET=$client_secret partner token issue --output json >"$scratch/token.json"
grep -q '"accessToken"' "$scratch/token.json" || fail "no token: $(cat "$scratch/token.json")"
PARTNER_CLIENT_SECRET=$client_secret partner products list --limit 3 --sort -created,status \
  --output json >"$scratch/products.json"
product=$(python3 -c 'import json,sys; rows=json.load(open(sys.argv[1])); print(rows[0]["id"])' "$scratch/products.json")
PARTNER_CLIENT_SECRET=$client_secret partner transactions list --limit 5 --start 2 \
  --sort=status,-created --output json >"$scratch/transactions.json"
python3 -c 'import json,sys; rows=json.load(open(sys.argv[1])); assert len(rows)==5, rows' "$scratch/transactions.json"

echo "-- the client secret in the Windows credential store"
printf '%s' "$client_secret" | partner token login
partner token issue --output json >"$scratch/token2.json"
grep -q '"accessToken"' "$scratch/token2.json" || fail "no token from the stored secret"

echo "-- the listener: a signed and a forged notification, kill -9, export"
listen_port=$(free_port)
key='Abcdefghijklmnopqrstuvwxyz0123!@'
db=$(native_path "$scratch/captures.sqlite3")
partner listen --addr "127.0.0.1:$listen_port" --db "$db" --key "sub-win=$key" \
  >"$scratch/listen.out" 2>"$scratch/listen.err" &
listener=$!
pids+=($listener)
wait_for_line "$scratch/listen.out" "listening on " >/dev/null
send() { # KEY EVENT_ID -> HTTP status
  python3 - "$listen_port" "$1" "$2" <<'PY'
import base64, hashlib, hmac, sys, urllib.request
port, key, event = sys.argv[1], sys.argv[2], sys.argv[3]
body = ('{"eventId":"%s","eventTime":"2024-05-01T10:00:00Z","eventType":"created","meta":'
        '{"instanceId":"acme","resourceId":"tx-1","resourceType":"urn:svc:partner:transaction",'
        '"resourceRef":"https://h/partner/v2/transactions/tx-1"}}' % event).encode()
signature = base64.b64encode(hmac.new(key.encode(), body, hashlib.sha256).digest()).decode()
request = urllib.request.Request("http://127.0.0.1:%s/webhooks" % port, data=body, method="POST",
    headers={"Content-Type": "application/json", "Svc-SubscriptionId": "sub-win",
             "Svc-Signature": signature})
try:
    print(urllib.request.urlopen(request, timeout=30).status)
except urllib.error.HTTPError as error:
    print(error.code)
PY
}
[ "$(send "$key" ev-signed)" = 200 ] || fail "the signed notification was not acknowledged"
status=$(send 'Zyxwvutsrqponmlkjihgfedcba9876#$' ev-forged)
[ "${status:0:1}" = 4 ] || fail "the forged notification was answered $status"
kill -9 "$listener"
wait "$listener" 2>/dev/null || true
partner listen export --db "$db" >"$scratch/export.jsonl"
python3 - "$scratch/export.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
verdicts = {row["eventId"]: row["verdict"] for row in rows if row.get("eventId")}
assert verdicts == {"ev-signed": "valid", "ev-forged": "invalid-signature"}, verdicts
PY

echo "-- a scenario played to its end"
PARTNER_CLIENT_SECRET=$client_secret partner demo run key-rotation >"$scratch/demo.out" 2>&1 ||
  { cat "$scratch/demo.out"; fail "the key-rotation scenario failed"; }

echo "smoke: passed (${partner_command[*]})"
