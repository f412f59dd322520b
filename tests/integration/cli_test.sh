#!/usr/bin/env bash
# The binaries' build contract: versions, default plugin directory found from
# the build tree, a clear one-line error for a missing plugin directory; the
# ResourceSlice files dranetctl simulate/templates read.
set -euo pipefail
build=$1
"$build/bin/dranetd" --version | grep -Eq '^dranetd [0-9]+\.[0-9]+\.[0-9]+ \(driver dra.net, plugin ABI 1\.4\)$'
"$build/bin/dranetctl" version | grep -Eq '^dranetctl [0-9]+\.[0-9]+\.[0-9]+ \(driver dra.net, plugin ABI 1\.4\)$'
# Default plugin directory: <exe>/../lib/dranet/plugins in the build tree.
help=$("$build/bin/dranetctl" plugins --help)
grep -q "default: $build/lib/dranet/plugins" <<<"$help"
out=$("$build/bin/dranetctl" plugins --plugin-dir /nonexistent/plugins)
grep -q 'rejected .*plugin directory /nonexistent/plugins does not exist' <<<"$out"
# Owned attribute domains (ABI 1.3), shown without -v: fake-intruder loads
# before fake and writes fake's attribute; the listing says what each plugin
# published on the node's devices and what the host rejected, and why.
plugdir=$(mktemp -d)
cp "$build/tests/fake-plugins/dranet-plugin-fake.so" "$build/tests/fake-plugins/dranet-plugin-fake-intruder.so" "$plugdir/"
chmod 755 "$plugdir"
out=$("$build/bin/dranetctl" plugins --plugin-dir "$plugdir" --allow-non-root-plugin-dir \
      --host-root "$(cd "$(dirname "$0")/../.." && pwd)/tests/nodes/nd-gb300-v6")
for line in '    domains fake-intruder.dra.net intruder.example.com' \
            '    domain REFUSED declared domain fake.dra.net belongs to plugin fake' \
            '    annotate published intruder.example.com/owned on [1-9][0-9]* device(s)' \
            '    annotate REJECTED attribute "fake.dra.net/hello": domain fake.dra.net belongs to plugin fake ([1-9][0-9]* device(s))' \
            '    annotate REJECTED attribute "gce.dra.net/machineType": domain gce.dra.net is not plugin fake-intruder' \
            '    domains fake.dra.net' \
            '    annotate published fake.dra.net/hello on [1-9][0-9]* device(s)' \
            '    discover published fake.dra.net/discovered on 1 device(s)' \
            '    reads sysfs class/net/\*/statistics/rx_bytes'; do
  grep -q "^$line" <<<"$out" || { echo "cli: dranetctl plugins lacks: $line"; echo "$out"; exit 1; }
done
# dranetctl snapshot captures the sysfs files the plugins declare they read
# (the fake: class/net/*/statistics/rx_bytes), here from a copy of the A4
# snapshot given two netdev counters; the plugins are loaded, never run.
capture=$(mktemp -d)
cp -a "$(cd "$(dirname "$0")/../.." && pwd)/tests/nodes/a4-highgpu-8g" "$capture/source"
stats=$(readlink -f "$capture/source/sys/class/net/gpu3rdma0")/statistics
mkdir -p "$stats" && echo 4242 >"$stats/rx_bytes" && echo 1 >"$stats/tx_packets"
log=$("$build/bin/dranetctl" snapshot --host-root "$capture/source" --out "$capture/out" \
      --plugin-dir "$plugdir" --allow-non-root-plugin-dir 2>&1)
grep -q '"capturing what a plugin reads" plugin="fake" path="class/net/\*/statistics/rx_bytes"' <<<"$log" ||
  { echo "cli: snapshot did not take the plugin's paths: $log"; exit 1; }
[[ $(cat "$capture/out/sys/class/net/gpu3rdma0/statistics/rx_bytes") == 4242 ]] ||
  { echo "cli: the declared file was not captured"; exit 1; }
[[ ! -e $capture/out/sys/class/net/gpu3rdma0/statistics/tx_packets ]] ||
  { echo "cli: an undeclared file was captured"; exit 1; }
# ... and the fake publishes it from the new snapshot as from the node.
out=$("$build/bin/dranetctl" plugins --plugin-dir "$plugdir" --allow-non-root-plugin-dir --host-root "$capture/out")
grep -q '^    annotate published fake.dra.net/rxBytes on 1 device(s)$' <<<"$out" ||
  { echo "cli: rxBytes not published from the captured snapshot: $out"; exit 1; }
