#!/usr/bin/env bash
# Builds the Go commands one tool module pins and prints the directory that
# holds them, cached by source and Go version:
#
#   scripts/go_tool.sh NAME       e.g. helm, containerd
#
# scripts/go-tools/NAME/go.mod requires the upstream module at a fixed
# version and lists the commands to build with `tool` directives (go.sum
# pins every dependency). An optional scripts/go-tools/NAME/version-var
# names the Go variable `-X` stamps with that version, so `NAME version`
# reports it.
#
# Cache: ${DRANET_TOOLS_CACHE:-$XDG_CACHE_HOME/dranet-tools (~/.cache)}/NAME/bin.
# Exit 77 (skip) without Go 1.26 or the Go module proxy; 1 on a real failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/go_env.sh
source "$here/go_env.sh"
log() { printf 'go_tool: %s\n' "$*" >&2; }
[[ $# -eq 1 && $1 =~ ^[a-z0-9-]+$ && -f $here/go-tools/$1/go.mod ]] \
  || { log "usage: go_tool.sh NAME (one of: $(ls "$here/go-tools" | tr '\n' ' '))"; exit 2; }
name=$1
src=$here/go-tools/$name
go_env_require 26
# go.sum pins every dependency: nothing may add to it or to go.mod here.
export GOFLAGS=-mod=readonly
# The module's own `go` line may ask for a later patch release than 1.26.0.
needed=$(awk '$1 == "go" {print $2; exit}' "$src/go.mod")
if [[ -n $needed && "$(printf '%s\n' "$needed" "${go_version#go}" | sort -V | head -1)" != "$needed" ]]; then
  log "skipped: $go_version is older than go$needed, which scripts/go-tools/$name/go.mod needs"
  exit 77
fi

cache=${DRANET_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dranet-tools}/$name
bin=$cache/bin
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
stamp="$(cat "$src"/* "$0" "$here/go_env.sh" | sha256sum | cut -d' ' -f1) $go_version $(go env CGO_ENABLED GOOS GOARCH | paste -sd/)"
if [[ -f $bin/.stamp && "$(cat "$bin/.stamp")" == "$stamp" ]]; then
  echo "$bin"
  exit 0
fi

mapfile -t tools < <(awk '$1 == "tool" && $2 == "(" {inside = 1; next} $1 == "tool" && NF == 2 {print $2}
                          inside && $1 == ")" {inside = 0} inside && NF {print $1}' "$src/go.mod")
((${#tools[@]})) || { log "$src/go.mod names no tool"; exit 1; }
if ! (cd "$src" && go mod download) >"$cache/download.log" 2>&1; then
  cat "$cache/download.log" >&2
  log "skipped: the modules of $name cannot be downloaded (is the Go module proxy $(go env GOPROXY) reachable?)"
  exit 77
fi
ldflags="-s -w"
if [[ -f $src/version-var ]]; then
  module=$(cd "$src" && go list -f '{{.Module.Path}} {{.Module.Version}}' "${tools[0]}")
  ldflags+=" -X $(cat "$src/version-var")=${module#* }"
fi
started=$(date +%s)
log "building ${tools[*]} into $bin"
rm -rf "$bin.new"
mkdir -p "$bin.new"
(cd "$src" && go build -trimpath -ldflags "$ldflags" -o "$bin.new/" "${tools[@]}") >"$cache/build.log" 2>&1 \
  || { cat "$cache/build.log" >&2; log "go build of $name failed"; exit 1; }
echo "$stamp" >"$bin.new/.stamp"
rm -rf "$bin"
mv "$bin.new" "$bin"
log "built $name in $(($(date +%s) - started)) s: $(du -sh --exclude=.stamp "$bin" | cut -f1)"
echo "$bin"
