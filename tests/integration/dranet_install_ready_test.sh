#!/usr/bin/env bash
# dranetd, started with the container args of DRANET's install.yaml verbatim
# and the environment kubelet gives that container, reaches Ready.
#   dranet_install_ready_test.sh BUILD_DIR INSTALL_YAML
#
# Nothing on dranetd's command line but the manifest's args, so every
# default a DRANET user relies on is the one in use:
#   - the in-cluster API configuration: https://$KUBERNETES_SERVICE_HOST:
#     $KUBERNETES_SERVICE_PORT, CA and bearer token from
#     /var/run/secrets/kubernetes.io/serviceaccount/{ca.crt,token,namespace};
#   - kubelet's root /var/lib/kubelet (plugins_registry, plugins/dra.net);
#   - the state directory /var/run/dranet, the NRI socket /var/run/nri/nri.sock;
#   - /metrics, /healthz and /readyz on :9177 (DRANET's startup and readiness
#     probes: GET /healthz :9177).
# Around it, real components where a machine without a cluster allows: the
# fake API server (requiring the token) behind a real TLS endpoint (socat,
# with a CA and a server certificate made here by openssl), the fake kubelet
# (plugin registration over the real sockets), the fake NRI runtime.
# Ready means: /readyz and /healthz answer 200, kubelet saw dra.net register,
# the NRI runtime saw the plugin, and the API server holds this node's
# ResourceSlice, written over TLS with the token. Then it serves a claim: a
# ResourceClaim allocated to a device of that slice is prepared over the
# kubelet socket (read from the API server over TLS) and checkpointed, held
# through an idle window, unprepared. Then SIGTERM: exit 0.
#
# Isolation: the whole test runs in fresh network, mount and PID namespaces
# (unshare), so port 9177 and the default paths cannot meet anything on the
# machine or a test running beside it, no process outlives the test (the
# kernel ends the PID namespace with it), and the host's filesystem is not
# changed. Inside, with mounts private:
#   - /var/run (a link to /run on Debian: the directory it resolves to) is
#     a new tmpfs holding the service-account volume, /var/run/dranet and
#     /var/run/nri, as the pod's volumes would;
#   - /sys is a sysfs mounted from the new network namespace, so the
#     netdevs dranetd discovers there are the namespace's own (lo), as a
#     hostNetwork pod sees its node's;
#   - /var/lib/kubelet is a new tmpfs. When the machine has no
#     /var/lib/kubelet to mount it on, /var/lib is first covered by an
#     overlay whose lower layer is /var/lib itself and whose upper layer is
#     a scratch tmpfs: everything under /var/lib stays visible and the new
#     kubelet directory exists only in this mount namespace.
# A machine that cannot do this (not root, no unshare, no overlayfs, no
# socat, openssl or curl, no PCI network device) skips the test (exit 77)
# with the reason.
# The fake NRI runtime runs with --hold: it stays connected, as containerd
# does, so that /readyz can report nri-connected.
set -euo pipefail

readonly skip=77 # SKIP_RETURN_CODE of this test
readonly node=dranet-worker-1
readonly tls_port=6443
readonly ready_deadline_s=60 stop_deadline_s=20

