#!/bin/sh
# out_of_tree.sh BUILD SOURCE CMAKE PKG_CONFIG - the plugin SDK end to end.
#
# Installs the build into a scratch prefix and then moves the prefix, so
# that neither the build tree's folders nor the prefix the files were
# installed to are the right ones for it.  From the moved prefix alone it
# then builds tests/plugin/oot/hill.c (a strategy) with pkg-config and
# tests/plugin/oot/ootmodel.c (a model) with the CMake package, copies both
# into the moved prefix's plugin folder and tunes a small GEMM with them BY
# NAME through the moved heron-search.  It also checks that --help-plugin
# and --list-plugins report files of the moved prefix, that heron-space
# finds the moved prefix's hardware descriptions, and that the installed
# skeleton project builds.  Fails if the install lacks a header, a symbol,
# a tool or a package file, or if anything reaches back into the build tree.
set -eu
build=$1
src=$2
cmake=${3:-cmake}
pkgconfig=${4:-pkg-config}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Only the moved prefix may supply plugins.
unset HERON_PLUGIN_PATH

fail() {
  echo "$*" >&2
  exit 1
}

"$cmake" --install "$build" --prefix "$tmp/prefix" >/dev/null
mv "$tmp/prefix" "$tmp/moved"
# libheron names its folders by their resolved path.
moved=$(cd "$tmp/moved" && pwd -P)
[ ! -e "$tmp/prefix" ] || fail "the install prefix is still there after mv"

# ---- a strategy built with pkg-config --------------------------------------
pc=$(find "$moved" -name heron.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || fail "the install has no pkgconfig/heron.pc"
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
# Only the moved include folder is on the path: no source-tree headers.
${CC:-cc} -std=c11 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
  -o "$tmp/hill.so" "$src/tests/plugin/oot/hill.c" \
  $("$pkgconfig" --cflags --libs heron) -lm
plugindir=$("$pkgconfig" --variable=plugindir heron)
[ -d "$plugindir" ] || fail "pkg-config's plugindir $plugindir is no folder"

# ---- a model built with find_package(heron) --------------------------------
"$cmake" -S "$src/tests/plugin/oot" -B "$tmp/ootmodel" \
  -DCMAKE_PREFIX_PATH="$moved" -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.txt" 2>&1 ||
  { cat "$tmp/cmake.txt" >&2; fail "find_package(heron) failed"; }
"$cmake" --build "$tmp/ootmodel" >>"$tmp/cmake.txt" 2>&1 ||
  { cat "$tmp/cmake.txt" >&2; fail "the CMake model project did not build"; }
cp "$tmp/hill.so" "$tmp/ootmodel/ootmodel.so" "$plugindir/"

# ---- both run by name from the moved prefix --------------------------------
"$moved/bin/heron-search" --op gemm --shape 48,48,48 \
  --strategy hill --model ootmodel --trials 6 --batch 3 --number 1 \
  --repeat 1 --min-repeat-ms 1 --quiet --log "$tmp/log.jsonl" >"$tmp/out.txt"
lines=$(wc -l <"$tmp/log.jsonl")
[ "$lines" -eq 6 ] || fail "expected 6 logged trials, found $lines"
grep -q '"strategy":"hill"' "$tmp/log.jsonl" ||
  fail "log does not name the out-of-tree strategy"
if grep -v -q '"status":"ok"' "$tmp/log.jsonl"; then
  grep -v '"status":"ok"' "$tmp/log.jsonl" >&2
  fail "a trial of the out-of-tree strategy failed"
fi

# ---- the shipped plugins and the listing point into the moved prefix -------
"$moved/bin/heron-search" --help-plugin random >"$tmp/help.txt"
grep -qF "file: $moved/lib/heron/plugins/random.so" "$tmp/help.txt" ||
  { cat "$tmp/help.txt" >&2; fail "--help-plugin random is not the moved one"; }
"$moved/bin/heron-search" --list-plugins >"$tmp/list.txt"
for p in "strategy hill" "model ootmodel" "strategy random"; do
  name=${p#* }
  # The plugin's line, then the file line right after it.
  awk -v p="  $p - " -v f="    file: $moved/lib/heron/plugins/$name.so" '
    index($0, p) == 1 { want = 1; next }
    want && $0 == f { found = 1 }
    { want = 0 }
    END { exit !found }' "$tmp/list.txt" ||
    { cat "$tmp/list.txt" >&2; fail "--list-plugins lacks $p in $moved"; }
done
if grep -qF "$build" "$tmp/list.txt"; then
  cat "$tmp/list.txt" >&2
  fail "--list-plugins of the moved install names the build tree"
fi

# ---- hardware descriptions from the moved data folder ----------------------
"$moved/bin/heron-space" --op gemm --shape 48,48,48 --hw cpu-avx2 --count \
  >/dev/null || fail "heron-space --hw cpu-avx2 failed from the moved prefix"
if "$moved/bin/heron-space" --op gemm --shape 48,48,48 --hw nosuch --count \
  2>"$tmp/hw.txt"; then
  fail "heron-space accepted --hw nosuch"
fi
grep -qF "$moved/share/heron/configs/hw" "$tmp/hw.txt" ||
  { cat "$tmp/hw.txt" >&2; fail "--hw was not looked up in the moved prefix"; }

# ---- the installed skeleton builds as a project of its own -----------------
"$cmake" -S "$moved/share/heron/skeleton" -B "$tmp/skeleton" \
  -DCMAKE_PREFIX_PATH="$moved" >"$tmp/skeleton.txt" 2>&1 &&
  "$cmake" --build "$tmp/skeleton" >>"$tmp/skeleton.txt" 2>&1 ||
  { cat "$tmp/skeleton.txt" >&2; fail "the installed skeleton did not build"; }
[ -f "$tmp/skeleton/skeleton.so" ] || fail "the skeleton project made no skeleton.so"

echo "out-of-tree plugins: 6 trials ok by name from a moved install"
