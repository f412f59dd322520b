#!/usr/bin/env bash
# The end-to-end demo with dranetd holding only CAP_NET_ADMIN and
# CAP_SYS_ADMIN (no privileged container), and the daemon's own refusal to
# start, naming the capability, when one of them is missing.
#   least_privilege.sh DEMO DRANETD PLUGIN_DIR SNAPSHOT TEMPLATES GPU_SLICES
# Exit 77 (skipped) unless run as root with setpriv available.
set -euo pipefail
demo=$1 dranetd=$2 plugin_dir=$3 snapshot=$4 templates=$5 gpu_slices=$6
if [[ $(id -u) -ne 0 ]] || ! command -v setpriv >/dev/null; then
  echo "skipped: needs root and setpriv"; exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
# A wrapper the demo starts instead of dranetd: the bounding set leaves root
# with exactly these two capabilities after exec.
cat > "$work/dranetd" <<WRAPPER
#!/bin/sh
exec setpriv --bounding-set=-all,+net_admin,+sys_admin --inh-caps=-all -- "$dranetd" --plugin-dir "$plugin_dir" "\$@"
WRAPPER
chmod 755 "$work/dranetd"
# Check the wrapper really drops everything else.
caps=$(setpriv --bounding-set=-all,+net_admin,+sys_admin --inh-caps=-all -- grep CapEff /proc/self/status | awk '{print $2}')
[[ $caps == 0000000000201000 ]] || { echo "unexpected effective capabilities $caps"; exit 1; }

"$demo" --check --dranetd "$work/dranetd" --plugin-dir "$plugin_dir" --snapshot "$snapshot" \
  --templates "$templates" --gpu-slices "$gpu_slices"

# Without CAP_SYS_ADMIN dranetd refuses to start and says why.
set +e
out=$(setpriv --bounding-set=-all,+net_admin --inh-caps=-all -- "$dranetd" --publish=false \
        --metrics-address=off --host-root "$snapshot" --plugin-dir "$plugin_dir" 2>&1)
rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "dranetd without CAP_SYS_ADMIN exited $rc"; echo "$out"; exit 1; }
grep -q 'missing capability.*capability="CAP_SYS_ADMIN"' <<<"$out" || { echo "$out"; exit 1; }
echo "least privilege: demo passed with CAP_NET_ADMIN+CAP_SYS_ADMIN only; missing CAP_SYS_ADMIN refused clearly"