if [[ ${1:-} != --inside ]]; then
  build=$1 manifest=$2
  for tool in unshare socat openssl curl mount ip; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (scripts/setup.sh installs it)"; exit $skip; }
  done
  [[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root (network and mount namespaces, mounts)"; exit $skip; }
  unshare --net --mount --pid --fork --propagation private true 2>/dev/null ||
    { echo "SKIP: cannot create network, mount and PID namespaces here"; exit $skip; }
  for bin in "$build/bin/dranetd" "$build/tests/bin/fake-apiserver" "$build/tests/bin/fake-kubelet" \
             "$build/tests/bin/fake-nri-runtime"; do
    [[ -x $bin ]] || { echo "missing $bin: build it first"; exit 1; }
  done
  work=$(mktemp -d)
  # DRANET_MEMORY_CGROUP=1: dranetd runs in a memory cgroup of its own (the
  # v1 memory hierarchy, as on this project's machines), removed at the end.
  export DRANET_MEMCG_NAME=dranet-install-ready.$$
  trap 'rm -rf "$work"; rmdir "/sys/fs/cgroup/memory/$DRANET_MEMCG_NAME" 2>/dev/null || true' EXIT
  started=$SECONDS
  rc=0
  unshare --net --mount --pid --fork --mount-proc --propagation private --kill-child \
    "$0" --inside "$(realpath "$build")" "$(realpath "$manifest")" "$work" || rc=$?
  echo "runtime: $((SECONDS - started)) s"
  exit "$rc"
fi

# ---- Inside the namespaces: PID 1 of a new PID namespace. ----
build=$2 manifest=$3 work=$4
logs=$work/logs
mkdir -p "$logs" "$work/pki" "$work/home" "$work/scratch"
pids=()

dump_logs() {
  local f
  for f in "$logs"/*; do
    [[ -f $f ]] || continue
    echo "===== ${f##*/} ====="
    cat "$f"
  done
}
fail() {
  echo "FAIL: $*"
  dump_logs
  exit 1
}
skip_inside() {
  echo "SKIP: $*"
  exit $skip
}
# wait_for DESCRIPTION SECONDS COMMAND...: polls COMMAND every 0.1 s.
wait_for() {
  local what=$1 limit=$2 deadline=$((SECONDS + $2))
  shift 2
  until "$@"; do
    ((SECONDS < deadline)) || fail "$what: not within $limit s"
    sleep 0.1
  done
}
stop_all() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
}
trap stop_all EXIT

# -- The node's filesystem as the pod sees it. --
ip link set lo up
mount -t tmpfs -o mode=0755 tmpfs "$(readlink -f /var/run)"
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs "$work/scratch"
if [[ ! -d /var/lib/kubelet ]]; then
  mkdir -p "$work/scratch/upper" "$work/scratch/overlay-work"
  mount -t overlay overlay \
    -o "lowerdir=/var/lib,upperdir=$work/scratch/upper,workdir=$work/scratch/overlay-work" /var/lib ||
    skip_inside "cannot mount an overlay on /var/lib to add /var/lib/kubelet"
  mkdir /var/lib/kubelet
fi
mount -t tmpfs -o mode=0750 tmpfs /var/lib/kubelet
sa=/var/run/secrets/kubernetes.io/serviceaccount
mkdir -p "$sa" /var/run/dranet /var/run/nri

# -- A CA, the API server's certificate, the service-account volume. --
pki=$work/pki
openssl_quiet() { openssl "$@" 2>>"$logs/openssl.log" >&2 || fail "openssl $1"; }
openssl_quiet req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=dranet-test-ca -keyout "$pki/ca.key" -out "$pki/ca.crt"
openssl_quiet req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -subj /CN=kube-apiserver -keyout "$pki/server.key" -out "$pki/server.csr"
printf '%s\n' subjectAltName=IP:127.0.0.1 basicConstraints=CA:FALSE extendedKeyUsage=serverAuth >"$pki/server.ext"
openssl_quiet x509 -req -in "$pki/server.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -set_serial 2 -days 1 \
  -extfile "$pki/server.ext" -out "$pki/server.crt"
token=$(openssl rand -hex 24)
cp "$pki/ca.crt" "$sa/ca.crt"
printf '%s' "$token" >"$sa/token"
printf '%s' kube-system >"$sa/namespace"

