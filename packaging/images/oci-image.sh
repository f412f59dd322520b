#!/usr/bin/env bash
# Every dranet image as an OCI image tarball, from a CMake build tree, without
# a container engine (for a node whose containerd imports them, e.g.
# `ctr -n k8s.io images import`):
#
#   packaging/images/oci-image.sh BUILD_DIR OUT_DIR BUSYBOX [REGISTRY [TAG]]
#
#   OUT_DIR/<image>.tar   named REGISTRY/<image>:TAG (defaults: the chart's
#                         ghcr.io/dranet and its appVersion), each image of images.txt
#
# The contents are assemble.sh's. Where the Dockerfiles start from
# debian:bookworm-slim (dranet) and busybox (plugin images), these images
# carry instead the shared libraries dranetd, dranetctl and every plugin load
# (their ldd closure on this machine) and the static BUSYBOX (the plugin
# images' init container runs /bin/sh, cp and chmod). build-images.sh remains
# the way to publish multi-architecture images.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=oci_layout.sh
source "$here/oci_layout.sh"
[[ $# -ge 3 && $# -le 5 ]] || { sed -n '2,10p' "$0" >&2; exit 2; }
build=$1 busybox=$3
registry=${4:-ghcr.io/dranet}
tag=${5:-$(awk '$1 == "appVersion:" {gsub(/"/, "", $2); print $2}' "$here/../helm/dranet/Chart.yaml")}
mkdir -p "$2"
out=$(cd "$2" && pwd)
[[ -x $busybox ]] || { echo "oci-image: $busybox is not an executable busybox" >&2; exit 1; }
file -L "$busybox" 2>/dev/null | grep -q "statically linked" \
  || ldd "$busybox" 2>&1 | grep -q "not a dynamic executable" \
  || { echo "oci-image: $busybox must be statically linked" >&2; exit 1; }

bash "$here/assemble.sh" "$build" "$out/assembled" >"$out/assemble.log"
assembled=$out/assembled

env_path='"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"'
while read -r image contents; do
  [[ -z "$image" || "$image" == \#* ]] && continue
  rootfs=$out/$image.rootfs
  rm -rf "$rootfs"
  cp -a "$assembled/$image/rootfs" "$rootfs"
  mkdir -p "$rootfs"/{dev,etc,proc,sys,tmp,var/run}
  chmod 1777 "$rootfs/tmp"
  # Debug information stays in the build tree.
  find "$rootfs" -type f \( -name '*.so' -o -path '*/usr/bin/*' \) -exec strip --strip-debug {} +
  if [[ "$contents" == base ]]; then
    copy_libraries "$rootfs" "$rootfs/usr/bin/dranetd" "$rootfs/usr/bin/dranetctl" \
      "$assembled"/staging/usr/lib/dranet/plugins/*.so
    # The data file of runtime-packages.txt the libraries do not pull in:
    # PCI vendor and device names (pciVendor, pciDevice attributes).
    ids=""
    while read -r f; do [[ -f $f ]] && { ids=$f; break; }; done < <(dpkg -L pci.ids 2>/dev/null | grep '/pci\.ids$')
    [[ -n $ids && -f $ids ]] || { echo "oci-image: no pci.ids (Debian package pci.ids) to put in the image" >&2; exit 1; }
    install -D -m 0644 "$ids" "$rootfs$ids"
    config="{\"Env\":[$env_path],\"Entrypoint\":[\"/usr/bin/dranetd\"],\"WorkingDir\":\"/\"}"
  else
    install -D -m 0755 "$busybox" "$rootfs/bin/busybox"
    for applet in sh cp chmod echo ls cat; do ln -s busybox "$rootfs/bin/$applet"; done
    config="{\"Env\":[$env_path],\"Cmd\":[\"/bin/sh\"],\"WorkingDir\":\"/\"}"
  fi
  make_image "$out/$image.tar" "$registry/$image:$tag" "$rootfs" "$config"
  rm -rf "$rootfs"
  echo "$out/$image.tar $registry/$image:$tag"
done <"$here/images.txt"
