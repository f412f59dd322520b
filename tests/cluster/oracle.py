#!/usr/bin/env python3
"""The real kube-scheduler as the oracle of `dranetctl simulate` (oracle_test.sh).

  oracle.py plan  --nodes DIR --examples DIR --install-yaml FILE --work DIR [--extra FILE]...
  oracle.py wait  --work DIR --kubectl KUBECTL [--timeout S]
  oracle.py check --work DIR [--report FILE]

plan: one case per (node snapshot, ResourceClaimTemplate): every snapshot
under --nodes with a sys/ tree, every template of every
--examples/*/claim-templates.yaml and of each --extra file. Each case gets a Node of its own
(oracle-<n>), so that no two claims compete for one node's devices, as in
simulate, where each template is allocated on an empty node. WORK/ then holds:
  cases.json        the cases: node, snapshot, example (the file's label), template, claim
  template-files.txt  LABEL PATH of each file of templates
  classes.yaml      the DeviceClasses both sides use: install.yaml's and the
                    GPU drivers' (simulate --device-classes)
  nodes.yaml        the Nodes, and nodes-status.yaml their allocatable
  gpu-slices.yaml   each node's GPU ResourceSlices: the snapshot's example
                    slices with the node's name and pool
  pods.yaml         per case a ResourceClaim with the template's spec and a Pod
                    bound by nodeSelector to the case's Node
wait: polls until every case's claim is allocated or its pod is reported
not schedulable (PodScheduled False: Unschedulable, or SchedulerError);
writes WORK/claims.json, WORK/pods.json and WORK/slices.json (slices per node
and driver).
check: compares with simulate's output (WORK/simulate/<snapshot>--<example>.txt):
the same driver/device per request, or not allocated on both sides for the
same kind of reason (a CEL runtime error, the claim's device limit, or no
fitting devices). Where a driver publishes several slices for the node (more
than 128 devices), the scheduler's pick among them is not determined (it
walks them in its cache's order): the same number of devices per request is
alike there, counted apart. Prints
one line per difference and a summary; exits 1 on any difference.
"""
import argparse
import copy
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

NAMESPACE = "oracle"
# The GPU drivers' DeviceClasses as their drivers install them; simulate's
# well-known classes are the same (core/simulate/allocator.cpp).
GPU_CLASSES = {
    "gpu.nvidia.com": 'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"',
    "mig.nvidia.com": 'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "mig"',
    "gpu.amd.com": 'device.driver == "gpu.amd.com"',
}


def load_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def dump_all(docs, path):
    with open(path, "w") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False)


def cmd_plan(args):
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    classes = [d for d in load_all(args.install_yaml) if d.get("kind") == "DeviceClass"]
    for d in classes:
        d["metadata"] = {"name": d["metadata"]["name"]}
    classes += [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                 "spec": {"selectors": [{"cel": {"expression": expr}}]}} for name, expr in GPU_CLASSES.items()]
    dump_all(classes, work / "classes.yaml")

    files = [(e.name, e / "claim-templates.yaml") for e in sorted(Path(args.examples).iterdir())
             if (e / "claim-templates.yaml").is_file()]
    files += [(Path(f).stem, Path(f)) for f in args.extra]
    (work / "template-files.txt").write_text("".join(f"{label} {path.resolve()}\n" for label, path in files))
    templates = [(label, t) for label, path in files for t in load_all(path)
                 if t.get("kind") == "ResourceClaimTemplate"]
    snapshots = sorted(p for p in Path(args.nodes).iterdir() if (p / "sys").is_dir())
    cases, nodes, statuses, slices, pods = [], [], [], [], []
    for snapshot in snapshots:
        gpu_file = Path(args.examples) / snapshot.name / "gpu-resourceslices.yaml"
        gpu = [s for s in load_all(gpu_file) if s.get("kind") == "ResourceSlice"] if gpu_file.is_file() else []
        for example, template in templates:
            n = len(cases)
            node = f"oracle-{n}"
            claim = f"case-{n}"
            cases.append({"node": node, "snapshot": snapshot.name, "example": example,
                          "template": template["metadata"]["name"], "claim": claim,
                          "gpu_slices": str(gpu_file) if gpu else None})
            labels = {"kubernetes.io/hostname": node, "kubernetes.io/os": "linux", "dranet.oracle/case": str(n)}
            nodes.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": labels}})
            room = {"cpu": "64", "memory": "512Gi", "pods": "110"}
            # A status update writes metadata too: the labels go along.
            statuses.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": labels},
                             "status": {"capacity": room, "allocatable": room}})
            for i, s in enumerate(gpu):
                s = copy.deepcopy(s)
                s["metadata"] = {"name": f"{node}-{s['spec']['driver']}-{i}"}
                s["spec"]["nodeName"] = node
                s["spec"]["pool"]["name"] = node
                slices.append(s)
            pods.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": {"name": claim, "namespace": NAMESPACE},
                         "spec": copy.deepcopy(template["spec"]["spec"])})
            pods.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": claim, "namespace": NAMESPACE},
                         "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                                  # The Nodes have no kubelet: not-ready and unreachable taints come.
                                  "tolerations": [{"operator": "Exists"}],
                                  "containers": [{"name": "c", "image": "oracle.invalid/none:1",
                                                  "resources": {"claims": [{"name": "devices"}]}}],
                                  "resourceClaims": [{"name": "devices", "resourceClaimName": claim}]}})
    (work / "cases.json").write_text(json.dumps(cases, indent=1))
    dump_all(nodes, work / "nodes.yaml")
    dump_all(statuses, work / "nodes-status.yaml")
    dump_all(slices, work / "gpu-slices.yaml")
    dump_all([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}] + pods, work / "pods.yaml")
    print(f"{len(cases)} cases: {len(snapshots)} node snapshots x {len(templates)} templates "
          f"of {len(files)} files")