# -- The API server: the fake, requiring the token, behind TLS. --
"$build/tests/bin/fake-apiserver" --port 0 --token "$token" --node "$node" >"$logs/fake-apiserver.log" 2>&1 &
pids+=($!)
api_port() { sed -n 's|^listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$logs/fake-apiserver.log" 2>/dev/null; }
api_listening() { [[ -n $(api_port) ]]; }
wait_for "fake API server listening" 10 api_listening
plain_port=$(api_port)
socat -d -d "OPENSSL-LISTEN:$tls_port,bind=127.0.0.1,reuseaddr,fork,cert=$pki/server.crt,key=$pki/server.key,verify=0" \
  "TCP:127.0.0.1:$plain_port" 2>"$logs/socat.log" &
pids+=($!)
tls_up() { curl -sS -o /dev/null --cacert "$pki/ca.crt" "https://127.0.0.1:$tls_port/version" 2>/dev/null; }
wait_for "TLS endpoint up" 10 tls_up
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$pki/ca.crt" "https://127.0.0.1:$tls_port/api/v1/nodes/$node")
[[ $code == 401 ]] || fail "the API server answers $code, not 401, to a request without the token"

# -- kubelet's side: plugin registration, and the NRI runtime. --
"$build/tests/bin/fake-kubelet" --registry-dir /var/lib/kubelet/plugins_registry --driver dra.net \
  --wait-ms $((ready_deadline_s * 1000)) >"$logs/fake-kubelet.log" 2>&1 &
kubelet_pid=$!
pids+=("$kubelet_pid")
"$build/tests/bin/fake-nri-runtime" --socket /var/run/nri/nri.sock --hold \
  --accept-timeout-ms $((ready_deadline_s * 1000)) >"$logs/fake-nri-runtime.log" 2>&1 &
pids+=($!)
wait_for "NRI runtime listening" 10 test -S /var/run/nri/nri.sock

tls_before=$(grep -c 'SSL connection using' "$logs/socat.log" || true)

# -- dranetd: the manifest's args, the container's environment, nothing else. --
# The dranet container's args, one per line, as in the manifest.
mapfile -t args < <(awk '/^ *args:/ {inside = 1; next}
                         inside && /^ *- / {sub(/^ *- /, ""); print; next}
                         inside {exit}' "$manifest")
[[ ${#args[@]} -ge 3 && ${args[0]} == /dranet ]] || fail "no container args in $manifest: ${args[*]}"
grep -q 'fieldPath: spec.nodeName' "$manifest" || fail "$manifest no longer sets NODE_NAME from spec.nodeName"
# kubelet expands $(NODE_NAME) from the container's env (downward API: spec.nodeName).
args=("${args[@]//\$(NODE_NAME)/$node}")
echo "dranetd ${args[*]}" >"$logs/dranetd.log"
# With DRANET_MEMORY_CGROUP=1, dranetd starts inside a memory cgroup of its
# own, after the page cache is dropped: what the cgroup is then charged for
# (its anonymous pages and the file pages it reads in, libraries included)
# is what a container's would be, printed at idle below.
memcg=""
launch=()
if [[ ${DRANET_MEMORY_CGROUP:-0} == 1 ]]; then
  mkdir -p "$work/memcg"
  mount -t cgroup -o memory memory "$work/memcg" || fail "DRANET_MEMORY_CGROUP=1: no v1 memory cgroup hierarchy here"
  memcg=$work/memcg/$DRANET_MEMCG_NAME
  mkdir "$memcg"
  # Private copies of dranetd's binary, plugins and every shared library they
  # load, bound over the originals in this mount namespace: as in a container
  # with an image of its own, each page dranetd touches is read for it and
  # charged to its cgroup (pages of libc or libcrypto that other processes on
  # this machine map would otherwise stay charged to them). $work is not tmpfs
  # (mktemp -d under TMPDIR): the copies leave the page cache below.
  [[ $(stat -f -c %T "$work") != tmpfs ]] || fail "DRANET_MEMORY_CGROUP=1: $work is tmpfs; set TMPDIR to a disk"
  mkdir "$work/image"
  while read -r file; do
    copy=$work/image/$(printf %s "$file" | tr / _)
    cp "$file" "$copy"
    mount --bind "$copy" "$file"
  done < <({ realpath "$build/bin/dranetd" "$build"/lib/dranet/plugins/*.so
             ldd "$build/bin/dranetd" "$build"/lib/dranet/plugins/*.so |
               awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && NF == 2 {print $1}' | xargs -r realpath; } | sort -u)
  sync
  echo 3 >/proc/sys/vm/drop_caches
  launch=(/bin/sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$memcg")
fi
# The environment of dranetd's container: the image's ENV (packaging/images/
# Dockerfile.base) and what kubelet sets.
env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$work/home" HOSTNAME=dranet-pod \
  GNUTLS_NO_IMPLICIT_INIT=1 \
  NODE_NAME="$node" KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$tls_port \
  KUBERNETES_SERVICE_PORT_HTTPS=$tls_port ${launch[@]+"${launch[@]}"} "$build/bin/dranetd" "${args[@]}" \
  >>"$logs/dranetd.log" 2>&1 &
dranetd=$!
dranetd_started=$SECONDS
pids=("$dranetd" "${pids[@]}")

# -- Ready. --
probe() { [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:9177/$1") == 200 ]]; }
alive() { kill -0 "$dranetd" 2>/dev/null || fail "dranetd exited before it was ready"; }
ready() { alive && probe readyz; }
wait_for "dranetd ready (GET :9177/readyz 200)" $ready_deadline_s ready
echo "ready $((SECONDS - dranetd_started)) s after start"
probe healthz || fail "GET :9177/healthz is not 200 while ready"
curl -sf http://127.0.0.1:9177/readyz >"$logs/readyz.txt" || fail "GET :9177/readyz failed"
for condition in started first-publish kubelet-registered nri-connected; do
  grep -qx "\[+\]$condition ok" "$logs/readyz.txt" || fail "/readyz does not report $condition ok"
done
curl -sf http://127.0.0.1:9177/metrics >"$logs/metrics.txt" || fail "GET :9177/metrics failed"

# kubelet registered the driver (fake-kubelet exits once it has).
wait "$kubelet_pid" || fail "fake kubelet: dra.net did not register"
grep -q '"registered":"dra.net","endpoint":"/var/lib/kubelet/plugins/dra.net/' "$logs/fake-kubelet.log" ||
  fail "fake kubelet did not see dra.net register with an endpoint under /var/lib/kubelet/plugins/dra.net"
grep -q '^plugin registered name=.*dra.net' "$logs/fake-nri-runtime.log" ||
  fail "the NRI runtime did not see the plugin on /var/run/nri/nri.sock"
grep -q 'dir="/var/run/dranet/claims"' "$logs/dranetd.log" ||
  fail "dranetd does not keep its state in /var/run/dranet"
heap_returned() { grep -q 'start-up heap returned' "$logs/dranetd.log"; }
wait_for "dranetd giving its free start-up heap back once Ready" 10 heap_returned
grep -m1 'start-up heap returned' "$logs/dranetd.log"

# The API server holds this node's ResourceSlice, written over TLS with the token.
curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$plain_port/apis/resource.k8s.io/v1/resourceslices" \
  >"$logs/resourceslices.json" || fail "cannot list ResourceSlices from the fake API server"
grep -q "\"nodeName\":\"$node\"" "$logs/resourceslices.json" || fail "no ResourceSlice for node $node"
# Owned by the Node, which dranetd read with the same credentials.
grep -q "\"kind\":\"Node\",\"name\":\"$node\"" "$logs/resourceslices.json" ||
  fail "the ResourceSlice has no ownerReference to Node $node"
grep -Eq '^dranet_api_writes_total\{verb="create"\} [1-9]' "$logs/metrics.txt" ||
  fail "dranetd counts no ResourceSlice create"
# dranetd knows only the TLS port: the TLS connections beyond the test's own are its.
(($(grep -c 'SSL connection using' "$logs/socat.log") > tls_before)) || fail "dranetd made no TLS connection"
grep -q -- "--node-name=\"$node\"" "$logs/dranetd.log" || fail "dranetd did not take its node name from the args"
grep -q -- '--kubeconfig=""' "$logs/dranetd.log" || fail "dranetd did not run without a kubeconfig"
! grep -q '^E' "$logs/dranetd.log" || fail "dranetd logged errors"

sleep 2  # past start-up work (first publish, registration)
# With DRANET_PAGE_OUT=1 the kernel reclaims dranetd's file pages now
# (process_madvise MADV_PAGEOUT of each private file mapping): its resident
# file pages at the end are what it touched since (serving the claim below,
# idling), at most 64 KiB around each touched page (fault-around); pages that
# other processes map stay.
if [[ ${DRANET_PAGE_OUT:-0} == 1 ]]; then
  echo "before page-out: $(awk '/^(VmRSS|RssAnon|RssFile):/ {printf "%s %.1f MiB  ", $1, $2 / 1024}' "/proc/$dranetd/status")"
  python3 - "$dranetd" <<'PY' || fail "DRANET_PAGE_OUT=1: dranetd's pages could not be paged out"
import ctypes, os, sys
pid = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
SYS_PROCESS_MADVISE, MADV_PAGEOUT = 440, 21  # x86-64, Linux 5.10+
pidfd, done = os.pidfd_open(pid), 0
for line in open(f"/proc/{pid}/maps"):
    fields = line.split(maxsplit=5)
    if len(fields) < 6 or not fields[5].startswith("/") or fields[1][0] != "r" or fields[1][3] != "p":
        continue
    start, end = (int(x, 16) for x in fields[0].split("-"))
    iov = IoVec(start, end - start)
    if libc.syscall(SYS_PROCESS_MADVISE, pidfd, ctypes.byref(iov), 1, MADV_PAGEOUT, 0) < 0:
        sys.exit(f"process_madvise: {os.strerror(ctypes.get_errno())}")
    done += 1
print(f"paged out {done} file mappings of dranetd")
PY
fi

# -- A claim served: allocated to a device of this machine's slice, prepared over the
# kubelet socket (the claim read from the API server over TLS), checkpointed
# in the state directory; held through the idle window, unprepared after it. --
read -r pool device < <(python3 - "$logs/resourceslices.json" <<'PY'
import json, sys
for slice_ in json.load(open(sys.argv[1]))["items"]:
    for d in slice_["spec"].get("devices", []):
        print(slice_["spec"]["pool"]["name"], d["name"])
        sys.exit(0)
PY
) || true
# Its PCI NICs are the machine's (PCI is not namespaced); one without any
# cannot allocate a claim.
[[ -n ${device:-} ]] || skip_inside "this machine has no network device for dranetd to publish and a claim to use"
claim_json='{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"served","namespace":"ml"},
 "spec":{"devices":{"requests":[{"name":"nic","exactly":{"deviceClassName":"dra.net"}}]}},
 "status":{"allocation":{"devices":{"results":[{"request":"nic","driver":"dra.net","pool":"'"$pool"'","device":"'"$device"'"}]}},
  "reservedFor":[{"resource":"pods","name":"served-0","uid":"pod-served"}]}}'
curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' -d "$claim_json" \
  "http://127.0.0.1:$plain_port/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims" >"$logs/claim.json" ||
  fail "cannot create the ResourceClaim"
claim_uid=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["metadata"]["uid"])' "$logs/claim.json")
served_kubelet() {
  "$build/tests/bin/fake-kubelet" --registry-dir /var/lib/kubelet/plugins_registry --driver dra.net \
    --wait-ms 10000 "$@" >>"$logs/fake-kubelet-claims.log" 2>&1
}
served_kubelet --prepare "ml/served/$claim_uid" || fail "the claim was not prepared"
grep -qF "{\"prepared\":\"$claim_uid\",\"error\":\"\",\"devices\":[\"$pool/$device\"]}" \
  "$logs/fake-kubelet-claims.log" || fail "the prepare did not answer with device $pool/$device"
[[ -f /var/run/dranet/claims/$claim_uid.json ]] || fail "no checkpoint file for the prepared claim"
echo "claim served: $device prepared"

# -- Idle: what a Ready dranetd with nothing to do costs. CPU time and
# wakeups (context switches of all its threads) over the window, printed;
# API writes over it must be 0. DRANET_IDLE_SECONDS sets the window
# (default 5; 60 for the README's figure). --
idle_s=${DRANET_IDLE_SECONDS:-5}
api_writes() { curl -sf http://127.0.0.1:9177/metrics | awk '/^dranet_api_writes_total/ {n += $2} END {print n + 0}'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$dranetd/stat"; }
wakeups() { cat /proc/"$dranetd"/task/*/status | awk '/ctxt_switches/ {n += $2} END {print n + 0}'; }
# "<thread name> <context switches>" per thread, summed by name.
wakeups_by_thread() {
  local t
  for t in /proc/"$dranetd"/task/*; do
    echo "$(tr ' ' _ <"$t/comm") $(awk '/ctxt_switches/ {n += $2} END {print n + 0}' "$t/status")"
  done | awk '{n[$1] += $2} END {for (k in n) print k, n[k]}' | sort
}
writes0=$(api_writes) ticks0=$(cpu_ticks) wake0=$(wakeups) threads=$(ls "/proc/$dranetd/task" | wc -l)
wakeups_by_thread >"$work/wake0"
sleep "$idle_s"
writes1=$(api_writes) ticks1=$(cpu_ticks) wake1=$(wakeups)
wakeups_by_thread >"$work/wake1"
hz=$(getconf CLK_TCK)
echo "idle ${idle_s} s: cpu $(( (ticks1 - ticks0) * 1000 / hz )) ms, wakeups $((wake1 - wake0))" \
     "($(( (wake1 - wake0) / idle_s ))/s, $threads threads), api writes $((writes1 - writes0)), load $(cut -d' ' -f1 /proc/loadavg)"
echo "idle wakeups by thread: $(join "$work/wake0" "$work/wake1" | awk '$3 > $2 {printf "%s %d, ", $1, $3 - $2}')"
# Resident memory by mapping (what a container's cgroup is charged for: its
# private pages and the shared library pages it touched), largest first.
awk '/^[0-9a-f]+-[0-9a-f]+ / {name = (NF >= 6 ? $6 : "[anon]"); sub(/.*\//, "", name)}
     /^Rss:/ {rss[name] += $2} /^Private_(Clean|Dirty):/ {priv[name] += $2}
     END {for (n in rss) if (rss[n] >= 512) printf "%d %s %d\n", rss[n], n, priv[n]}' "/proc/$dranetd/smaps" |
  sort -rn | awk '{printf "%s%s %.1f MiB (private %.1f)", (NR > 1 ? ", " : ""), $2, $1 / 1024, $3 / 1024} END {print ""}' |
  sed 's/^/idle resident memory by mapping: /'
curl -sf http://127.0.0.1:9177/metrics | awk '/^dranet_process_anonymous_memory_bytes / {printf "idle anonymous memory (metric): %.1f MiB\n", $2 / 1048576}'
awk '/^(Rss|Pss|Private_Clean|Private_Dirty|Shared_Clean|Shared_Dirty):/ {printf "%s %.1f MiB  ", $1, $2 / 1024} END {print ""}' \
  "/proc/$dranetd/smaps_rollup" | sed 's/^/idle memory: /'
if [[ -n $memcg ]]; then
  # The working set as kubelet computes it (usage less inactive file pages).
  awk -v usage="$(cat "$memcg/memory.usage_in_bytes")" '
    {v[$1] = $2}
    END {printf "idle memory cgroup: usage %.1f MiB, working set %.1f MiB (rss %.1f, cache %.1f of which mapped %.1f, inactive file %.1f)\n",
         usage / 1048576, (usage - v["total_inactive_file"]) / 1048576, v["total_rss"] / 1048576,
         v["total_cache"] / 1048576, v["total_mapped_file"] / 1048576, v["total_inactive_file"] / 1048576}' "$memcg/memory.stat"
fi
((writes1 == writes0)) || fail "dranetd wrote to the API server $((writes1 - writes0)) times while idle"

served_kubelet --unprepare "ml/served/$claim_uid" || fail "the claim was not unprepared"
[[ ! -e /var/run/dranet/claims/$claim_uid.json ]] || fail "the unprepared claim's checkpoint file is still there"

# -- SIGTERM: a clean exit. --
kill -TERM "$dranetd"
stop_deadline=$((SECONDS + stop_deadline_s))
while kill -0 "$dranetd" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$dranetd/stat" 2>/dev/null) != Z ]]; do
  ((SECONDS < stop_deadline)) || fail "dranetd still running $stop_deadline_s s after SIGTERM"
  sleep 0.1
done
rc=0
wait "$dranetd" || rc=$?
[[ $rc -eq 0 ]] || fail "dranetd exited $rc after SIGTERM"
grep -q 'shutting down' "$logs/dranetd.log" || fail "dranetd did not log its shutdown"
[[ ! -e /var/lib/kubelet/plugins_registry/dra.net-reg.sock ]] || fail "dranetd left its registration socket behind"
echo "dranet install.yaml args: ready, stopped cleanly"
