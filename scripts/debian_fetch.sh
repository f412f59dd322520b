#!/usr/bin/env bash
# Debian packages for tests, without installing them: each package is
# downloaded with a private apt configuration (its own sources list, lists and
# cache; the host's apt setup is not read or changed) and unpacked with
# `dpkg-deb -x` into a cache directory.
#
# As a command:
#   debian_fetch.sh CACHE_DIR PACKAGE/SUITE...
#     Leaves the packages unpacked under CACHE_DIR/root, the .debs in
#     CACHE_DIR/debs and "package version" lines in CACHE_DIR/versions.txt.
#     Does nothing when CACHE_DIR already holds exactly these packages from
#     the same mirror; concurrent callers sharing CACHE_DIR take turns.
#
# As a library (`source` it; the caller serialises access to CACHE_DIR):
#   debian_fetch_current CACHE_DIR STAMP      true when CACHE_DIR/root is the
#                                             result of a fetch with STAMP
#   debian_fetch CACHE_DIR STAMP PACKAGE/SUITE...
#                                             fetch and unpack unconditionally,
#                                             then record STAMP
#
# Exit status (the functions exit the calling script on failure): 77 when the
# archive cannot be reached, or apt-get/dpkg-deb/the keyring are missing, so a
# test can report a skip; 1 when the archive is reachable but lacks a
# package, which is a real error.
#
# DEBIAN_MIRROR (default http://deb.debian.org/debian) and DEBIAN_KEYRING
# (default /usr/share/keyrings/debian-archive-keyring.gpg) pick the archive;
# the suites in the sources list are DEBIAN_SUITES (default "trixie bookworm").

debian_fetch_log() { printf 'debian_fetch: %s\n' "$*" >&2; }

debian_fetch_mirror() { printf '%s' "${DEBIAN_MIRROR:-http://deb.debian.org/debian}"; }

# apt-get that only reads and writes under $1: its own sources list, no
# sources.list.d, no pinning, its own lists and cache. The system's dpkg
# status is only read.
debian_fetch_apt() {
    local dir=$1 sandbox=()
    shift
    # As root apt drops to the _apt user for downloads, which then cannot
    # write into a private directory owned by root.
    [[ ${EUID} -eq 0 ]] && sandbox=(-o APT::Sandbox::User=root)
    apt-get -q \
        -o Dir::Etc::sourcelist="${dir}/sources.list" \
        -o Dir::Etc::sourceparts="${dir}/empty" \
        -o Dir::Etc::preferences="${dir}/empty/preferences" \
        -o Dir::Etc::preferencesparts="${dir}/empty" \
        -o Dir::State::Lists="${dir}/lists" \
        -o Dir::Cache="${dir}/cache" \
        -o APT::Get::List-Cleanup=0 \
        -o Acquire::Languages=none \
        -o Acquire::Retries=2 \
        -o Acquire::http::Timeout=30 \
        "${sandbox[@]}" "$@"
}

# The first error apt wrote to log $1, as the one-line reason of a skip.
debian_fetch_first_error() { grep -E '^(E|W|Err):' "$1" | head -n 1; }

debian_fetch_current() {
    local cache=$1 stamp=$2
    [[ -d ${cache}/root && -f ${cache}/.fetch-stamp && "$(cat "${cache}/.fetch-stamp")" == "${stamp}" ]]
}

debian_fetch() {
    local cache=$1 stamp=$2
    shift 2
    local mirror keyring apt_dir aptlog suite pkg deb
    mirror=$(debian_fetch_mirror)
    keyring=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
    apt_dir="${cache}/apt"
    aptlog="${cache}/apt.log"

    if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
        debian_fetch_log "SKIP: apt-get/dpkg-deb not available (not a Debian system)"
        exit 77
    fi
    if [[ ! -r ${keyring} ]]; then
        debian_fetch_log "SKIP: ${keyring} missing (debian-archive-keyring)"
        exit 77
    fi

    rm -rf "${apt_dir}" "${cache}/debs" "${cache}/root.new" "${cache}/.fetch-stamp"
    mkdir -p "${apt_dir}/lists/partial" "${apt_dir}/cache/archives/partial" \
             "${apt_dir}/empty" "${cache}/debs" "${cache}/root.new"
    for suite in ${DEBIAN_SUITES:-trixie bookworm}; do
        printf 'deb [signed-by=%s] %s %s main\n' "${keyring}" "${mirror}" "${suite}"
    done >"${apt_dir}/sources.list"

    if ! debian_fetch_apt "${apt_dir}" --error-on=any update >"${aptlog}" 2>&1; then
        debian_fetch_log "SKIP: cannot reach the Debian archive at ${mirror}: $(debian_fetch_first_error "${aptlog}")"
        exit 77
    fi
    # A package that the (reachable) archive does not know is a real error,
    # not a reason to skip.
    for pkg in "$@"; do
        if ! debian_fetch_apt "${apt_dir}" download --print-uris "${pkg}" >>"${aptlog}" 2>&1; then
            debian_fetch_log "the Debian archive has no ${pkg}; see ${aptlog}"
            exit 1
        fi
    done
    if ! (cd "${cache}/debs" && debian_fetch_apt "${apt_dir}" download "$@") >>"${aptlog}" 2>&1; then
        debian_fetch_log "SKIP: cannot download from ${mirror}: $(debian_fetch_first_error "${aptlog}")"
        exit 77
    fi

    : >"${cache}/versions.txt"
    for deb in "${cache}"/debs/*.deb; do
        dpkg-deb -x "${deb}" "${cache}/root.new"
        # shellcheck disable=SC2016 # dpkg-deb expands these itself
        dpkg-deb --showformat='${Package} ${Version}\n' -W "${deb}" >>"${cache}/versions.txt"
    done
    rm -rf "${cache}/root"
    mv "${cache}/root.new" "${cache}/root"
    # The package index is no longer needed (tens of MB); the .debs stay as
    # a record of exactly what was unpacked.
    rm -rf "${apt_dir}"
    printf '%s' "${stamp}" >"${cache}/.fetch-stamp"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    set -euo pipefail
    if [[ $# -lt 2 ]]; then
        debian_fetch_log "usage: $0 CACHE_DIR PACKAGE/SUITE..."
        exit 2
    fi
    cache_dir=$(realpath -m -- "$1")
    shift
    mkdir -p "${cache_dir}"
    exec 9>"${cache_dir}/.lock"
    flock 9
    stamp="mirror=$(debian_fetch_mirror) suites=${DEBIAN_SUITES:-trixie bookworm} packages=$*"
    if ! debian_fetch_current "${cache_dir}" "${stamp}"; then
        debian_fetch "${cache_dir}" "${stamp}" "$@"
    fi
fi
