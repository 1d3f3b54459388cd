#!/usr/bin/env bash
# `scripts/release.sh updater-key`: a manifest signed with the key the apps carry passes; one
# signed with another key is refused with both keys' ids named, before anything is published.
# Keys are made for the run (`tauri signer generate`, in a temporary folder); nothing is
# signed with, or needs, the release's own key.
set -euo pipefail
cd "$(dirname "$0")/../.."
tauri=ui/node_modules/.bin/tauri
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "updater key test: FAILED: $*" >&2; exit 1; }

for name in release other; do
  "$tauri" signer generate --ci -p pw -w "$work/$name.key" >/dev/null 2>&1 || fail "tauri signer generate"
done
printf 'a release\n' >"$work/bundle.tar.gz"
sign() {
  rm -f "$work/bundle.tar.gz.sig"
  TAURI_SIGNING_PRIVATE_KEY=$(cat "$work/$1.key") TAURI_SIGNING_PRIVATE_KEY_PASSWORD=pw \
    "$tauri" signer sign "$work/bundle.tar.gz" >/dev/null 2>&1 || fail "tauri signer sign"
  cat "$work/bundle.tar.gz.sig"
}
release_sig=$(sign release)
other_sig=$(sign other)
# The apps' configuration with the run's release key as its updater key.
python3 - "$work" "$(cat "$work/release.key.pub")" "$release_sig" "$other_sig" <<'PY'
import json, sys
work, pubkey, good, other = sys.argv[1:5]
config = json.load(open("src-tauri/tauri.conf.json"))
config["plugins"]["updater"]["pubkey"] = pubkey
json.dump(config, open(f"{work}/tauri.conf.json", "w"))
entry = lambda sig: {"url": "https://example.invalid/bundle.tar.gz", "signature": sig}
json.dump({"version": "9.9.9", "platforms": {"linux-x86_64": entry(good), "windows-x86_64": entry(good)}},
          open(f"{work}/good.json", "w"))
json.dump({"version": "9.9.9", "platforms": {"linux-x86_64": entry(good), "windows-x86_64": entry(other)}},
          open(f"{work}/mixed.json", "w"))
PY
key_id() { base64 -d "$1" | sed -n 2p | base64 -d | tail -c +3 | head -c 8 | od -An -tx1 | tr -d ' \n' |
  python3 -c 'import sys; print(bytes.fromhex(sys.stdin.read())[::-1].hex().upper())'; }
release_id=$(key_id "$work/release.key.pub")
other_id=$(key_id "$work/other.key.pub")

said=$(scripts/release.sh updater-key "$work/good.json" "$work/tauri.conf.json" 2>&1) || fail "the right key refused: $said"
grep -q "$release_id" <<<"$said" || fail "no key id in: $said"
if said=$(scripts/release.sh updater-key "$work/mixed.json" "$work/tauri.conf.json" 2>&1); then
  fail "a manifest with another key's signature passed: $said"
fi
grep -q "windows-x86_64 is signed with key $other_id; the apps trust $release_id" <<<"$said" || fail "the refusal says: $said"
grep -q "linux-x86_64 is signed" <<<"$said" && fail "the right signature was named: $said"
# The repository's own configuration trusts neither of the run's keys.
if scripts/release.sh updater-key "$work/good.json" >/dev/null 2>&1; then
  fail "the repository's key accepted a signature of a key made for this run"
fi
echo "updater key test: the apps' key passes ($release_id), another key is refused ($other_id), with both named"
