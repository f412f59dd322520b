#!/usr/bin/env bash
# The real kube-scheduler as the oracle of `dranetctl simulate`, on the node in
# a box's control plane:
#
#   tests/cluster/oracle_test.sh BUILD_DIR RUN_DIR [REPORT]
#
#   1. oracle.py plan: one case per node snapshot (tests/nodes) and
#      ResourceClaimTemplate (packaging/examples/*/claim-templates.yaml and
#      oracle-templates.yaml, the features those leave out), each
#      with a Node of its own, the DeviceClasses of install.yaml and of the GPU
#      drivers, and the snapshot's example GPU slices on that Node;
#   2. dranetd --once publishes each case Node's devices from its snapshot
#      (the build's plugins, the snapshot's metadata);
#   3. per case a ResourceClaim with the template's spec and a Pod bound to the
#      case's Node: the real scheduler allocates (no kubelet serves these
#      Nodes) or reports the pod Unschedulable;
#   4. dranetctl simulate on each snapshot and template file, with the same
#      DeviceClasses and GPU slices;
#   5. oracle.py check: the same devices for every request, or pending on both
#      sides. Any difference fails; REPORT (optional) gets every case's line.
# Exit 77 (skip) when the node cannot be built here; needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
[[ $# -ge 2 && $# -le 3 ]] || { sed -n '2,6p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
run=$(realpath -m -- "$2")
report=${3:+$(realpath -m -- "$3")}
suite=oracle_test
# shellcheck source=tests/cluster/box_lib.sh
source "$here/box_lib.sh"

box_up
work=$run/oracle
mkdir -p "$work/simulate"

log "1. the cases"
python3 "$here/oracle.py" plan --nodes "$source_dir/tests/nodes" --examples "$source_dir/packaging/examples" \
  --install-yaml "$source_dir/packaging/install.yaml" --extra "$here/oracle-templates.yaml" --work "$work" >&2
k apply -f "$work/classes.yaml" >/dev/null
k apply -f "$work/nodes.yaml" >/dev/null
# The node lifecycle controller writes the new Nodes (taints) at the same
# time: a status write that meets its change is refused (Conflict) and tried again.
for ((i = 0; ; i++)); do
  out=$(k replace --subresource=status -f "$work/nodes-status.yaml" 2>&1 >/dev/null) && break
  [[ $out == *"the object has been modified"* && $i -lt 10 ]] || fail "the Nodes' status: $out"
  sleep 0.5
done
[[ ! -s $work/gpu-slices.yaml ]] || k apply -f "$work/gpu-slices.yaml" >/dev/null

log "2. dranetd --once publishes every case Node's devices"
started=$(date +%s)
python3 -c 'import json, sys; [print(c["node"], c["snapshot"]) for c in json.load(open(sys.argv[1]))]' \
  "$work/cases.json" >"$work/nodes.txt"
publish() {
  "$build/bin/dranetd" --once --kubeconfig "$KUBECONFIG" --node-name "$1" \
    --host-root "$source_dir/tests/nodes/$2" --metrics-address 127.0.0.1:0 >"$work/dranetd-$1.log" 2>&1 \
    || { tail -5 "$work/dranetd-$1.log" >&2; return 1; }
}
export -f publish
export build source_dir work KUBECONFIG
xargs -P 2 -L 1 bash -c 'publish "$0" "$1"' <"$work/nodes.txt" || fail "dranetd --once failed"
log "   $(wc -l <"$work/nodes.txt") Nodes published in $(($(date +%s) - started)) s"

log "3. a claim and a pod per case; the scheduler allocates"
k apply -f "$work/pods.yaml" >/dev/null
python3 "$here/oracle.py" wait --work "$work" --kubectl "$KUBECTL" --timeout 180 \
  || fail "the scheduler did not decide every case"

log "4. dranetctl simulate on the same inputs"
for snapshot in "$source_dir"/tests/nodes/*/; do
  snapshot=${snapshot%/}
  [[ -d $snapshot/sys ]] || continue
  gpu=()
  [[ -f $source_dir/packaging/examples/${snapshot##*/}/gpu-resourceslices.yaml ]] \
    && gpu=(--gpu-slices "$source_dir/packaging/examples/${snapshot##*/}/gpu-resourceslices.yaml")
  while read -r name example; do
    status=0
    "$build/bin/dranetctl" simulate --host-root "$snapshot" -f "$example" "${gpu[@]}" \
      --device-classes "$work/classes.yaml" >"$work/simulate/${snapshot##*/}--$name.txt" 2>"$work/simulate.err" \
      || status=$?
    # 3: some template not allocated, which the check compares too.
    ((status == 0 || status == 3)) || { cat "$work/simulate.err" >&2; fail "simulate failed on $snapshot with $example"; }
  done <"$work/template-files.txt"
done

log "5. the scheduler's allocations against simulate's"
python3 "$here/oracle.py" check --work "$work" ${report:+--report "$report"} >&2 \
  || fail "simulate and the scheduler differ"
box_down
log "PASS"
