#!/usr/bin/env bash
# The binaries' build contract: versions, default plugin directory found from
# the build tree, a clear one-line error for a missing plugin directory.
set -euo pipefail
build=$1
"$build/bin/dranetd" --version | grep -Eq '^dranetd [0-9]+\.[0-9]+\.[0-9]+ \(driver dra.net, plugin ABI 1\.2\)$'
"$build/bin/dranetctl" version | grep -Eq '^dranetctl [0-9]+\.[0-9]+\.[0-9]+ \(driver dra.net, plugin ABI 1\.2\)$'
# Default plugin directory: <exe>/../lib/dranet/plugins in the build tree.
help=$("$build/bin/dranetctl" plugins --help)
grep -q "default: $build/lib/dranet/plugins" <<<"$help"
out=$("$build/bin/dranetctl" plugins --plugin-dir /nonexistent/plugins)
grep -q 'rejected .*plugin directory /nonexistent/plugins does not exist' <<<"$out"
# dranetd runs once and exits cleanly with no usable plugin directory.
log=$("$build/bin/dranetd" --once --publish=false --metrics-address=off --host-root / --plugin-dir /nonexistent/plugins 2>&1)
grep -q 'plugin directory /nonexistent/plugins does not exist' <<<"$log"
grep -q '"flags" --host-root="/" .*--publish="false"' <<<"$log"
echo "cli: ok"
