#!/usr/bin/env bash
# Builds and pushes every dranet image for linux/amd64 and linux/arm64 with
# docker buildx (images.txt lists them). Run from anywhere, on a machine with a
# container engine and QEMU binfmt (or native arm64 builders):
#
#   REGISTRY=ghcr.io/dranet TAG=0.1.0 packaging/images/build-images.sh [--push]
#
# Without --push the images stay in the build cache (buildx cannot load a
# multi-platform image into the local engine).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
registry=${REGISTRY:-ghcr.io/dranet}
tag=${TAG:-0.1.0}
platforms=${PLATFORMS:-linux/amd64,linux/arm64}
push=()
[[ "${1:-}" == --push ]] && push=(--push)

while read -r image contents; do
  [[ -z "$image" || "$image" == \#* ]] && continue
  if [[ "$contents" == base ]]; then
    docker buildx build --platform "$platforms" -f "$here/Dockerfile.base" \
      -t "$registry/$image:$tag" "${push[@]}" "$root"
  else
    docker buildx build --platform "$platforms" -f "$here/Dockerfile.plugins" \
      --build-arg PLUGINS="$contents" -t "$registry/$image:$tag" "${push[@]}" "$root"
  fi
done <"$here/images.txt"
