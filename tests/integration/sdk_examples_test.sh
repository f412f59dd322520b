#!/usr/bin/env bash
# What a plugin vendor does with the SDK alone: installs the `sdk` install
# component (nothing else) into a temporary prefix, builds sdk/examples out of
# tree against it (find_package(DranetSDK) + dranet_add_plugin), and runs the
# installed conformance kit on them: on its own sample snapshots, on a
# vendor's snapshot directory (--nodes), and after the prefix was moved (no
# build-tree path inside). Then the host loads the three plugins.
#   sdk_examples_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "sdk kit: $*" >&2; exit 1; }
cmake --install "$build" --component sdk --prefix "$work/installed" >/dev/null
# The component holds the SDK and the kit, and nothing of the daemon.
for f in include/dranet/plugin.h include/dranet/plugin.hpp lib/cmake/DranetSDK/DranetSDKConfig.cmake \
         lib/cmake/DranetSDK/DranetPlugin.cmake lib/cmake/DranetSDK/dranet-plugin.map bin/plugin_conformance \
         share/dranet/conformance/nodes/nd-gb300-v6/sys share/dranet/conformance/nodes/a4-highgpu-8g/sys \
         share/dranet/conformance/nodes/nd-mi300x-v5/sys; do
  [[ -e $work/installed/$f ]] || fail "$f not installed by --component sdk"
done
for f in bin/dranetd bin/dranetctl lib/dranet; do
  [[ ! -e $work/installed/$f ]] || fail "$f installed by --component sdk"
done
# The kit must not lean on the build tree: move the prefix before using it.
mv "$work/installed" "$work/prefix"
kit=$work/prefix/bin/plugin_conformance
mkdir -p "$work/plugins"
for example in hello-c linkspeed-cxx profile-files; do
  cmake -S "$src/sdk/examples/$example" -B "$work/build-$example" \
        -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_C_FLAGS="-Wall -Werror" --no-warn-unused-cli \
        -DCMAKE_CXX_FLAGS="-Wall -Werror" >/dev/null
  cmake --build "$work/build-$example" >/dev/null
  cp "$work/build-$example/dranet-plugin-$example.so" "$work/plugins/"
  out=$("$kit" --plugin "$work/plugins/dranet-plugin-$example.so" 2>&1) || fail "$example: $out"
  grep -q "on 3 node snapshots in $work/prefix/share/dranet/conformance/nodes: a4-highgpu-8g nd-gb300-v6 nd-mi300x-v5" \
    <<<"$out" || fail "$example: not on the installed snapshots: $out"
done
# A vendor's own snapshots.
mkdir -p "$work/my-nodes"
cp -a "$src/tests/nodes/nd-gb300-v6" "$work/my-nodes/my-node"
out=$("$kit" --plugin "$work/plugins/dranet-plugin-hello-c.so" --nodes "$work/my-nodes" 2>&1) || fail "--nodes: $out"
grep -q "on 1 node snapshots in $work/my-nodes: my-node" <<<"$out" || fail "--nodes not used: $out"
# A directory without snapshots is an error that says what to pass.
mkdir -p "$work/empty"
if out=$("$kit" --plugin "$work/plugins/dranet-plugin-hello-c.so" --nodes "$work/empty" 2>&1); then
  fail "an empty --nodes passed: $out"
fi
grep -q "no node snapshot in $work/empty" <<<"$out" || fail "$out"
chmod 755 "$work" "$work/plugins"
out=$("$build/bin/dranetctl" plugins --plugin-dir "$work/plugins" --allow-non-root-plugin-dir \
      --host-root "$src/tests/nodes/nd-gb300-v6")
echo "$out"
grep -Eq '^hello-c +1\.0\.0 +1\.4 +loaded +attributes ' <<<"$out"
grep -Eq '^linkspeed-cxx +1\.0\.0 +1\.4 +loaded +attributes injection ' <<<"$out"
grep -Eq '^profile-files +1\.0\.0 +1\.4 +loaded +profiles ' <<<"$out"
grep -Eq '^    annotate published hello-c\.dra\.net/greeting on [1-9][0-9]* device\(s\)$' <<<"$out"
# linkspeed-cxx reads the IB ports' rate on GB300's IB-only VFs (800 Gb/s).
grep -Eq '^    annotate published linkspeed-cxx\.dra\.net/speedMbps on 4 device\(s\)$' <<<"$out"
grep -Eq '^    reads sysfs class/infiniband/\*/ports/\*/rate$' <<<"$out"
echo "sdk kit: installed alone, examples built out of tree, conformant on the installed and a vendor's snapshots"
