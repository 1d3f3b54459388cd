#!/usr/bin/env bash
# Refreshes the README's screenshots: runs the end-to-end tests of the real app (which photograph
# every screen into target/e2e-screenshots/) and copies the shots into docs/screenshots/.
#
# A deliberate step, apart from scripts/test.sh: a test run never writes into the tracked tree,
# so the screenshots change only when someone asks for it and commits them on their own. Runs
# nothing else: on a fresh machine run scripts/setup.sh first (scripts/test.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
shots=$root/target/e2e-screenshots
docs=$root/docs/screenshots

# Fails (and copies nothing) when a spec fails: its failure-*.png shots stay in $shots.
PARTNER_SCREENSHOTS= tests/e2e/run.sh

mkdir -p "$docs"
copied=0
for png in "$shots"/*.png; do
  [ -e "$png" ] || continue
  name=$(basename "$png")
  case $name in failure-*) continue ;; esac
  cp "$png" "$docs/$name"
  copied=$((copied + 1))
done
echo "refresh-screenshots: copied $copied screenshots from target/e2e-screenshots/ into docs/screenshots/"

# Shots in docs/ the run did not make any more: left alone (the README may still show one), named.
for png in "$docs"/*.png; do
  [ -e "$png" ] || continue
  name=$(basename "$png")
  [ -e "$shots/$name" ] || echo "refresh-screenshots: docs/screenshots/$name was not made by this run (kept)"
done
git -C "$root" status --short -- docs/screenshots
