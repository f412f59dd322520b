#!/usr/bin/env bash
# The node types' workflow (cluster_seeds_*), the scheduler oracle
# (cluster_oracle), device health (cluster_health), extended resources
# (cluster_extended), admin access and prioritized lists (cluster_access) on
# Kubernetes releases other than the pinned one (health and extended
# resources ignored or refused cleanly where the release has no health
# stream, taints or DRA extended resources), at least once for every change
# to what decides an allocation, what a slice says or how health is told:
# core/simulate, core/cel, core/inventory, core/health.
#
#   tests/cluster/releases.sh BUILD_DIR run [VERSION...]   (default: v1.34.4)
#       runs those suites on each VERSION (DRANET_K8S_VERSION; built and cached
#       by build.sh) and, when all pass, records the sources' digest, the
#       releases and the date in tests/cluster/releases.stamp (commit it);
#   tests/cluster/releases.sh BUILD_DIR check
#       exit 0 when releases.stamp holds the digest of the sources as they are
#       (it prints what ran, and when); otherwise does `run` for the stamp's
#       releases. ctest's cluster_releases does this, so CI builds and runs an
#       older release only for sources no one has run on it.
# Exit 77 (skip) when the node cannot be built here; needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
stamp=$here/releases.stamp
log() { printf 'cluster/releases: %s\n' "$*" >&2; }
[[ $# -ge 2 ]] || { sed -n '2,18p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
mode=$2
shift 2

digest() {
  (cd "$source_dir" && find core/simulate core/cel core/inventory core/health -type f -print0 | sort -z | xargs -0 sha256sum) \
    | sha256sum | cut -d' ' -f1
}

run_releases() {
  local version status
  for version in "$@"; do
    log "the seeds' workflow, the oracle, device health, extended resources and access on Kubernetes $version"
    status=0
    DRANET_K8S_VERSION=$version ctest --test-dir "$build" -R '^cluster_(build|seeds_.*|oracle|health|extended|access)$' \
      --output-on-failure 2>&1 | tee "$build/releases-$version.log" >&2 || status=$?
    ((status == 0)) || { log "FAIL on $version"; exit 1; }
    # A suite that skipped (no Go, no module proxy) proves nothing: no stamp.
    if grep -q 'Skipped' "$build/releases-$version.log"; then
      log "skipped: a suite could not run on $version here"
      exit 77
    fi
  done
  {
    echo "# tests/cluster/releases.sh: cluster_seeds_*, cluster_oracle, cluster_health, cluster_extended and cluster_access passed on these"
    echo "# releases with core/simulate, core/cel, core/inventory and core/health as this digest names them."
    echo "digest $(digest)"
    echo "releases $*"
    echo "date $(date -u +%F)"
  } >"$stamp"
  log "recorded in $stamp"
}

case $mode in
  run)
    (($#)) || set -- v1.34.4
    run_releases "$@"
    ;;
  check)
    [[ -f $stamp ]] || { log "no $stamp"; exit 1; }
    read -ra releases <<<"$(awk '$1 == "releases" {$1 = ""; print}' "$stamp")"
    ((${#releases[@]})) || { log "$stamp names no release"; exit 1; }
    if [[ "$(awk '$1 == "digest" {print $2}' "$stamp")" == "$(digest)" ]]; then
      log "these sources passed on ${releases[*]} ($(awk '$1 == "date" {print $2}' "$stamp"))"
      exit 0
    fi
    log "core/simulate, core/cel or core/inventory changed since ${releases[*]} last ran: running them"
    run_releases "${releases[@]}"
    ;;
  *) log "run or check, not $mode"; exit 2 ;;
esac