rm -rf "$capture" "$plugdir"
# dranetd runs once and exits cleanly with no usable plugin directory.
log=$("$build/bin/dranetd" --once --publish=false --metrics-address=off --host-root / --plugin-dir /nonexistent/plugins 2>&1)
grep -q 'plugin directory /nonexistent/plugins does not exist' <<<"$log"
grep -q '"flags" --host-root="/" .*--publish="false"' <<<"$log"

# --gpu-slices of `simulate` and `templates`: the listings users have
# (tests/data/resourceslices/), and a clear error, never "0 match", for a
# file that yields no device.
src=$(cd "$(dirname "$0")/../.." && pwd)
ctl="$build/bin/dranetctl"
node="$src/tests/nodes/nd-gb300-v6"
slices="$src/tests/data/resourceslices"
claims="$src/packaging/examples/nd-gb300-v6/claim-templates.yaml"
tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp"; rm -rf "$tmp"' EXIT
fail() { echo "cli: $*" >&2; exit 1; }
# templates with $1 and simulate with $2 (default $1): 4 templates, all 4 allocated.
slices_ok() {
  local file=$1 out
  out=$("$ctl" templates --host-root "$node" --gpu-slices "$file" 2>"$tmp/err") || fail "templates $file: $(cat "$tmp/err")"
  [[ $(grep -c '^kind: ResourceClaimTemplate$' <<<"$out") == 4 ]] || fail "templates $file: $out"
  grep -q 'pciBusID == \\"0019:06:00.0\\"' <<<"$out" || fail "templates $file: no gpu-3: $out"
  file=${2:-$1}
  out=$("$ctl" simulate --host-root "$node" -f "$claims" --gpu-slices "$file" 2>"$tmp/err") ||
    fail "simulate $file: rc=$? $out $(cat "$tmp/err")"
  [[ $(grep -c ': allocated$' <<<"$out") == 4 ]] || fail "simulate $file: $out"
}
# kubectl get resourceslices -o yaml / -o json of two nodes, dranet's slices included.
slices_ok "$slices/kubectl-get-resourceslices.yaml"
grep -q 'using 4 devices, skipped 8 dra.net devices .* and 4 devices of other nodes' "$tmp/err" || fail "$(cat "$tmp/err")"
slices_ok "$slices/kubectl-get-resourceslices.json"
# DRANET's own example (kind: List), through a pipe.
slices_ok <(cat "$slices/dranet-aks-gb300-gpu.yaml") <(cat "$slices/dranet-aks-gb300-gpu.yaml")
# Multi-document YAML: a comment, an empty document, the packaged example.
{ echo '# GPU slices'; echo '---'; echo '---'; cat "$src/packaging/examples/nd-gb300-v6/gpu-resourceslices.yaml"; echo '---'; } >"$tmp/multi.yaml"
slices_ok "$tmp/multi.yaml"
# Templates for 1.32/1.33 control planes: v1beta1 requests without `exactly`,
# v1beta2 with it; simulate reads them back and allocates all 4.
for version in v1beta1 v1beta2; do
  "$ctl" templates --host-root "$node" --gpu-slices "$slices/kubectl-get-resourceslices.yaml" --api-version $version \
    >"$tmp/$version.yaml" 2>"$tmp/err" || fail "templates --api-version $version: $(cat "$tmp/err")"
  [[ $(grep -c "^apiVersion: resource.k8s.io/$version\$" "$tmp/$version.yaml") == 4 ]] || fail "$(cat "$tmp/$version.yaml")"
  exactly=$(grep -c 'exactly:' "$tmp/$version.yaml" || true)
  [[ $version == v1beta1 && $exactly == 0 || $version == v1beta2 && $exactly == 8 ]] || fail "$version: $exactly exactly"
  out=$("$ctl" simulate --host-root "$node" -f "$tmp/$version.yaml" --gpu-slices "$slices/kubectl-get-resourceslices.yaml" 2>&1) ||
    fail "simulate of $version templates: $out"
  [[ $(grep -c ': allocated$' <<<"$out") == 4 ]] || fail "simulate of $version templates: $out"
done
"$ctl" templates --host-root "$node" --gpu-slices "$slices/kubectl-get-resourceslices.yaml" --api-version v1alpha3 \
  >/dev/null 2>"$tmp/err" && fail "--api-version v1alpha3 accepted"
grep -q 'v1alpha3' "$tmp/err" || fail "$(cat "$tmp/err")"
# Slices of two nodes, neither of them this one.
"$ctl" templates --host-root "$node" --node-name other-node --gpu-slices "$slices/kubectl-get-resourceslices.yaml" \
  >/dev/null 2>"$tmp/err" && fail "two other nodes accepted"
grep -q 'slices of 2 nodes (aks-gpu-45139532-vmss000081, aks-gpu-45139532-vmss000082) but none of this node (other-node)' \
  "$tmp/err" || fail "$(cat "$tmp/err")"

