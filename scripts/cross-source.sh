# Sourced by scripts/build-windows.sh, tests/windows/run.sh and scripts/check-macos.sh: copies the
# sources into one fixed folder outside the clone and builds them there.
#
# Why: cargo rebuilds a workspace crate whose path or files' times changed, and every CI run is a
# fresh clone in a folder of its own, whose files are all new. Built from the clone, every run
# recompiled all ten workspace crates (and their tests, and the app) for Windows and macOS:
# minutes each. Synced by content (`rsync --checksum`: an unchanged file keeps the time it had in
# the copy, a changed one gets a new time), the copy changes where the sources did, and a later
# run on the same machine rebuilds only the crates whose files did.
cross_source=${PARTNER_CROSS_SOURCE_DIR:-/var/tmp/partner-console-cross-source}
sync_cross_source() {
  command -v rsync >/dev/null || { echo "cross-build: rsync is missing: run scripts/setup.sh" >&2; exit 1; }
  mkdir -p "$cross_source"
  rsync --recursive --checksum --delete --links \
    --exclude=/target --exclude=/.git --exclude=node_modules --exclude=/docs \
    --include=/tests/ --include=/tests/macos/ --include=/tests/macos/** --exclude=/tests/** \
    ./ "$cross_source/"
}
