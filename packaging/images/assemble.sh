#!/usr/bin/env bash
# Assembles the root filesystem contents of every dranet image into a directory,
# from a CMake build tree, without a container engine:
#
#   packaging/images/assemble.sh BUILD_DIR OUT_DIR
#
#   OUT_DIR/staging/              `cmake --install BUILD_DIR` with DESTDIR, prefix /usr
#   OUT_DIR/dranet/rootfs/        what Dockerfile.base adds to debian:bookworm-slim:
#                                 usr/bin/dranetd, usr/bin/dranetctl, opt/dranet/plugins/
#   OUT_DIR/dranet/packages.txt   the Debian packages apt installs on top (runtime-packages.txt)
#   OUT_DIR/dranet-plugins-NAME/rootfs/plugins/*.so   what Dockerfile.plugins adds to busybox
#
# Image names and contents come from images.txt. The real images are built by
# build-images.sh (docker buildx, linux/amd64 + linux/arm64); this script is what CI
# runs to check that the build tree yields every file those images need.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[[ $# -eq 2 ]] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)

rm -rf "$out/staging"
if ! DESTDIR="$out/staging" cmake --install "$build" --prefix /usr >"$out/install.log" 2>&1; then
  cat "$out/install.log" >&2
  echo "cmake --install $build failed: build the whole tree first (cmake --build $build)" >&2
  exit 1
fi
staging="$out/staging"
plugin_dir="$staging/usr/lib/dranet/plugins"

while read -r image contents; do
  [[ -z "$image" || "$image" == \#* ]] && continue
  rm -rf "${out:?}/$image"
  rootfs="$out/$image/rootfs"
  mkdir -p "$rootfs"
  if [[ "$contents" == base ]]; then
    install -D -m 0755 "$staging/usr/bin/dranetd" "$rootfs/usr/bin/dranetd"
    install -D -m 0755 "$staging/usr/bin/dranetctl" "$rootfs/usr/bin/dranetctl"
    install -d -m 0755 "$rootfs/opt/dranet/plugins"
    grep -v '^#' "$here/runtime-packages.txt" | sed '/^$/d' >"$out/$image/packages.txt"
  else
    install -d -m 0755 "$rootfs/plugins"
    for plugin in $contents; do
      so="$plugin_dir/dranet-plugin-$plugin.so"
      [[ -f "$so" ]] || { echo "$image: $so missing from the install tree (build target dranet-plugin-$plugin)" >&2; exit 1; }
      install -m 0644 "$so" "$rootfs/plugins/"
    done
  fi
  echo "assembled $image: $(cd "$rootfs" && find . -type f | sort | tr '\n' ' ')"
done <"$here/images.txt"
