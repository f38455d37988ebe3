#!/bin/sh
# list_plugins.sh BUILD - heron-search --list-plugins and the not-found
# message, on the build tree's heron-search.
#
# A scratch folder in $HERON_PLUGIN_PATH (named twice) holds a copy of
# random.so, a text file and a plugin with the wrong ABI version.  The
# listing must show the folder once, then the build tree's folder; the copy
# as a strategy, the build tree's random.so as shadowed by it, the two
# broken files as not plugins with the loader's reason; and exit 0.  A name
# found nowhere must be reported with the folders in search order.
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "$*" >&2
  [ ! -f "$tmp/out.txt" ] || cat "$tmp/out.txt" >&2
  exit 1
}
expect() {
  grep -qF -- "$1" "$tmp/out.txt" || fail "--list-plugins lacks: $1"
}

cp "$build/plugins/random.so" "$tmp/random.so"
echo "not a plugin" >"$tmp/notes.txt"
cp "$build/tests/plugin/plugins/strat_bad_abi.so" "$tmp/strat_bad_abi.so"
HERON_PLUGIN_PATH="$tmp:$tmp/" "$build/bin/heron-search" --list-plugins \
  >"$tmp/out.txt" || fail "--list-plugins exited with status $?"

expect "Plugin folders, in search order: \$HERON_PLUGIN_PATH, then the build tree's folder"
expect "\$HERON_PLUGIN_PATH: $tmp"
expect "(the same folder as $tmp, listed above)"
expect "the build tree's folder: $build/plugins"
expect "file: $tmp/random.so"
expect "not a plugin: $tmp/notes.txt"
expect "not a plugin: $tmp/strat_bad_abi.so"
expect "ABI version"
expect "model xgb - "
# The build tree's random.so, then the line that says what hides it.
awk -v f="    file: $build/plugins/random.so" \
  -v s="    shadowed by $tmp/random.so (found first)" '
  $0 == f { want = 1; next }
  want && $0 == s { found = 1 }
  { want = 0 }
  END { exit !found }' "$tmp/out.txt" ||
  fail "the build tree's random.so is not marked shadowed by $tmp/random.so"

# Not found: the folders in search order, then where they came from.
if HERON_PLUGIN_PATH="$tmp" "$build/bin/heron-search" --help-plugin nosuch \
  2>"$tmp/out.txt"; then
  fail "--help-plugin accepted an unknown name"
fi
# heron_error holds 160 characters and keeps a longer message's head and
# tail: the folders come last, so on a long build path they stay whole.
expect "plugin 'nosuch' not found"
expect "$tmp, $build/plugins"
echo "--list-plugins: folders in order, shadowing and broken files shown"
