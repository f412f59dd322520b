# Sourced by the scripts that build Go programs for the tests and packaging
# (tests/cluster/build.sh, scripts/go_tool.sh). Go is for tests and tools
# only; dranet itself is C++.
#
#   go_env_require MINOR   puts Go on PATH and checks it is 1.MINOR or newer;
#                          exits 77 (skip) naming what is missing
# After it: go_version (e.g. go1.26.8). GOTOOLCHAIN=local: never download
# another toolchain behind the caller's back.

go_env_require() {
  local need=$1
  export GOTOOLCHAIN=local GOFLAGS=-mod=mod
  # Go's own tarball installs to /usr/local/go, often not on a non-login PATH.
  if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then PATH=/usr/local/go/bin:$PATH; fi
  if ! command -v go >/dev/null; then
    printf '%s: skipped: no '\''go'\'' on PATH (Go 1.%s or newer is needed)\n' "${0##*/}" "$need" >&2
    exit 77
  fi
  go_version=$(go env GOVERSION)
  if ! [[ $go_version =~ ^go1\.([0-9]+) ]] || ((BASH_REMATCH[1] < need)); then
    printf '%s: skipped: %s is older than go1.%s\n' "${0##*/}" "$go_version" "$need" >&2
    exit 77
  fi
}
