#!/usr/bin/env python3
"""Every example ResourceClaimTemplate under packaging/examples/<node>/ allocates on the
node snapshot tests/nodes/<node> (with the example's GPU slices), per `dranetctl simulate`.
A directory without claim-templates.yaml holds a feature's templates (shared/: the
cluster_share suite applies them on the real node).

  examples_test.py --source REPO --dranetctl PATH --nodes REPO/tests/nodes
"""
import argparse
import os
import re
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True)
    p.add_argument("--dranetctl", required=True)
    p.add_argument("--nodes", required=True)
    args = p.parse_args()
    examples = os.path.join(args.source, "packaging", "examples")
    failures = []
    nodes = sorted(os.listdir(examples))
    for want in ("nd-gb300-v6", "nd-mi300x-v5", "a4-highgpu-8g", "aws-p4d", "oci-gb200", "oci-h100", "alibaba-gn8is"):
        if want not in nodes:
            failures.append("packaging/examples/%s is missing" % want)
    for node in nodes:
        templates = os.path.join(examples, node, "claim-templates.yaml")
        if not os.path.exists(templates):
            continue  # a feature's templates (shared/), not a node type's
        snapshot = os.path.join(args.nodes, node)
        if not os.path.isdir(snapshot):
            failures.append("%s: no node snapshot %s" % (node, snapshot))
            continue
        names = re.findall(r"^kind: ResourceClaimTemplate\nmetadata:\n  name: (\S+)", open(templates).read(), re.M)
        cmd = [args.dranetctl, "simulate", "--host-root", snapshot, "-f", templates,
               "--gpu-slices", os.path.join(examples, node, "gpu-resourceslices.yaml")]
        if node.startswith("nd-"):
            cmd.append("--skip-ipoib")  # as the azure overlay runs dranetd (--move-ib-interfaces=false)
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        allocated = re.findall(r"^template (\S+): allocated$", out.stdout, re.M)
        print("%s: %d templates, allocated: %s" % (node, len(names), ", ".join(allocated)))
        if out.returncode != 0 or sorted(allocated) != sorted(names) or not names:
            failures.append("%s: dranetctl simulate rc=%d, templates %s, allocated %s\n%s%s" % (
                node, out.returncode, names, allocated, out.stdout, out.stderr))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
