#!/usr/bin/env python3
"""Pod create -> Running on the node in a box, one pod at a time, timed from
this client (bench/cluster_pod_start.sh runs the cases).

  cluster_pod_start.py run --kubeconfig K --node NODE --case NAME --pods N \
      [--template T] [--netdevs a,b] [--image IMAGE] --out FILE.jsonl
  cluster_pod_start.py table FILE.jsonl [BASELINE_CASE]

run: N times: POST a pod (a ResourceClaimTemplate T when given), then watch it
until its phase is Running: the time from just before the POST to the watch
event is the pod's start. The pod is deleted and, before the next one, gone
from the API and its netdevs (--netdevs) back on the host. Appends one JSON
line per case: each start in ms, and the kubelet's mean DRA prepare latency
over the case (dra_operations_duration_seconds, PrepareResources: the change
of its sum over the change of its count; its smallest bucket is 100 ms, so
its buckets say nothing here).
table: p50 and p99 per case and what each adds to BASELINE_CASE's.
"""
import argparse
import base64
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse

import yaml


class Api:
    """The API server over HTTPS with the kubeconfig's client certificate."""

    def __init__(self, kubeconfig):
        config = yaml.safe_load(open(kubeconfig))
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        self.url = urllib.parse.urlparse(cluster["server"])
        self.context = ssl.create_default_context()
        self._tmp = tempfile.TemporaryDirectory()

        def path(key):
            if key in user:
                return user[key]
            name = os.path.join(self._tmp.name, key)
            with open(name, "wb") as f:
                f.write(base64.b64decode(user[key + "-data"]))
            return name

        if "certificate-authority-data" in cluster:
            self.context.load_verify_locations(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
        else:
            self.context.load_verify_locations(cluster["certificate-authority"])
        self.context.load_cert_chain(path("client-certificate"), path("client-key"))

    def connection(self, timeout=60):
        return http.client.HTTPSConnection(self.url.hostname, self.url.port or 443, context=self.context,
                                           timeout=timeout)

    def request(self, method, path, body=None):
        conn = self.connection()
        conn.request(method, path, body=json.dumps(body) if body is not None else None,
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        conn.close()
        if response.status >= 300 and not (method == "DELETE" and response.status == 404):
            raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
        return json.loads(data) if data else None


def pod_spec(name, node, image, template):
    # Placed by the scheduler, as every pod is.
    spec = {"terminationGracePeriodSeconds": 1, "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [{"name": "c", "image": image, "imagePullPolicy": "Never",
                            "command": ["sleep", "3600"]}]}
    if template:
        spec["containers"][0]["resources"] = {"claims": [{"name": "devices"}]}
        spec["resourceClaims"] = [{"name": "devices", "resourceClaimTemplateName": template}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def start_one(api, name, node, image, template):
    """Seconds from just before the POST to the watch event that says Running."""
    conn = api.connection(timeout=120)
    query = urllib.parse.urlencode({"watch": "1", "fieldSelector": f"metadata.name={name}"})
    conn.request("GET", f"/api/v1/namespaces/default/pods?{query}")
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"watch: {response.status}")
    started = time.monotonic()
    api.request("POST", "/api/v1/namespaces/default/pods", pod_spec(name, node, image, template))
    while True:
        line = response.readline()
        if not line:
            raise RuntimeError(f"the watch of {name} ended before it ran")
        event = json.loads(line)
        if event["object"].get("status", {}).get("phase") == "Running":
            elapsed = time.monotonic() - started
            conn.close()
            return elapsed


def delete_and_wait(api, name, netdevs):
    api.request("DELETE", f"/api/v1/namespaces/default/pods/{name}")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        gone = api.request("GET", f"/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3D{name}")
        if not gone["items"] and all(subprocess.run(["ip", "link", "show", n], capture_output=True).returncode == 0
                                     for n in netdevs):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{name} or its netdevs {netdevs} did not come back within 120 s")


def prepare_totals(api, node):
    """The kubelet's dra_operations_duration_seconds for PrepareResources: (sum, count)."""
    conn = api.connection()
    conn.request("GET", f"/api/v1/nodes/{node}/proxy/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    total, count = 0.0, 0.0
    for line in text.splitlines():
        if 'operation_name="PrepareResources"' not in line or 'is_error="true"' in line:
            continue
        if line.startswith("dra_operations_duration_seconds_sum"):
            total = float(line.rsplit(" ", 1)[1])
        elif line.startswith("dra_operations_duration_seconds_count"):
            count = float(line.rsplit(" ", 1)[1])
    return total, count


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cmd_run(args):
    api = Api(args.kubeconfig)
    netdevs = [n for n in args.netdevs.split(",") if n]
    before = prepare_totals(api, args.node)
    starts = []
    for i in range(args.pods):
        name = f"start-{args.case}-{i}"
        starts.append(start_one(api, name, args.node, args.image, args.template) * 1000)
        delete_and_wait(api, name, netdevs)
    after = prepare_totals(api, args.node)
    prepares = after[1] - before[1]
    record = {"case": args.case, "pods": args.pods, "starts_ms": starts,
              "load": open("/proc/loadavg").read().split()[:3],
              "kubelet_prepare": {"count": prepares,
                                  "mean_ms": (after[0] - before[0]) / prepares * 1000 if prepares else None}}
    with open(args.out, "a") as f:
        f.write(json.dumps(record) + "\n")
    print(f"{args.case}: p50 {percentile(starts, 0.5):.0f} ms, p99 {percentile(starts, 0.99):.0f} ms "
          f"over {len(starts)} pods", file=sys.stderr)


def cmd_table(args):
    records = [json.loads(line) for line in open(args.file) if line.strip()]
    base = next((r for r in records if r["case"] == args.baseline), None)
    print("| case | pods | p50 | p99 | added to the baseline's p50 / p99 | kubelet's DRA prepare, mean (calls) | load |")
    print("|---|---|---|---|---|---|---|")
    for r in records:
        p50, p99 = percentile(r["starts_ms"], 0.5), percentile(r["starts_ms"], 0.99)
        added = "—"
        if base and r is not base:
            added = (f"{p50 - percentile(base['starts_ms'], 0.5):+.0f} / "
                     f"{p99 - percentile(base['starts_ms'], 0.99):+.0f} ms")
        kp = r["kubelet_prepare"]
        prepare = "—" if not kp["count"] else f"{kp['mean_ms']:.1f} ms ({kp['count']:.0f})"
        print(f"| {r['case']} | {r['pods']} | {p50:.0f} ms | {p99:.0f} ms | {added} | {prepare} | "
              f"{' '.join(r['load'])} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--kubeconfig", required=True)
    run.add_argument("--node", required=True)
    run.add_argument("--case", required=True)
    run.add_argument("--pods", type=int, default=50)
    run.add_argument("--template", default="")
    run.add_argument("--netdevs", default="")
    run.add_argument("--image", required=True)
    run.add_argument("--out", required=True)
    table = sub.add_parser("table")
    table.add_argument("file")
    table.add_argument("baseline", nargs="?", default="no-dranet")
    args = parser.parse_args()
    return {"run": cmd_run, "table": cmd_table}[args.command](args) or 0


if __name__ == "__main__":
    sys.exit(main())
