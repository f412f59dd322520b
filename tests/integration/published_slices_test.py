#!/usr/bin/env python3
"""Golden attributes: every device of DRANET's published ResourceSlice for a node type is
published by `dranetctl inspect` on that node's snapshot, with every attribute DRANET gave it
and the same value (cloud plugins included, from the snapshot's recorded metadata). Values
the publisher redacted ("redacted") must be present with any value. Attributes we add beyond
DRANET's are allowed (docs/migrating-from-dranet.md lists them).

  published_slices_test.py DRANETCTL NODES_DIR DATA_DIR
"""
import json
import os
import subprocess
import sys

# Published slice (tests/data/resourceslices, JSON copies of DRANET's examples) -> snapshot.
CASES = [("dranet-eks-p4d.json", "aws-p4d"), ("dranet-oke-gb200.json", "oci-gb200")]


def main():
    dranetctl, nodes, data = sys.argv[1:4]
    failures = []
    for published_file, node in CASES:
        published = json.load(open(os.path.join(data, published_file)))
        out = subprocess.run([dranetctl, "inspect", "--host-root", os.path.join(nodes, node), "-o", "json"],
                             capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            failures.append("%s: dranetctl inspect rc=%d %s" % (node, out.returncode, out.stderr))
            continue
        ours = {d["name"]: d.get("attributes", {}) for s in json.loads(out.stdout) for d in s["spec"]["devices"]}
        checked = 0
        for device in published["devices"]:
            mine = ours.get(device["name"])
            if mine is None:
                failures.append("%s: %s published by DRANET, not by us" % (node, device["name"]))
                continue
            for name, value in device["attributes"].items():
                checked += 1
                if value == {"string": "redacted"}:
                    if name not in mine:
                        failures.append("%s: %s lacks %s (DRANET published it, redacted)" % (node, device["name"], name))
                elif mine.get(name) != value:
                    failures.append("%s: %s %s: DRANET %s, ours %s" % (node, device["name"], name, value, mine.get(name)))
        print("%s: %d devices, %d attributes of %s checked" % (node, len(published["devices"]), checked,
                                                            published["source"]))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