# FILE and the one-line message it must give, from both subcommands.
: >"$tmp/empty.yaml"
printf '# only a comment\n---\n' >"$tmp/comments.yaml"
printf 'apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: ""\n' >"$tmp/empty-list.yaml"
printf '{\n    "apiVersion": "v1",\n    "items": [],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n' >"$tmp/empty-list.json"
printf 'kind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: gpu.nvidia.com, pool: {name: n}, devices: []}\n' >"$tmp/no-devices.yaml"
printf 'kind: ResourceSlice\nspec: {driver: gpu.nvidia.com\n' >"$tmp/broken.yaml"
# The first item of the listing: dranet's own slice.
awk '/^- apiVersion/{n++} n==1' "$slices/kubectl-get-resourceslices.yaml" >"$tmp/item.txt"
{ echo 'apiVersion: v1'; echo 'items:'; cat "$tmp/item.txt"; echo 'kind: List'; echo 'metadata:'; echo '  resourceVersion: ""'; } >"$tmp/dranet-only.yaml"
mkdir "$tmp/dir" "$tmp/locked"
cp "$slices/dranet-aks-gb300-gpu.yaml" "$tmp/locked/unreadable.yaml"
chmod 000 "$tmp/locked/unreadable.yaml"
cases=(
  "$tmp/empty.yaml|no ResourceSlice objects in it (empty file)"
  "$tmp/comments.yaml|no ResourceSlice objects in it (no YAML documents, only comments)"
  "$tmp/empty-list.yaml|no ResourceSlice objects in it (an empty list)"
  "$tmp/empty-list.json|no ResourceSlice objects in it (an empty list)"
  "$claims|no ResourceSlice objects in it (found ResourceClaimTemplate 1nic-aligned, ResourceClaimTemplate 2nic-aligned, ResourceClaimTemplate 1nic-unaligned and 1 more)"
  "$tmp/no-devices.yaml|1 ResourceSlice object but no devices in them"
  "$tmp/dranet-only.yaml|only dra.net devices in it (4)"
  "$tmp/broken.yaml|invalid YAML/JSON at line 3, column 1"
  "$tmp/missing.yaml|cannot read: No such file or directory"
  "$tmp/dir|cannot read: Is a directory"
)
# root reads any file: as root, the permission case runs as nobody (when
# nobody can run dranetctl from this build tree at all).
as=()
if [[ $(id -u) == 0 ]]; then
  as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  chmod 711 "$tmp" "$tmp/locked"
  # The source tree may sit below a directory only root may enter (CI's copy):
  # what nobody reads besides the locked file lies in $tmp.
  cp "$claims" "$tmp/claims.yaml"
  chmod 644 "$tmp/claims.yaml"
  # The node too: a --host-root nobody cannot read is refused before the
  # --gpu-slices file is looked at.
  cp -a "$node" "$tmp/node"
  chmod -R a+rX "$tmp/node"
  "${as[@]}" "$ctl" version >/dev/null 2>&1 || as=(skip)
fi
[[ ${as[0]:-} != skip ]] && cases+=("$tmp/locked/unreadable.yaml|cannot read: Permission denied")
for c in "${cases[@]}"; do
  file=${c%%|*} want="dranetctl: --gpu-slices $file: ${c#*|}"
  run=() templates=$claims root=$node
  [[ $file == */unreadable.yaml ]] && run=("${as[@]}") templates=$tmp/claims.yaml root=$tmp/node
  for cmd in templates "simulate -f $templates"; do
    rc=0
    # shellcheck disable=SC2086
    out=$(${run[@]+"${run[@]}"} "$ctl" $cmd --host-root "$root" --gpu-slices "$file" 2>"$tmp/err") || rc=$?
    [[ $rc == 1 ]] || fail "$cmd --gpu-slices $file: rc=$rc, want 1"
    [[ -z $out ]] || fail "$cmd --gpu-slices $file printed: $out"
    grep -qF -- "$want" "$tmp/err" || fail "$cmd --gpu-slices $file: want '$want', got: $(cat "$tmp/err")"
  done
done

