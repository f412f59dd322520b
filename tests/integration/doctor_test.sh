#!/usr/bin/env bash
# dranetctl doctor on a node that lacks everything, then on one that has it.
set -euo pipefail
ctl=$1 snapshot=$2
work=$(mktemp -d)
trap 'kill $listener 2>/dev/null || true; rm -rf "$work"' EXIT
listener=
set +e
out=$("$ctl" doctor --host-root "$snapshot" --kubelet-root-dir "$work/kubelet" --nri-socket "$work/nri.sock" \
        --state-dir "$work/state" --plugin-dir "$work/plugins" 2>&1)
rc=$?
set -e
echo "$out"
[[ $rc -eq 1 ]]
grep -q '^\[fail\] kubelet plugin directories missing' <<<"$out"
grep -q "^\[fail\] NRI socket $work/nri.sock does not exist" <<<"$out"
grep -q 'fix: enable NRI in the runtime' <<<"$out"
grep -q '^\[fail\] state directory' <<<"$out"
grep -q '^\[fail\] plugin directory .*does not exist' <<<"$out"
grep -q '^\[ok\]   RDMA devices present' <<<"$out"

mkdir -p "$work/kubelet/plugins_registry" "$work/kubelet/plugins" "$work/state" "$work/plugins"
chmod 755 "$work" "$work/plugins"
touch "$work/kubelet/plugins_registry/sriov-network-device-plugin.sock"
python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); time.sleep(120)' \
  "$work/nri.sock" &
listener=$!
for _ in $(seq 100); do [[ -S $work/nri.sock ]] && break; sleep 0.05; done
out=$("$ctl" doctor --host-root "$snapshot" --kubelet-root-dir "$work/kubelet" --nri-socket "$work/nri.sock" \
        --state-dir "$work/state" --plugin-dir "$work/plugins" --nri=false 2>&1)
echo "$out"
grep -q '^\[ok\]   kubelet plugin directories' <<<"$out"
grep -q '^\[warn\] another plugin that may manage network devices is registered: sriov-network-device-plugin.sock' <<<"$out"
grep -q '^0 problem(s)' <<<"$out"
if [[ $(id -u) -eq 0 ]]; then
  out=$("$ctl" doctor --host-root "$snapshot" --kubelet-root-dir "$work/kubelet" --nri-socket "$work/nri.sock" \
          --state-dir "$work/state" --plugin-dir "$work/plugins" 2>&1)
  grep -q "^\[ok\]   NRI socket $work/nri.sock accepts connections" <<<"$out"
fi
echo "doctor: ok"
