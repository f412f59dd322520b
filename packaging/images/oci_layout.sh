#!/usr/bin/env bash
# OCI image tarballs without a container engine, for `ctr images import`
# (tests/runtime, tests/cluster) and packaging/images/oci-image.sh. Sourced:
#   oci_arch                      this machine's OCI architecture (amd64, arm64, ...)
#   sha256_of FILE, size_of FILE
#   make_image OUT_TAR NAME ROOTFS_DIR CONFIG_JSON_FRAGMENT
#   copy_libraries ROOTFS FILE... the shared libraries the FILEs load, into ROOTFS
# The tarballs are reproducible (sorted entries, mtime 0, owner 0).

# Go/OCI architecture name of this machine.
oci_arch() {
    local a
    a=$(dpkg --print-architecture 2>/dev/null || uname -m)
    case ${a} in
        amd64 | x86_64) echo amd64 ;;
        arm64 | aarch64) echo arm64 ;;
        ppc64el | ppc64le) echo ppc64le ;;
        s390x) echo s390x ;;
        riscv64) echo riscv64 ;;
        *) echo "oci_layout: unsupported architecture ${a}" >&2; return 1 ;;
    esac
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
size_of() { stat -c %s "$1"; }

# Store file $2 as a blob of the OCI layout $1; print its digest.
add_blob() {
    local layout=$1 file=$2 digest
    digest=$(sha256_of "${file}")
    mkdir -p "${layout}/blobs/sha256"
    cp "${file}" "${layout}/blobs/sha256/${digest}"
    echo "${digest}"
}

# make_image OUT_TAR NAME ROOTFS_DIR CONFIG_JSON_FRAGMENT
# Packs ROOTFS_DIR as a single uncompressed layer into an OCI image layout
# (oci-layout, index.json, blobs/sha256/) and tars the layout up for
# `ctr images import`. The tar is reproducible (sorted, mtime 0, uid 0).
make_image() {
    local out=$1 name=$2 rootfs=$3 config=$4
    local work arch layout layer_digest layer_size cfg_digest cfg_size man_digest man_size
    work=$(mktemp -d "${out}.build.XXXXXX")
    layout="${work}/layout"
    mkdir -p "${layout}"
    arch=$(oci_arch)

    local tarflags=(--sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --format=gnu)
    local entries=() e
    for e in "${rootfs}"/*; do
        entries+=("${e##*/}")
    done
    tar -C "${rootfs}" "${tarflags[@]}" -cf "${work}/layer.tar" -- "${entries[@]}"
    layer_digest=$(add_blob "${layout}" "${work}/layer.tar")
    layer_size=$(size_of "${work}/layer.tar")

    # CRI only runs images whose platform matches the node: set os/arch in
    # both the config and the index entry.
    printf '{"architecture":"%s","os":"linux","created":"1970-01-01T00:00:00Z","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"dranet oci_layout.sh"}]}' \
        "${arch}" "${config}" "${layer_digest}" >"${work}/config.json"
    cfg_digest=$(add_blob "${layout}" "${work}/config.json")
    cfg_size=$(size_of "${work}/config.json")

    printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
        "${cfg_digest}" "${cfg_size}" "${layer_digest}" "${layer_size}" >"${work}/manifest.json"
    man_digest=$(add_blob "${layout}" "${work}/manifest.json")
    man_size=$(size_of "${work}/manifest.json")

    # io.containerd.image.name gives `ctr images import` the full image name;
    # org.opencontainers.image.ref.name is the OCI-standard tag.
    printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"%s","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
        "${man_digest}" "${man_size}" "${arch}" "${name}" "${name##*:}" >"${layout}/index.json"
    printf '{"imageLayoutVersion":"1.0.0"}' >"${layout}/oci-layout"

    tar -C "${layout}" "${tarflags[@]}" -cf "${work}/image.tar" oci-layout index.json blobs
    mv "${work}/image.tar" "${out}"
    rm -rf "${work}"
}

# copy_libraries ROOTFS FILE...: each shared library the FILEs load, at the
# path the dynamic loader found it, and the loader itself (ldd prints
# "name => /path (addr)" per library and "/path (addr)" for the loader).
copy_libraries() {
    local rootfs=$1 lib f
    shift
    while read -r lib; do
        mkdir -p "${rootfs}${lib%/*}"
        cp -L "${lib}" "${rootfs}${lib}"
    done < <(for f in "$@"; do ldd "${f}"; done \
               | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u)
}
