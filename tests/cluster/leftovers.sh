#!/usr/bin/env bash
# After `node.sh down RUN_DIR`: fails, naming each, if anything of the run is
# left on the machine.
#   tests/cluster/leftovers.sh RUN_DIR K8S_BIN_DIR [PREEXISTING]
# PREEXISTING lists the node-wide paths checked below that existed before the
# run (a node with RDMA hardware has /dev/infiniband): those are not reported.
set -uo pipefail
run=$1 bin=$2 preexisting=${3:-/dev/null} left=0
say() { printf 'leftovers: %s\n' "$*" >&2; left=1; }
[[ -e $run ]] && say "the run directory $run"
for p in /proc/[0-9]*; do
  exe=$(readlink "$p/exe" 2>/dev/null) || continue
  [[ $exe == "$bin/"* ]] && say "process ${p#/proc/}: $exe"
  cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
  [[ $cwd == "$run" || $cwd == "$run/"* ]] && say "process ${p#/proc/} in $cwd"
done
while read -r mp; do
  mp=$(printf '%b' "$mp")
  [[ $mp == "$run"* || $mp == /var/lib/kubelet* || $mp == /var/run/netns/cni-* || $mp == /run/netns/cni-* ]] \
    && say "mount $mp"
done < <(awk '{print $5}' /proc/self/mountinfo)
ip -o addr show dev lo | grep -q ' 10\.233\.0\.1/' && say "address 10.233.0.1 on lo"
ip link show drnkbox0 >/dev/null 2>&1 && say "link drnkbox0"
for ns in /var/run/netns/dnbox-*; do [[ -e $ns ]] && say "network namespace ${ns##*/}"; done
for f in /var/lib/kubelet /var/run/nri/nri.sock /var/run/dranet /dev/infiniband; do
  [[ -e $f ]] && ! grep -qxF "$f" "$preexisting" && say "$f"
done
awk '$5 == "/" && / shared:/ {f = 1} END {exit !f}' /proc/self/mountinfo && say "/ left a shared mount"
exit "$left"
