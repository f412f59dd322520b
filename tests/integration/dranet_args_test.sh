#!/usr/bin/env bash
# dranetd takes the container args of DRANET's own install.yaml verbatim
# (the program name first, klog's --v, --hostname-override with the
# $(NODE_NAME) kubelet expands) and every DRANET flag in both spellings.
#   dranet_args_test.sh BUILD_DIR INSTALL_YAML NODE_SNAPSHOT
set -euo pipefail
build=$1 manifest=$2 node=$3
dranetd="$build/bin/dranetd"
# The dranet container's args, one per line, as kubelet hands them over.
mapfile -t args < <(awk '/^ *args:/ {inside = 1; next}
                         inside && /^ *- / {sub(/^ *- /, ""); print; next}
                         inside {exit}' "$manifest")
[[ ${#args[@]} -ge 3 && ${args[0]} == /dranet ]] || { echo "no container args in $manifest: ${args[*]}"; exit 1; }
args=("${args[@]//\$(NODE_NAME)/node-from-downward-api}")
offline=(--once --publish=false --kubelet-plugin=false --nri=false --metrics-address=off --host-root "$node")
log=$("$dranetd" "${args[@]}" "${offline[@]}" 2>&1) || { echo "$log"; exit 1; }
grep -q -- '--node-name="node-from-downward-api"' <<<"$log" || { echo "$log"; exit 1; }
grep -q -- '--v="4"' <<<"$log" || { echo "$log"; exit 1; }

# DRANET's chart, with its documented values uncommented, renders flags with
# an empty value ("--feature-gates=", "--webhook-url="): Go takes them as
# empty, so must dranetd, without swallowing the flag after them.
log=$("$dranetd" --feature-gates= --webhook-url= --v=3 "${offline[@]}" 2>&1) || { echo "$log"; exit 1; }
grep -q -- '--feature-gates="" ' <<<"$log" || { echo "$log"; exit 1; }
grep -q -- '--webhook-url="" ' <<<"$log" || { echo "$log"; exit 1; }
grep -q -- '--v="3"' <<<"$log" || { echo "$log"; exit 1; }
# Empty where Go refuses it too (a number, a boolean): refused, never read as 0 or false.
for bad in --inventory-poll-burst= --publish=; do
  if out=$("$dranetd" "$bad" "${offline[@]}" 2>&1); then echo "accepted $bad: $out"; exit 1; fi
done

# Every DRANET flag (cmd/dranet/app.go), --flag=value and --flag value.
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
dranet_flags=(--bind-address=off --hostname-override=n1 --db-path="$state/dranet.db"
  --inventory-min-poll-interval=2s --inventory-max-poll-interval 1m --inventory-poll-burst 5
  --move-ib-interfaces=false --cloud-provider-hint NONE --profile-provider=none --webhook-url ""
  --kubelet-root-dir "$state/kubelet" --filter "" --feature-gates "DRAListTypeAttributes=false" --v 2)
log=$("$dranetd" "${dranet_flags[@]}" --once --publish=false --kubelet-plugin=false --nri=false --host-root "$node" 2>&1) ||
  { echo "$log"; exit 1; }
grep -q '"cloud provider hint" hint="NONE" plugin="none"' <<<"$log" || { echo "$log"; exit 1; }
grep -q "checkpointed in its directory\" dir=\"$state\"" <<<"$log" || { echo "$log"; exit 1; }
# A hinted cloud plugin runs without detecting (its DMI would say no);
# without the hint it detects and stays out, without a request.
log=$("$dranetd" --cloud-provider-hint=aws --v=2 "${offline[@]}" 2>&1) || { echo "$log"; exit 1; }
grep -q 'cloud detection skipped (detect=skip, --cloud-provider-hint): running as AWS" plugin="aws"' <<<"$log" ||
  { echo "$log"; exit 1; }
grep -q '"plugin loaded" .* name="aws"' <<<"$log" || { echo "$log"; exit 1; }
log=$("$dranetd" --v=4 "${offline[@]}" 2>&1) || { echo "$log"; exit 1; }
grep -q '"plugin not-applicable" .* name="aws" .*reason="not AWS (DMI' <<<"$log" || { echo "$log"; exit 1; }
! grep -q 'AWS IMDS' <<<"$log" || { echo "$log"; exit 1; }
# DRAListTypeAttributes is implemented: accepted, with a line saying the control plane needs it too.
log=$("$dranetd" --feature-gates=DRAListTypeAttributes=true "${offline[@]}" 2>&1) || { echo "$log"; exit 1; }
grep -q 'control plane needs the gate DRAListTypeAttributes too' <<<"$log" || { echo "$log"; exit 1; }
log=$("$dranetd" --feature-gates=PersistentResourceSliceAttributes=true "${offline[@]}" 2>&1) || { echo "$log"; exit 1; }
grep -q 'feature gate PersistentResourceSliceAttributes: an allocated device keeps publishing' <<<"$log" ||
  { echo "$log"; exit 1; }
# Refused with one clear line, never silently ignored.
for bad in "--inventory-max-poll-interval=5x" "--feature-gates=NoSuchGate=true" "--cloud-provider-hint=nimbus" \
           "--feature-gates=PersistentResourceSliceAttributes=maybe"; do
  if out=$("$dranetd" "$bad" "${offline[@]}" 2>&1); then echo "accepted $bad: $out"; exit 1; fi
  [[ $(grep -c '^E' <<<"$out") -ge 1 ]] || { echo "no error line for $bad: $out"; exit 1; }
done
# A --host-root that is not a node root (missing, a file, empty) is refused
# before anything is read, with one line naming it: never an empty node on
# this machine's kernel and host name.
empty_root=$(mktemp -d)
trap 'rm -rf "$state" "$empty_root"' EXIT
for bad in "/nonexistent|does not exist" "$manifest|not a directory" "$empty_root|empty directory"; do
  root=${bad%%|*} rc=0
  out=$("$dranetd" --once --publish=false --kubelet-plugin=false --nri=false --metrics-address=off \
        --host-root="$root" 2>&1) || rc=$?
  [[ $rc == 2 ]] || { echo "--host-root=$root: rc=$rc, want 2: $out"; exit 1; }
  grep -q "^E.*--host-root $root: ${bad#*|}" <<<"$out" || { echo "no error line for --host-root=$root: $out"; exit 1; }
  ! grep -q '"starting dranetd"' <<<"$out" || { echo "--host-root=$root: started: $out"; exit 1; }
done
echo "dranet args: ok"