# inspect shows each device's health as dranetd judges it: a port DOWN in a copy of the
# snapshot makes its device Unhealthy and says why; the others stay Healthy.
cp -a "$node" "$tmp/health-node"
out=$("$ctl" inspect --host-root "$tmp/health-node") || fail "inspect (health)"
grep -q '^DEVICE .* HEALTH$' <<<"$out" || fail "inspect: no HEALTH column: $out"
[[ $(grep -c '  health: Healthy$' <<<"$out") -ge 1 ]] || fail "inspect: no healthy device: $out"
! grep -q 'Unhealthy' <<<"$out" || fail "inspect: an unhealthy device in the snapshot as recorded: $out"
echo "1: DOWN" >"$tmp/health-node/sys/class/infiniband/mlx5_0/ports/1/state"
out=$("$ctl" inspect --host-root "$tmp/health-node") || fail "inspect (port down)"
grep -q '  health: Unhealthy (mlx5_0 port 1 is DOWN)$' <<<"$out" || fail "inspect: mlx5_0's port DOWN not shown: $out"
[[ $(grep -c 'Unhealthy' <<<"$out") -eq 2 ]] || fail "inspect: want mlx5_0 alone Unhealthy (row and detail): $out"

# --feature-gates as dranetd takes it: DRAListTypeAttributes=true shows numaNode in list form.
out=$("$ctl" inspect --host-root "$node" -o json) || fail "inspect -o json"
grep -qF '"resource.kubernetes.io/numaNode":{"int":1}' <<<"$out" || fail "inspect: numaNode not an int: $out"
out=$("$ctl" inspect --host-root "$node" -o json --feature-gates=DRAListTypeAttributes=true) ||
  fail "inspect --feature-gates=DRAListTypeAttributes=true"
grep -qF '"resource.kubernetes.io/numaNode":{"ints":[1]}' <<<"$out" || fail "inspect: numaNode not a list: $out"
grep -qF '"dra.net/numaNode":{"int":1}' <<<"$out" || fail "inspect: dra.net/numaNode not an int: $out"
rc=0
"$ctl" inspect --host-root "$node" --feature-gates=NoSuchGate=true >/dev/null 2>"$tmp/err" || rc=$?
[[ $rc == 1 ]] && grep -q 'unrecognized feature gate: NoSuchGate' "$tmp/err" ||
  fail "inspect --feature-gates=NoSuchGate=true: rc=$rc $(cat "$tmp/err")"

# A --host-root that cannot be a node root is a usage error of every
# subcommand that takes one (CLI11's ValidationError code, as for any invalid
# flag value), one line naming the path and why, before anything is read:
# never this machine's devices under this machine's name.
mkfifo "$tmp/fifo"
mkdir "$tmp/empty-root" "$tmp/unreadable-root"
mkdir "$tmp/unreadable-root/sys"
chmod 000 "$tmp/unreadable-root"
host=$(uname -n)
roots=(
  "$tmp/no-such-root|does not exist"
  "$claims|not a directory"
  "$tmp/fifo|not a directory"
  "$tmp/empty-root|empty directory"
)
# root enters any directory: as root, the unreadable case runs as nobody
# (skipped when nobody cannot run dranetctl from this build tree).
[[ ${as[0]:-} != skip ]] && roots+=("$tmp/unreadable-root|cannot be read: Permission denied")
for r in "${roots[@]}"; do
  root=${r%%|*} want="--host-root: ${r%%|*}: ${r#*|}"
  run=()
  [[ $root == */unreadable-root ]] && run=("${as[@]}")
  for cmd in inspect plugins "simulate -f $claims" "templates --gpu-slices $slices/kubectl-get-resourceslices.yaml" \
             "snapshot --out $tmp/snapshot-out" doctor; do
    rc=0
    # shellcheck disable=SC2086
    out=$(${run[@]+"${run[@]}"} "$ctl" $cmd --host-root "$root" 2>"$tmp/err") || rc=$?
    [[ $rc == 105 ]] || fail "$cmd --host-root $root: rc=$rc, want 105: $out $(cat "$tmp/err")"
    [[ -z $out ]] || fail "$cmd --host-root $root printed: $out"
    grep -qxF -- "$want" "$tmp/err" || fail "$cmd --host-root $root: want '$want', got: $(cat "$tmp/err")"
    [[ $root == *"$host"* ]] || ! grep -qwF -- "$host" "$tmp/err" || fail "$cmd --host-root $root names this host"
    [[ ! -e $tmp/snapshot-out ]] || fail "snapshot --host-root $root wrote $tmp/snapshot-out"
  done
done
# "/" is always a root; a node's root that is no snapshot (sys/ only) is one too.
"$ctl" inspect --host-root / -o json >/dev/null 2>"$tmp/err" || fail "inspect --host-root /: $(cat "$tmp/err")"
mkdir -p "$tmp/plain-root/sys/class/net"
out=$("$ctl" inspect --host-root "$tmp/plain-root" --node-name plain 2>"$tmp/err") ||
  fail "inspect --host-root of a plain node root: $(cat "$tmp/err")"
grep -q '^node plain: ' <<<"$out" || fail "inspect --host-root of a plain node root: $out"
echo "cli: ok"
