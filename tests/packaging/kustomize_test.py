#!/usr/bin/env python3
"""The kustomize base and overlays under packaging/deploy, built by a real kustomize
(`kubectl kustomize`), give exactly the objects of the committed rendered.yaml and of the
chart's render for the same values; and kubectl reads install.yaml and the example
manifests as the same objects that PyYAML reads.

  kustomize_test.py --source REPO --cache DIR

kubectl is Debian's (trixie), downloaded and unpacked into DIR by scripts/debian_fetch.sh,
not installed. Exit 77 (a skip) when the Debian archive cannot be reached; a reachable
archive without the package is a failure.
"""
import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

# Trixie's kubernetes-client is an empty package that depends on this one, which holds
# /usr/bin/kubectl (with kustomize built in). It needs only libc (GLIBC_2.34).
KUBECTL_PACKAGE = "kubectl/trixie"

FAILURES = []


def fail(message):
    FAILURES.append(message)
    print("FAIL: " + message)


def fetch_kubectl(source, cache):
    started = time.monotonic()
    out = subprocess.run(["bash", os.path.join(source, "scripts", "debian_fetch.sh"), cache, KUBECTL_PACKAGE],
                         capture_output=True, text=True, timeout=540)
    if out.returncode == 77:
        print(out.stderr.strip())
        print("SKIP: %s cannot be fetched (reason above)" % KUBECTL_PACKAGE)
        sys.exit(77)
    if out.returncode != 0:
        print("FAIL: scripts/debian_fetch.sh %s exited %d: %s" % (KUBECTL_PACKAGE, out.returncode, out.stderr.strip()))
        sys.exit(1)
    kubectl = os.path.join(cache, "root", "usr", "bin", "kubectl")
    version = subprocess.run([kubectl, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=60)
    if version.returncode != 0:
        print("FAIL: %s does not run: %s" % (kubectl, version.stderr.strip()))
        sys.exit(1)
    v = json.loads(version.stdout)
    print("kubectl %s (kustomize %s) from %s, fetched in %.1f s" % (
        v["clientVersion"]["gitVersion"], v.get("kustomizeVersion"), KUBECTL_PACKAGE, time.monotonic() - started))
    return kubectl


def kustomize(kubectl, directory):
    out = subprocess.run([kubectl, "kustomize", directory], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        fail("kubectl kustomize %s exited %d: %s" % (directory, out.returncode, out.stderr.strip()))
        return []
    return list(yaml.safe_load_all(out.stdout))


def compare(label, got, want):
    """got and want hold the same objects, in any order."""
    def key(obj):
        meta = obj.get("metadata", {})
        return (obj.get("apiVersion", ""), obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))
    got, want = sorted(got, key=key), sorted(want, key=key)
    if got == want:
        print("ok: %s (%d objects)" % (label, len(got)))
        return
    # Keys sorted, so that the diff shows what differs and not how each tool orders keys.
    text = lambda objs: yaml.safe_dump_all(objs, sort_keys=True, width=float("inf")).splitlines()  # noqa: E731
    diff = difflib.unified_diff(text(want), text(got), "expected", "kubectl", lineterm="")
    fail("%s:\n%s" % (label, "\n".join(diff)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--cache", required=True)
    args = parser.parse_args()
    packaging = os.path.join(args.source, "packaging")
    sys.path.insert(0, packaging)
    import render  # noqa: E402

    kubectl = fetch_kubectl(args.source, os.path.abspath(args.cache))
    started = time.monotonic()

    # The base and each overlay, as kustomize builds them.
    # Helm's own render is compared when Helm can be had (scripts/go_tool.sh builds it);
    # rendered.yaml is compared always (packaging_manifests holds it to Helm's render).
    try:
        render.helm_binary()
        with_helm = True
    except render.NoHelm as e:
        print("no comparison with helm template: %s" % e)
        with_helm = False
    base = os.path.join(packaging, "deploy", "base")
    base_built = kustomize(kubectl, base)
    if with_helm:
        compare("kubectl kustomize deploy/base = helm template --set-json pluginImages=[]",
                base_built, render.release(base=True))
    overlays = sorted(os.listdir(os.path.join(packaging, "deploy", "overlays")))
    if overlays != sorted(render.CLOUDS):
        fail("deploy/overlays holds %s, render.py renders %s" % (overlays, sorted(render.CLOUDS)))
    for cloud in render.CLOUDS:
        overlay = os.path.join(packaging, "deploy", "overlays", cloud)
        built = kustomize(kubectl, overlay)
        compare("kubectl kustomize deploy/overlays/%s = its rendered.yaml" % cloud,
                built, render.read_yaml_all(os.path.join(overlay, "rendered.yaml")))
        if with_helm:
            compare("kubectl kustomize deploy/overlays/%s = helm template -f its values.yaml" % cloud,
                    built, render.release(cloud))

    # kubectl (Go's YAML reader) sees the objects PyYAML sees in the manifests users apply.
    applied = [os.path.join(packaging, "install.yaml")]
    examples = os.path.join(packaging, "examples")
    for node in sorted(os.listdir(examples)):
        applied += [os.path.join(examples, node, f) for f in sorted(os.listdir(os.path.join(examples, node)))
                    if f.endswith(".yaml")]
    for path in applied:
        work = tempfile.mkdtemp()
        shutil.copy(path, os.path.join(work, "objects.yaml"))
        with open(os.path.join(work, "kustomization.yaml"), "w", encoding="utf-8") as f:
            f.write(render.dump_all([{"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                                      "resources": ["objects.yaml"]}]))
        compare("kubectl reads %s as PyYAML does" % os.path.relpath(path, args.source),
                kustomize(kubectl, work), render.read_yaml_all(path))
        shutil.rmtree(work)

    print("built and compared in %.1f s; %d failure(s)" % (time.monotonic() - started, len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
