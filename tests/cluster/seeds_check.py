#!/usr/bin/env python3
"""What one pod of a node type's claim template received on the node in a box,
against the node type's oracle, packaging/examples/<node>/expected.yaml (written
by hand from the snapshot's files; dranet-demo --check reads the same file).

    seeds_check.py --expected FILE --template NAME --pod POD --snapshot DIR
                   --kubectl KUBECTL --ctr CTR --containerd-socket SOCK [--phase running|home]

--phase running (the default) checks the running pod: exactly the device nodes
under /dev/infiniband, the env, exactly the netdevs the claim names (MAC, MTU,
up, addresses, routes, read with the host's iproute2 inside the pod's network
namespace), and the allocation: the GPUs and HCAs the real scheduler chose,
each on the NUMA node listed (NICs as dranet published them, GPUs from the
snapshot's PCI functions), aligned or not as listed, under the PCIe root
listed. --phase home checks, after the pod is gone, that every netdev of the
template is back on the host as listed. Exit 1 on any difference, each printed.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import yaml

PROBLEMS = []


def problem(text):
    PROBLEMS.append(text)
    print("DIFFERENT: " + text)


def run(*cmd):
    out = subprocess.run(list(cmd), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (" ".join(cmd), out.returncode, out.stderr.strip()))
    return out.stdout


def netdev_state(prefix, name):
    """MAC, MTU, up, global IPv4/IPv6 addresses and routes of netdev name, as the
    oracle lists them; prefix runs ip there (nsenter into a pod, or nothing)."""
    link = run(*(prefix + ["ip", "-o", "link", "show", "dev", name]))
    mac = re.search(r"link/\S+ ([0-9a-f:]+)", link)
    mtu = re.search(r" mtu (\d+)", link)
    flags = re.search(r"<([^>]*)>", link)
    addresses = []
    for line in run(*(prefix + ["ip", "-o", "addr", "show", "dev", name])).splitlines():
        m = re.search(r"\binet6? (\S+) .*scope (\w+)", line)
        if m and m.group(2) != "link":
            addresses.append(m.group(1))
    routes = [" ".join(r.split()) for r in run(*(prefix + ["ip", "route", "show", "dev", name])).splitlines()]
    # `ip route show dev X` leaves "dev X" out; the oracle writes it.
    routes = sorted(re.sub(r"^(\S+)( via \S+)?", lambda m: m.group(0) + " dev " + name, r, count=1) for r in routes
                    if "proto kernel" not in r)
    return {"mac": mac.group(1) if mac else None, "mtu": int(mtu.group(1)) if mtu else None,
            "up": bool(flags) and "UP" in flags.group(1).split(","), "addresses": sorted(addresses), "routes": routes}


def expected_netdev(spec, name):
    want = spec["netdevs"][name]
    return {"mac": want["mac"], "mtu": want["mtu"], "up": want["up"], "addresses": sorted(want.get("addresses", [])),
            "routes": sorted(" ".join(r.split()) for r in want.get("routes", []))}


def main():
    ap = argparse.ArgumentParser()
    for flag in ("--expected", "--template", "--pod", "--snapshot", "--kubectl", "--ctr", "--containerd-socket"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--phase", choices=("running", "home"), default="running")
    args = ap.parse_args()
    spec = yaml.safe_load(open(args.expected))["spec"]
    claims = [c for c in spec["claims"] if c["template"] == args.template]
    if len(claims) != 1:
        raise SystemExit("%s lists template %s %d times" % (args.expected, args.template, len(claims)))
    want = claims[0]
    k = [args.kubectl]

    if args.phase == "home":
        for name in want.get("netdevs", []):
            got, expected = netdev_state([], name), expected_netdev(spec, name)
            if got != expected:
                problem("%s on the host after the pod: %s, expected %s" % (name, got, expected))
        print("%s: %s" % (args.template, "netdevs home as listed" if not PROBLEMS else "%d difference(s)" % len(PROBLEMS)))
        return 1 if PROBLEMS else 0

    # Device nodes: exactly those listed.
    listing = subprocess.run(k + ["exec", args.pod, "--", "ls", "-l", "/dev/infiniband"], capture_output=True, text=True)
    got_devices = {}
    for line in listing.stdout.splitlines():
        m = re.match(r"^(c)\S*\s+\d+\s+\S+\s+\S+\s+(\d+),\s*(\d+)\s+.*\s(\S+)$", line)
        if m:
            got_devices["/dev/infiniband/" + m.group(4)] = "c %s:%s" % (m.group(2), m.group(3))
    if got_devices != want.get("devices", {}):
        problem("device nodes %s, expected %s" % (got_devices, want.get("devices", {})))

    # Env: each listed variable with its value.
    env = dict(line.split("=", 1) for line in run(*(k + ["exec", args.pod, "--", "env"])).splitlines() if "=" in line)
    for name, value in (want.get("env") or {}).items():
        if env.get(name) != value:
            problem("env %s=%r, expected %r" % (name, env.get(name), value))

    # Netdevs: exactly those listed, each as listed, inside the pod's network namespace.
    pod = json.loads(run(*(k + ["get", "pod", args.pod, "-o", "json"])))
    container_id = pod["status"]["containerStatuses"][0]["containerID"].split("://", 1)[1]
    tasks = run(args.ctr, "-a", args.containerd_socket, "-n", "k8s.io", "tasks", "ls")
    pid = next((line.split()[1] for line in tasks.splitlines() if line.startswith(container_id)), None)
    if pid is None:
        raise SystemExit("no task of container %s" % container_id)
    in_pod = ["nsenter", "-t", pid, "-n"]
    names = sorted(l.split(":")[1].strip().split("@")[0] for l in run(*(in_pod + ["ip", "-o", "link"])).splitlines())
    extra = sorted(set(names) - {"lo", "eth0"} - set(want.get("netdevs", [])))
    missing = sorted(set(want.get("netdevs", [])) - set(names))
    if extra or missing:
        problem("netdevs in the pod: %s missing, %s not listed" % (missing, extra))
    for name in want.get("netdevs", []):
        if name in names:
            got, expected = netdev_state(in_pod, name), expected_netdev(spec, name)
            if got != expected:
                problem("%s in the pod: %s, expected %s" % (name, got, expected))

    # Allocation: what the real scheduler chose, on the NUMA nodes and PCIe root listed.
    claim_name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    claim = json.loads(run(*(k + ["get", "resourceclaim", claim_name, "-o", "json"])))
    slices = json.loads(run(*(k + ["get", "resourceslices", "-o", "json"])))["items"]
    devices = {(s["spec"]["driver"], d["name"]): d.get("attributes", {}) for s in slices for d in s["spec"].get("devices", [])}

    def attr(attrs, *names):
        for n in names:
            if n in attrs:
                return next(iter(attrs[n].values()))
        return None

    gpus, nics, roots = {}, {}, set()
    for r in claim["status"]["allocation"]["devices"]["results"]:
        attrs = devices.get((r["driver"], r["device"]), {})
        roots.add(attr(attrs, "resource.kubernetes.io/pcieRoot"))
        if r["driver"] == "dra.net":
            nics[attr(attrs, "rdmaDevice", "dra.net/rdmaDevice") or r["device"]] = attr(attrs, "numaNode", "dra.net/numaNode")
        else:
            numa = attr(attrs, "resource.kubernetes.io/numaNode")
            if numa is None:
                bdf = attr(attrs, "resource.kubernetes.io/pciBusID", "pciAddr")
                with open(os.path.join(args.snapshot, "sys/bus/pci/devices", bdf, "numa_node")) as f:
                    numa = int(f.read())
            gpus[r["device"]] = numa
    alignment = want.get("alignment", {})
    if gpus != alignment.get("gpus", {}):
        problem("GPUs allocated %s, expected %s" % (gpus, alignment.get("gpus", {})))
    if nics != alignment.get("nics", {}):
        problem("NICs allocated %s, expected %s" % (nics, alignment.get("nics", {})))
    if "aligned" in alignment and (set(gpus.values()) == set(nics.values())) != alignment["aligned"]:
        problem("aligned is %s, expected %s" % (not alignment["aligned"], alignment["aligned"]))
    if "pcieRoot" in alignment and roots != {alignment["pcieRoot"]}:
        problem("PCIe roots %s, expected only %s" % (sorted(map(str, roots)), alignment["pcieRoot"]))
    print("%s: GPUs %s, NICs %s, devices %d, NCCL_IB_HCA=%s, netdevs %s: %s" % (
        args.template, gpus, nics, len(got_devices), env.get("NCCL_IB_HCA"), want.get("netdevs", []),
        "as listed" if not PROBLEMS else "%d difference(s)" % len(PROBLEMS)))
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
