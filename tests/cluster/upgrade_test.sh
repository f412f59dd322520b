#!/usr/bin/env bash
# An upgrade of dranet while pods come and go, on the node in a box:
#
#   tests/cluster/upgrade_test.sh BUILD_DIR RUN_DIR
#
# On a fresh node, dranet installed with `helm install` and the gcp overlay,
# dranetd reading the A4 snapshot, its eight NICs stand-in veths
# (box_netdev_standins):
#   1. a loop starts a pod every half second whose claim takes one of the
#      NICs (its netdev moved in at RunPodSandbox, its uverbs device added at
#      CreateContainer) and deletes the pod it started six rounds before; each
#      pod's container writes to a hostPath whether it started with both;
#   2. while the loop runs, `helm upgrade --set image.tag=...-next` rolls the
#      DaemonSet to another tag of the image (the chart's surge strategy):
#      the new dranet pod starts beside the old one, both registered with the
#      kubelet under their pod UIDs, and when the old one is deleted it hands
#      the runtime's NRI connection to the new one;
#   3. the loop runs on a while, then every pod left is let start;
#   4. no pod started without its NIC or its device, no Warning Event on
#      any of them or their claims but FailedScheduling (all NICs taken for
#      a moment) and MissingClusterDNS (the node has no cluster DNS), the
#      new dranetd took the NRI connection over (it never registered a plugin
#      of its own), claims the old one prepared were unprepared by the new
#      one, and pods started while both ran;
#   5. every pod deleted: the NICs are home, no claim is left prepared, the
#      kubelet's registry holds the new pod's socket only; every request
#      dranetd made is allowed by its ClusterRole; nothing left behind.
# Exit 77 (skip) when the node cannot be built here, or when the snapshot's
# NIC subnets overlap this machine's routes; needs root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
[[ $# -eq 2 ]] || { sed -n '2,5p' "$0" >&2; exit 2; }
build=$(cd "$1" && pwd)
run=$(realpath -m -- "$2")
suite=upgrade_test
# shellcheck source=tests/cluster/box_lib.sh
source "$here/box_lib.sh"
node_type=a4-highgpu-8g
snapshot=$source_dir/tests/nodes/$node_type
report=$run/report  # each pod's verdict (a hostPath)
keep=6                           # pods alive at once (of 8 NICs)

box_up
box_images dranet dranet-plugins-gcp
box_netdev_standins "$source_dir/packaging/examples/$node_type/expected.yaml"
rm -rf "$report"
mkdir -p "$report"

log "1. helm install with the gcp overlay on the $node_type snapshot"
box_install_on_snapshot gcp "$snapshot"
image=$(k -n kube-system get ds dranet -o jsonpath='{.spec.template.spec.containers[0].image}')
next=$image-next
"$CTR" -a "$CONTAINERD_SOCKET" -n "$CRI_NAMESPACE" images tag "$image" "$next" >/dev/null
old=$(k -n kube-system get pods -l app.kubernetes.io/name=dranet -o jsonpath='{.items[0].metadata.name}')
old_uid=$(k -n kube-system get pod "$old" -o jsonpath='{.metadata.uid}')
[[ -S /var/lib/kubelet/plugins_registry/dra.net-$old_uid-reg.sock ]] \
  || fail "dranetd's registration socket is not named after its pod: $(ls /var/lib/kubelet/plugins_registry)"
k -n kube-system logs -f "$old" >"$run/old-dranetd.log" 2>&1 &
old_log_pid=$!

box_template churn 1 'device.attributes["dra.net"].ifName.startsWith("gpu")'
# churn_pod NAME: a pod that writes "ok|missing TIME ..." to $report/NAME and
# sleeps, or exits 1, as it finds its NIC and uverbs device.
churn_pod() {
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, labels: {churn: "yes"}}
spec:
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
  containers:
  - name: c
    image: $BUSYBOX_IMAGE
    imagePullPolicy: Never
    env: [{name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
    command:
    - sh
    - -c
    - |
      set -- /dev/infiniband/uverbs*
      nics=\$(grep -c 'gpu[0-7]rdma0:' /proc/net/dev)
      if [ -e "\$1" ] && [ "\$nics" = 1 ]; then
        echo "ok \$(date +%s) \$*" >/report/\$POD; exec sleep 3600
      fi
      echo "missing \$(date +%s) uverbs=\$* nics=\$nics" >/report/\$POD; exit 1
    resources: {claims: [{name: devices}]}
    volumeMounts: [{name: report, mountPath: /report}]
  volumes: [{name: report, hostPath: {path: $report, type: Directory}}]
  resourceClaims: [{name: devices, resourceClaimTemplateName: churn}]
EOF
}
churn() {
  local i=0
  while [[ ! -e $run/churn-stop ]]; do
    i=$((i + 1))
    # Each kubectl runs beside the loop, so that one round is half a second.
    { churn_pod "churn-$i" || echo "churn-$i apply failed" >>"$run/churn-errors"; } &
    echo "churn-$i $(date +%s.%N)" >>"$run/churn-started"
    ((i > keep)) && { k delete pod "churn-$((i - keep))" --wait=false >/dev/null 2>&1 & }
    sleep 0.5
  done
  wait
}

log "2. pods started every 0.5 s and deleted $keep rounds later; after 10 s, the DaemonSet rolled to $next"
rm -f "$run/churn-stop" "$run/churn-started" "$run/churn-errors"
churn &
churn_pid=$!
# A failure stops the loop before the node goes down.
upgrade_cleanup() {
  local status=$?
  touch "$run/churn-stop"
  kill "$churn_pid" "$old_log_pid" 2>/dev/null || true
  wait "$churn_pid" 2>/dev/null || true
  (exit "$status")
  box_cleanup
}
trap upgrade_cleanup EXIT
sleep 10
helm_bin=$(bash "$source_dir/scripts/go_tool.sh" helm)/helm
rollout_start=$(date +%s)
"$helm_bin" upgrade dranet "$source_dir/packaging/helm/dranet" --namespace kube-system --kubeconfig "$KUBECONFIG" \
  --reuse-values --set "image.tag=${next##*:}" >"$run/helm-upgrade.log" 2>&1 \
  || { cat "$run/helm-upgrade.log" >&2; fail "helm upgrade failed"; }
k -n kube-system rollout status daemonset/dranet --timeout=180s >&2 || fail "the rollout did not finish"
rollout_end=$(date +%s)
new=$(k -n kube-system get pods -l app.kubernetes.io/name=dranet \
        -o jsonpath="{.items[?(@.spec.containers[0].image=='$next')].metadata.name}")
[[ -n $new && $new != "$old" ]] || fail "no dranet pod runs $next"
log "   rolled in $((rollout_end - rollout_start)) s: $old -> $new"
sleep 10
touch "$run/churn-stop"
wait "$churn_pid"
[[ ! -s $run/churn-errors ]] || fail "pods could not be created: $(cat "$run/churn-errors")"
started=$(wc -l <"$run/churn-started")
rate=$(awk 'NR == 1 {first = $2} {last = $2} END {printf "%.2f", (last - first) / (NR - 1)}' "$run/churn-started")
log "3. $started pods created, one every $rate s; letting those left start"
for ((i = 0; i < 120; i++)); do
  pending=$(k get pods -l churn=yes --field-selector=status.phase=Pending -o name | wc -l)
  ((pending == 0)) && break
  sleep 1
done
((pending == 0)) || fail "$pending pods still Pending"
# The old pod's log ends with it.
for ((i = 0; i < 30; i++)); do kill -0 "$old_log_pid" 2>/dev/null || break; sleep 1; done
kill "$old_log_pid" 2>/dev/null || true
wait "$old_log_pid" 2>/dev/null || true

log "4. checks"
missing=$(grep -l '^missing' "$report"/* 2>/dev/null || true)
[[ -z $missing ]] || fail "pods started without their NIC or device: $(for f in $missing; do echo "${f##*/}: $(cat "$f")"; done)"
ok=$(cat "$report"/* 2>/dev/null | grep -c '^ok') || true
during=$(cat "$report"/* 2>/dev/null \
           | awk -v a="$rollout_start" -v b="$rollout_end" '$1 == "ok" && $2 >= a && $2 <= b' | wc -l)
((ok >= 20)) || fail "only $ok pods started with their devices (of $started)"
((during >= 1)) || fail "no pod started during the rollout ($rollout_start..$rollout_end)"
log "   $ok pods started with their NIC and uverbs device, $during of them during the rollout; none without"
warnings=$(k get events -o json | python3 -c '
import json, sys
for e in json.load(sys.stdin)["items"]:
    o = e["involvedObject"]
    # All NICs taken for a moment; a node without cluster DNS (pods fall back
    # to the host resolver): neither comes from dranet.
    benign = ("FailedScheduling", "MissingClusterDNS")
    if e["type"] == "Warning" and o.get("name", "").startswith("churn-") and e["reason"] not in benign:
        print(o["kind"], o["name"], e["reason"], e["message"][:200])')
[[ -z $warnings ]] || fail "Warning Events on the pods or their claims: $warnings"
k -n kube-system logs "$new" >"$run/new-dranetd.log" 2>&1
grep -q 'another instance runs the node' "$run/new-dranetd.log" || fail "the new dranetd did not find the old one"
grep -q 'NRI connection taken over' "$run/new-dranetd.log" || fail "the new dranetd did not take the NRI connection over"
! grep -q 'NRI plugin registered' "$run/new-dranetd.log" || fail "the new dranetd registered an NRI plugin of its own"
grep -q 'node handed over to the successor' "$run/old-dranetd.log" \
  || fail "the old dranetd did not hand the node over: $(tail -5 "$run/old-dranetd.log")"
claims_of() { grep "\"$1\"" "$2" | grep -o 'claim="[^"]*"' | sort -u; }
handed=$(comm -12 <(claims_of "claim prepared" "$run/old-dranetd.log") \
                  <(claims_of "claim unprepared" "$run/new-dranetd.log") | wc -l)
((handed >= 1)) || fail "no claim prepared by the old dranetd was unprepared by the new one"
log "   the NRI connection handed over; $handed claims prepared by the old dranetd, unprepared by the new one"

log "5. every pod deleted"
k delete pods -l churn=yes --wait=true --timeout=120s >/dev/null
for ((n = 0; n < 8; n++)); do
  for ((i = 0; i < 100; i++)); do ip link show "gpu${n}rdma0" >/dev/null 2>&1 && break; sleep 0.1; done
  ip link show "gpu${n}rdma0" >/dev/null 2>&1 || fail "gpu${n}rdma0 did not come home"
done
for ((i = 0; i < 100; i++)); do [[ -z $(ls -A /var/run/dranet/claims) ]] && break; sleep 0.1; done
[[ -z $(ls -A /var/run/dranet/claims) ]] || fail "claims left prepared: $(ls /var/run/dranet/claims)"
sockets=$(ls /var/lib/kubelet/plugins_registry | grep '^dra\.net' || true)
new_uid=$(k -n kube-system get pod "$new" -o jsonpath='{.metadata.uid}')
[[ $sockets == "dra.net-$new_uid-reg.sock" ]] || fail "the kubelet's registry holds: $sockets"
log "   the eight NICs are home, no claim is prepared, the registry holds $sockets"
box_audit --allow-unused
rm -rf "$report"
box_down
log "passed"