def kubectl_json(kubectl, *args):
    out = subprocess.run([kubectl, *args, "-o", "json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["items"]


# Why the scheduler left the pod Pending ("Unschedulable: ...", or
# "SchedulerError: ..." as for a CEL runtime error), or None while it has not.
def not_scheduled(pod):
    for c in pod.get("status", {}).get("conditions", []):
        if c["type"] == "PodScheduled" and c["status"] == "False":
            return f"{c.get('reason', '')}: {c.get('message', '')}"
    return None


def cmd_wait(args):
    work = Path(args.work)
    cases = json.loads((work / "cases.json").read_text())
    deadline = time.monotonic() + args.timeout
    while True:
        claims = {c["metadata"]["name"]: c for c in kubectl_json(args.kubectl, "-n", NAMESPACE, "get", "resourceclaims")}
        pods = {p["metadata"]["name"]: p for p in kubectl_json(args.kubectl, "-n", NAMESPACE, "get", "pods")}
        open_cases = [c for c in cases
                      if not claims.get(c["claim"], {}).get("status", {}).get("allocation")
                      and not_scheduled(pods.get(c["claim"], {})) is None]
        if not open_cases or time.monotonic() > deadline:
            break
        time.sleep(1)
    (work / "claims.json").write_text(json.dumps(claims))
    (work / "pods.json").write_text(json.dumps(pods))
    slices = {}
    for s in kubectl_json(args.kubectl, "get", "resourceslices"):
        key = f"{s['spec'].get('nodeName', '')} {s['spec']['driver']}"
        slices[key] = slices.get(key, 0) + 1
    (work / "slices.json").write_text(json.dumps(slices))
    if open_cases:
        print(f"oracle: {len(open_cases)} cases neither allocated nor refused by the scheduler after {args.timeout} s, "
              f"such as {open_cases[0]}", file=sys.stderr)
        return 1
    return 0


# "template NAME: allocated|NOT allocated", then for an allocated one
# "  REQUEST: DRIVER/DEVICE (facts)" lines up to "  pod receives:"; for one not
# allocated, "  problem: ..." and per request "  request R (wants N)" with its
# "    problem: ..." lines.
def parse_simulate(text):
    results, current, in_devices = {}, None, False
    for line in text.splitlines():
        m = re.match(r"^template (\S+): (allocated|NOT allocated)$", line)
        if m:
            current = {"allocated": m.group(2) == "allocated", "devices": {}, "problems": []}
            results[m.group(1)] = current
            in_devices = current["allocated"]
            continue
        if current is None:
            continue
        if line == "  pod receives:":
            in_devices = False
        elif in_devices:
            m = re.match(r"^  (\S+): (\S+?)/(\S+)", line)
            if m:
                current["devices"].setdefault(m.group(1), []).append(f"{m.group(2)}/{m.group(3)}")
        elif "problem: " in line:
            current["problems"].append(line.strip())
    return results


# The kind of failure a message tells: the scheduler's and simulate's words
# for the same failure share these phrases.
def why(message):
    if "CEL runtime error" in message:
        return "a CEL runtime error"
    if "exceeds the claim limit" in message:
        return "the claim's device limit"
    return "no fitting devices"


def shape(allocation):
    return {request: len(devices) for request, devices in allocation.items()}


# Whether a driver of the allocation has more than one slice on the node.
def several_slices(slices, node, allocation):
    drivers = {d.split("/")[0] for devices in allocation.values() for d in devices}
    return any(slices.get(f"{node} {driver}", 0) > 1 for driver in drivers)


def cmd_check(args):
    work = Path(args.work)
    cases = json.loads((work / "cases.json").read_text())
    claims = json.loads((work / "claims.json").read_text())
    pods = json.loads((work / "pods.json").read_text())
    slices = json.loads((work / "slices.json").read_text())
    simulated = {}
    differences, allocated, shaped, pending = [], 0, 0, 0
    lines = []
    for case in cases:
        key = f"{case['snapshot']}--{case['example']}"
        if key not in simulated:
            simulated[key] = parse_simulate((work / "simulate" / f"{key}.txt").read_text())
        sim = simulated[key].get(case["template"])
        where = f"{case['snapshot']} {case['example']}/{case['template']} ({case['node']})"
        if sim is None:
            differences.append(f"{where}: simulate printed nothing for the template")
            continue
        allocation = claims.get(case["claim"], {}).get("status", {}).get("allocation")
        if allocation:
            real = {}
            for r in allocation["devices"]["results"]:
                real.setdefault(r["request"], []).append(f"{r['driver']}/{r['device']}")
            real = {k: sorted(v) for k, v in real.items()}
            mine = {k: sorted(v) for k, v in sim["devices"].items()}
            if not sim["allocated"]:
                differences.append(f"{where}: the scheduler allocated {real}; simulate did not: "
                                   + "; ".join(sim["problems"][:3]))
            elif real != mine and several_slices(slices, case["node"], real) and shape(real) == shape(mine):
                # The scheduler walks a pool's slices in its informer cache's
                # order, which Go's map iteration makes random: among a pool
                # of several slices its pick is not determined.
                shaped += 1
                lines.append(f"  shape   {where}: scheduler {real}, simulate {mine}")
            elif real != mine:
                differences.append(f"{where}: the scheduler allocated {real}, simulate {mine}")
            else:
                allocated += 1
                lines.append(f"  same    {where}: {real}")
        else:
            reason = not_scheduled(pods.get(case["claim"], {})) or "(no reason)"
            if sim["allocated"]:
                differences.append(f"{where}: the scheduler left the pod Pending ({reason}); simulate allocated "
                                   f"{sim['devices']}")
            elif why(reason) != why(" ".join(sim["problems"])):
                differences.append(f"{where}: pending in both, the scheduler for {why(reason)} ({reason}), "
                                   f"simulate for {why(' '.join(sim['problems']))}: " + "; ".join(sim["problems"][:3]))
            else:
                pending += 1
                lines.append(f"  pending {where}: scheduler: {reason} | simulate: "
                             + "; ".join(sim["problems"][:2]))
    report = "\n".join(lines + [f"  DIFF    {d}" for d in differences])
    summary = (f"oracle: {len(cases)} cases, {allocated} allocated alike, {shaped} allocated alike but for which "
               f"devices of a pool of several slices, {pending} pending in both, {len(differences)} differences")
    if args.report:
        Path(args.report).write_text(report + "\n" + summary + "\n")
    for d in differences:
        print("DIFF", d)
    print(summary)
    return 1 if differences else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser("plan")
    plan.add_argument("--nodes", required=True)
    plan.add_argument("--examples", required=True)
    plan.add_argument("--install-yaml", required=True)
    plan.add_argument("--extra", action="append", default=[], help="another file of templates")
    plan.add_argument("--work", required=True)
    wait = sub.add_parser("wait")
    wait.add_argument("--work", required=True)
    wait.add_argument("--kubectl", required=True)
    wait.add_argument("--timeout", type=int, default=120)
    check = sub.add_parser("check")
    check.add_argument("--work", required=True)
    check.add_argument("--report")
    args = parser.parse_args()
    return {"plan": cmd_plan, "wait": cmd_wait, "check": cmd_check}[args.command](args) or 0


if __name__ == "__main__":
    sys.exit(main())
