#!/usr/bin/env bash
# Installs the SDK to a temporary prefix, builds sdk/examples out of tree
# against it (find_package(DranetSDK) + dranet_add_plugin), and checks that
# the host loads both plugins and that they pass the conformance suite.
#   sdk_examples_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/dranet/plugin.h"
test -f "$work/prefix/lib/cmake/DranetSDK/DranetSDKConfig.cmake" || \
  test -n "$(find "$work/prefix" -name DranetSDKConfig.cmake)"
mkdir -p "$work/plugins"
for example in hello-c linkspeed-cxx profile-files; do
  cmake -S "$src/sdk/examples/$example" -B "$work/build-$example" \
        -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_C_FLAGS="-Wall -Werror" --no-warn-unused-cli \
        -DCMAKE_CXX_FLAGS="-Wall -Werror" >/dev/null
  cmake --build "$work/build-$example" >/dev/null
  cp "$work/build-$example/dranet-plugin-$example.so" "$work/plugins/"
  "$build/tests/bin/plugin_conformance" --plugin "$work/plugins/dranet-plugin-$example.so" >/dev/null
done
chmod 755 "$work" "$work/plugins"
out=$("$build/bin/dranetctl" plugins --plugin-dir "$work/plugins" --allow-non-root-plugin-dir)
echo "$out"
grep -Eq '^hello-c +1\.0\.0 +1\.2 +loaded +attributes ' <<<"$out"
grep -Eq '^linkspeed-cxx +1\.0\.0 +1\.2 +loaded +attributes injection ' <<<"$out"
grep -Eq '^profile-files +1\.0\.0 +1\.2 +loaded +profiles ' <<<"$out"
echo "sdk examples: built out of tree, loaded, conformant"
