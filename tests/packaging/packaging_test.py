#!/usr/bin/env python3
"""Checks dranet's manifests, chart and values against their one source, against dranetd
and against the Kubernetes API's OpenAPI schema.

  packaging_test.py --source REPO --dranetd PATH/TO/dranetd

Needs PyYAML and jsonschema (Debian python3-yaml, python3-jsonschema; scripts/setup.sh).
Each check prints what it found; the exit code is 1 when any check fails.
"""
import argparse
import copy
import json
import os
import re
import subprocess
import sys

import jsonschema
import yaml

FAILURES = []


# values.flags key -> the dranetd flag the chart passes for it.
FLAG_OF_VALUE = {
    "hostRoot": "--host-root", "driverName": "--driver-name", "kubeconfig": "--kubeconfig",
    "publish": "--publish", "resourceApiVersion": "--resource-api-version",
    "moveIbInterfaces": "--move-ib-interfaces", "filter": "--filter", "metricsAddress": "--metrics-address",
    "resyncSeconds": "--resync-seconds", "inventoryMinPollInterval": "--inventory-min-poll-interval",
    "inventoryPollBurst": "--inventory-poll-burst", "logFormat": "--log-format", "v": "--v",
    "kubeletPlugin": "--kubelet-plugin", "kubeletRootDir": "--kubelet-root-dir", "stateDir": "--state-dir",
    "nriSocket": "--nri-socket", "nri": "--nri", "cdiDir": "--cdi-dir", "cdi": "--cdi",
    "rdmaExclusive": "--rdma-exclusive", "copyHostRoutes": "--copy-host-routes",
    "deviceHealth": "--device-health", "deviceTaints": "--device-taints",
    "sharedDevices": "--shared-devices", "deviceShares": "--device-shares",
    "profileProvider": "--profile-provider", "webhookUrl": "--webhook-url",
    "cloudProviderHint": "--cloud-provider-hint", "featureGates": "--feature-gates", "pluginDir": "--plugin-dir",
    "pluginAllow": "--plugin-allow", "pluginDeny": "--plugin-deny", "pluginConfig": "--plugin-config",
    "pluginTimeoutMs": "--plugin-timeout-ms", "allowNonRootPluginDir": "--allow-non-root-plugin-dir",
}
# Values that the chart passes only when set: set, so that every flag shows in the args.
EVERY_OPTIONAL_SET = ["--set-string", "flags.kubeconfig=/etc/kubeconfig", "--set-string", "flags.webhookUrl=http://127.0.0.1:1",
                      "--set-string", "flags.cloudProviderHint=gcp", "--set-string", "flags.featureGates=A=true",
                      "--set-json", 'flags.pluginAllow=["a"]', "--set-json", 'flags.pluginDeny=["b"]',
                      "--set-string", "flags.filter=true", "--set-json", 'flags.pluginDir=["/opt/p"]',
                      "--set-json", 'flags.pluginConfig=["generic.x=1"]',
                      "--set-string", "flags.sharedDevices=true"]


def check(ok, message):
    if not ok:
        FAILURES.append(message)
        print("FAIL: " + message)
    return ok


# ---------------------------------------------------------------- schemas

def schema_problems(validator, value, path):
    """Every way value breaks the validator's schema, one "path: message" line each."""
    return ["%s: %s" % (".".join([path] + [str(p) for p in error.absolute_path]), error.message)
            for error in validator.iter_errors(value)]


def resource_validators(openapi_path):
    """kind -> validator of every resource.k8s.io/v1 kind in the API's OpenAPI document.

    The document lists each object's fields without saying that others are refused, yet the
    API server refuses unknown fields of its own types (strict field validation): every
    object schema that lists properties is closed here. Free-form objects (RawExtension,
    the opaque driver parameters) list none and stay open."""
    with open(openapi_path, encoding="utf-8") as f:
        components = json.load(f)["components"]

    def close(node):
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for value in node.values():
                close(value)
        elif isinstance(node, list):
            for value in node:
                close(value)

    closed = copy.deepcopy(components)
    close(closed)
    validators = {}
    for name, schema in components["schemas"].items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            if (gvk["group"], gvk["version"]) == ("resource.k8s.io", "v1"):
                # OpenAPI 3.0 schemas are JSON Schema draft 4 plus annotations; "$ref"s point
                # into the document's components, which ride along in the root schema.
                validators[gvk["kind"]] = jsonschema.Draft4Validator(
                    {"components": closed, "allOf": [{"$ref": "#/components/schemas/" + name}]})
    return validators


def check_resource_object(validators, doc, where):
    """A resource.k8s.io/v1 object validates against its kind's schema."""
    validator = validators.get(doc.get("kind"))
    if not check(validator is not None, "%s: resource.k8s.io/v1 has no kind %s" % (where, doc.get("kind"))):
        return
    problems = schema_problems(validator, doc, doc["kind"])
    check(not problems, "%s: %s %s validates against the resource.k8s.io/v1 OpenAPI schema: %s" % (
        where, doc["kind"], doc.get("metadata", {}).get("name"), problems))


def schema_objects(schema, path="$"):
    """Every object-typed node of a schema, with its path."""
    if isinstance(schema, dict):
        t = schema.get("type")
        if t == "object" or (isinstance(t, list) and "object" in t):
            yield path, schema
        for key in ("properties",):
            for name, sub in schema.get(key, {}).items():
                yield from schema_objects(sub, path + "." + name)
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                yield from schema_objects(schema[key], path + "[]" if key == "items" else path + ".*")


# ---------------------------------------------------------------- helpers

def help_flags(dranetd):
    out = subprocess.run([dranetd, "--help"], capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, "dranetd --help exits 0 (got %d: %s)" % (out.returncode, out.stderr.strip()))
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", out.stdout))


def objects_in(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def walk(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield path + "." + k, k, v
            yield from walk(v, path + "." + k)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from walk(v, "%s[%d]" % (path, i))


def check_daemonset(name, docs, values):
    dss = objects_in(docs, "DaemonSet")
    if not check(len(dss) == 1, "%s: exactly one DaemonSet (got %d)" % (name, len(dss))):
        return
    ds = dss[0]
    for path, key, value in walk(ds):
        check(not (key == "privileged" and value is True), "%s: %s is privileged: true" % (name, path))
    pod = ds["spec"]["template"]["spec"]
    check(pod.get("hostNetwork") is True, "%s: hostNetwork: true" % name)
    check(pod.get("priorityClassName") == "system-node-critical", "%s: priorityClassName system-node-critical" % name)
    check({"operator": "Exists"} in pod.get("tolerations", []), "%s: a toleration with operator Exists" % name)
    containers = pod["containers"]
    check(len(containers) == 1 and containers[0]["name"] == "dranetd", "%s: one container, dranetd" % name)
    c = containers[0]
    sc = c["securityContext"]
    check(sorted(sc["capabilities"].get("add", [])) == ["NET_ADMIN", "SYS_ADMIN"],
          "%s: dranetd adds exactly NET_ADMIN and SYS_ADMIN (got %s)" % (name, sc["capabilities"].get("add")))
    check(sc["capabilities"].get("drop") == ["ALL"], "%s: dranetd drops ALL capabilities" % name)
    check(sc.get("readOnlyRootFilesystem") is True, "%s: readOnlyRootFilesystem" % name)
    check(sc.get("allowPrivilegeEscalation") is False, "%s: allowPrivilegeEscalation false" % name)
    env = {e["name"]: e for e in c.get("env", [])}
    check(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName",
          "%s: NODE_NAME from spec.nodeName" % name)
    probes = {k: c.get(k, {}).get("httpGet", {}).get("path") for k in ("startupProbe", "livenessProbe", "readinessProbe")}
    check(probes == {"startupProbe": "/livez", "livenessProbe": "/livez", "readinessProbe": "/readyz"},
          "%s: probes startup+liveness /livez, readiness /readyz (got %s)" % (name, probes))
    metrics_port = int(values["flags"]["metricsAddress"].rsplit(":", 1)[1])
    probe_ports = {k: c.get(k, {}).get("httpGet", {}).get("port") for k in ("startupProbe", "livenessProbe", "readinessProbe")}
    check(set(probe_ports.values()) == {metrics_port}, "%s: probes on the port of --metrics-address (got %s)" % (name, probe_ports))
    # A seamless upgrade runs two pods on a node: a declared port would be a
    # host port on the host network, and the scheduler would keep the new
    # pod off the node.
    check(not c.get("ports"), "%s: no port declared (got %s)" % (name, c.get("ports")))
    check(env.get("POD_UID", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.uid",
          "%s: POD_UID from metadata.uid (kubelet sockets per pod)" % name)
    rolling = ds["spec"].get("updateStrategy", {}).get("rollingUpdate", {})
    check(rolling == {"maxSurge": 1, "maxUnavailable": 0},
          "%s: rolls with surge, the old pod deleted once the new one is Ready (got %s)" % (name, rolling))
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    root = values["flags"]["kubeletRootDir"].rstrip("/")
    for vol, path in (("kubelet-plugins", root + "/plugins"), ("kubelet-registry", root + "/plugins_registry"),
                      ("state", values["flags"]["stateDir"]), ("nri", os.path.dirname(values["flags"]["nriSocket"]))):
        check(volumes.get(vol, {}).get("hostPath", {}).get("path") == path and mounts.get(vol, {}).get("mountPath") == path,
              "%s: %s is hostPath %s mounted at the same path" % (name, vol, path))
    for vol in ("netns", "dev-infiniband"):
        check(mounts.get(vol, {}).get("mountPropagation") == "HostToContainer",
              "%s: %s mounted with HostToContainer propagation" % (name, vol))
    check("emptyDir" in volumes.get("plugins", {}), "%s: the plugin directory is an emptyDir volume" % name)
    plugin_args = [a for a in c["args"] if a.startswith("--plugin-dir=")]
    check(plugin_args[:1] == ["--plugin-dir=" + mounts.get("plugins", {}).get("mountPath", "?")],
          "%s: the plugin volume is the first --plugin-dir" % name)
    inits = pod.get("initContainers", [])
    check(len(inits) == len(values["pluginImages"]), "%s: one init container per plugin image" % name)
    for init in inits:
        isc = init["securityContext"]
        check(isc.get("runAsUser") == 0, "%s: init container %s runs as root" % (name, init["name"]))
        check(isc["capabilities"].get("drop") == ["ALL"] and not isc["capabilities"].get("add"),
              "%s: init container %s has no capabilities" % (name, init["name"]))
        script = " ".join(init["command"])
        check("chmod 0755 /dranet-plugins" in script and "chmod 0644" in script,
              "%s: init container %s makes the plugin dir 0755 and files 0644" % (name, init["name"]))
        check(any(m["name"] == "plugins" for m in init["volumeMounts"]),
              "%s: init container %s mounts the plugin volume" % (name, init["name"]))


EXPECTED_RULES = [
    ("", "nodes", ["get"]),
    ("", "events", ["create"]),
    ("resource.k8s.io", "resourceslices", ["get", "list", "watch", "create", "update", "delete"]),
    ("resource.k8s.io", "resourceclaims", ["get"]),
    ("resource.k8s.io", "resourceclaims/status", ["patch"]),
    ("resource.k8s.io", "resourceclaims/driver", ["associated-node:patch"]),
]


def check_rbac(name, docs, values):
    roles = objects_in(docs, "ClusterRole")
    if not check(len(roles) == 1, "%s: one ClusterRole" % name):
        return
    got = sorted((g, r, sorted(rule["verbs"])) for rule in roles[0]["rules"]
                 for g in rule["apiGroups"] for r in rule["resources"])
    want = sorted((g, r, sorted(v)) for g, r, v in EXPECTED_RULES)
    check(got == want, "%s: ClusterRole rules are exactly %s (got %s)" % (name, want, got))
    for rule in roles[0]["rules"]:
        if "resourceclaims/driver" in rule["resources"]:
            check(rule.get("resourceNames") == [values["flags"]["driverName"]],
                  "%s: resourceclaims/driver limited to the driver name" % name)
    binding = objects_in(docs, "ClusterRoleBinding")
    check(len(binding) == 1 and binding[0]["subjects"][0]["name"] == values["serviceAccount"]["name"],
          "%s: the ClusterRoleBinding binds the ServiceAccount" % name)


def check_device_classes(name, docs, values):
    classes = {d["metadata"]["name"]: d["spec"]["selectors"][0]["cel"]["expression"] for d in objects_in(docs, "DeviceClass")}
    driver_sel = 'device.driver == "%s"' % values["flags"]["driverName"]
    check(classes.get("dranet.net") == driver_sel, "%s: DeviceClass dranet.net selects %s" % (name, driver_sel))
    check(classes.get("dranet") == driver_sel, "%s: DeviceClass dranet selects %s" % (name, driver_sel))
    check(classes.get("dranet-rdma", "").startswith(driver_sel + " && ") and "rdma == true" in classes.get("dranet-rdma", ""),
          "%s: DeviceClass dranet-rdma selects RDMA devices of the driver" % name)
    extended = {d["metadata"]["name"]: d["spec"].get("extendedResourceName") for d in objects_in(docs, "DeviceClass")}
    check(extended == {"dranet": None, "dranet.net": None, "dranet-rdma": "dra.net/rdma"},
          "%s: DeviceClass dranet-rdma alone offers the extended resource dra.net/rdma (got %s)" % (name, extended))


def template_value_refs(templates_dir):
    refs = set()
    for fname in os.listdir(templates_dir):
        text = open(os.path.join(templates_dir, fname), encoding="utf-8").read()
        refs |= set(re.findall(r"\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)", text))
        # `$f := .Values.flags` then `$f.key`
        for var, base in re.findall(r"(\$[a-z]+)\s*:=\s*\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)", text):
            refs |= {base + m for m in re.findall(re.escape(var) + r"((?:\.[A-Za-z_][A-Za-z0-9_]*)+)", text)}
        # `(get $.Values.probes $kind)`, `range .Values.pluginImages` item fields: leaf of a dynamic key
        refs |= {"." + m for m in re.findall(r"get \$\.Values\.([A-Za-z]+) ", text)}
    return {r.lstrip(".") for r in refs}


def value_paths(values, prefix=""):
    for key, value in values.items():
        path = prefix + key
        yield path
        if isinstance(value, dict) and value and key not in ("resources", "updateStrategy", "probes"):
            yield from value_paths(value, path + ".")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--dranetd", required=True)
    args = parser.parse_args()
    packaging = os.path.join(args.source, "packaging")
    sys.path.insert(0, packaging)
    import render  # noqa: E402
    validators = resource_validators(os.path.join(args.source, "tests", "data", "resource.k8s.io-v1.openapi.json"))

    # Helm renders every manifest (packaging/render.py). Without it (no Go to build it)
    # the checks that need it are skipped, the others run, and the test reports a skip.
    try:
        helm = render.helm_binary()
        print(subprocess.run([helm, "version", "--short"], capture_output=True, text=True).stdout.strip())
    except render.NoHelm as e:
        helm = None
        print("the checks that need Helm are skipped: %s" % e)

    # 1. No drift between the generated files and the chart; helm lint passes (strict) for
    #    the defaults and every cloud's values, and refuses values the schema does not know.
    if helm:
        out = subprocess.run([sys.executable, os.path.join(packaging, "render.py"), "--check"],
                             capture_output=True, text=True)
        check(out.returncode == 0, "render.py --check: generated files match the chart:\n" + out.stderr)
        chart = os.path.join(packaging, "helm", "dranet")
        for label, extra in [("defaults", [])] + [("overlay " + c, ["-f", render.overlay_values_file(c)])
                                                  for c in render.CLOUDS]:
            lint = subprocess.run([helm, "lint", "--strict", chart] + extra, capture_output=True, text=True)
            check(lint.returncode == 0, "helm lint --strict passes for the %s:\n%s%s" % (label, lint.stdout, lint.stderr))
        lint = subprocess.run([helm, "lint", "--strict", chart, "--set", "flags.noSuchFlag=1"],
                              capture_output=True, text=True)
        check(lint.returncode != 0 and "noSuchFlag" in lint.stdout + lint.stderr,
              "helm lint refuses a value values.schema.json does not have:\n" + lint.stdout + lint.stderr)

    # 2. Every YAML file under packaging/ parses; every object is a Kubernetes object; every
    #    resource.k8s.io/v1 object (DeviceClasses, example claim templates and slices) is
    #    one the API server accepts: required fields present, no unknown field, types right.
    yaml_files = []
    resource_kinds = []
    for dirpath, _, files in os.walk(packaging):
        yaml_files += [os.path.join(dirpath, f) for f in files if f.endswith((".yaml", ".yml")) and "templates" not in dirpath]
    for path in sorted(yaml_files):
        rel = os.path.relpath(path, args.source)
        try:
            docs = render.read_yaml_all(path)
        except yaml.YAMLError as e:
            check(False, "%s parses: %s" % (rel, e))
            continue
        check(docs, "%s holds at least one document" % rel)
        if os.path.basename(path) in ("values.yaml", "Chart.yaml"):
            continue
        for doc in docs:
            check(isinstance(doc, dict) and doc.get("apiVersion") and doc.get("kind") and
                  (doc.get("kind") == "Kustomization" or doc.get("metadata", {}).get("name")),
                  "%s: every document has apiVersion, kind and metadata.name" % rel)
            if isinstance(doc, dict) and doc.get("apiVersion") == "resource.k8s.io/v1":
                check_resource_object(validators, doc, rel)
                resource_kinds.append(doc.get("kind"))
    print("parsed %d YAML files; checked %d resource.k8s.io/v1 objects against the OpenAPI schema" % (
        len(yaml_files), len(resource_kinds)))
    for kind in ("DeviceClass", "ResourceClaimTemplate", "ResourceSlice"):
        check(kind in resource_kinds, "packaging/ holds %s objects to check against the schema" % kind)
    broken = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": 7},
              "spec": {"selectors": [{"cel": {"expresion": "true"}}]}}
    problems = schema_problems(validators["DeviceClass"], broken, "DeviceClass")
    check(any("metadata.name" in p and "is not of type 'string'" in p for p in problems) and
          any("'expresion' was unexpected" in p for p in problems) and
          any("'expression' is a required property" in p for p in problems) and
          # A request without its name (the v1.37 schema no longer requires a template's spec).
          schema_problems(validators["ResourceClaimTemplate"],
                          {"kind": "ResourceClaimTemplate",
                           "spec": {"spec": {"devices": {"requests": [{"exactly": {"deviceClassName": "x"}}]}}}}, "t"),
          "the OpenAPI check rejects a wrong type, an unknown field and a missing field at depth (got %s)" % problems)

    # 3. values.schema.json: closed at every object level, and the values validate.
    schema = json.load(open(os.path.join(packaging, "helm", "dranet", "values.schema.json")))
    for path, node in schema_objects(schema):
        if "properties" in node:
            check(node.get("additionalProperties") is False, "schema %s: additionalProperties: false" % path)
        else:
            check("additionalProperties" in node, "schema %s: additionalProperties stated explicitly" % path)
    values_validator = jsonschema.Draft7Validator(schema)
    defaults = render.default_values()
    for label, values in [("values.yaml", defaults)] + [("overlay %s" % c, render.cloud_values(c)) for c in render.CLOUDS]:
        problems = schema_problems(values_validator, values, "values")
        check(not problems, "%s validates against values.schema.json: %s" % (label, problems))
    bad = render.merge(defaults, {"flags": {"no-such-flag": 1}, "image": {"tag": 7}})
    problems = schema_problems(values_validator, bad, "values")
    check(any("'no-such-flag' was unexpected" in p for p in problems) and any("values.image.tag" in p for p in problems),
          "the schema checker rejects an unknown key and a wrong type (got %s)" % problems)

    # 4. Flags: every dranetd flag is exposed in values, every passed flag exists.
    flags = help_flags(args.dranetd)
    print("dranetd --help lists %d flags" % len(flags))
    not_values = {"--help": "prints help", "--version": "prints the version", "--once": "one-shot debugging mode",
                  "--node-name": "always env NODE_NAME from the downward API",
                  "--host-network-source": "for snapshots with real stand-in netdevs; auto is right on a node",
                  "--hostname-override": "DRANET's spelling of --node-name",
                  "--bind-address": "DRANET's spelling of --metrics-address (flags.metricsAddress)",
                  "--db-path": "DRANET's spelling of --state-dir's file (flags.stateDir)",
                  "--inventory-max-poll-interval": "DRANET's spelling of --resync-seconds (flags.resyncSeconds)",
                  "--pod-uid": "always env POD_UID from the downward API, with seamlessUpgrade",
                  "--handover": "on: it acts only when two pods share a node, which seamlessUpgrade allows"}
    exposed = set(FLAG_OF_VALUE.values())
    for flag in sorted(flags):
        check(flag in exposed or flag in not_values, "dranetd flag %s is exposed in values.yaml flags" % flag)
    for key, flag in FLAG_OF_VALUE.items():
        check(key in defaults["flags"], "values.yaml flags.%s exists (for %s)" % (key, flag))
        check(key in schema["properties"]["flags"]["properties"], "values.schema.json describes flags.%s" % key)
    check(set(defaults["flags"]) == set(FLAG_OF_VALUE), "values.yaml flags has no key without a flag")

    def dranetd_args(docs):
        return render.daemonset_of(docs)["spec"]["template"]["spec"]["containers"][0]["args"]

    if helm:
        # The betas of a 1.32/1.33 control plane have no extendedResourceName: left out there,
        # and where the value is "".
        for extra in (["--set", "deviceClasses.apiVersion=resource.k8s.io/v1beta1"],
                      ["--set", "deviceClasses.apiVersion=resource.k8s.io/v1beta2"],
                      ["--set", "deviceClasses.rdmaExtendedResourceName="]):
            classes = objects_in(render.objects(render.template(extra=extra)), "DeviceClass")
            check(len(classes) == 3 and all("extendedResourceName" not in d["spec"] for d in classes),
                  "with %s no DeviceClass has extendedResourceName" % extra[1])
        every_set = dranetd_args(render.objects(render.template(extra=EVERY_OPTIONAL_SET)))
        passed = {arg.split("=", 1)[0] for arg in every_set if arg.startswith("--")}
        for key, flag in FLAG_OF_VALUE.items():
            check(flag in passed, "the chart passes %s for flags.%s when it is set (args: %s)" % (flag, key, every_set))
    for label, path in [("install.yaml", os.path.join(packaging, "install.yaml"))] + [
            ("overlay %s" % c, os.path.join(packaging, "deploy", "overlays", c, "rendered.yaml")) for c in render.CLOUDS]:
        for arg in dranetd_args(render.read_yaml_all(path)):
            if not arg.startswith("--"):
                continue  # the value of a flag passed as two arguments
            flag = arg.split("=", 1)[0]
            check(flag in flags, "%s passes %s, which dranetd --help lists" % (label, flag))

    # 5. The rendered manifests: DaemonSet security and mounts, RBAC, DeviceClasses.
    manifests = [("install.yaml", os.path.join(packaging, "install.yaml"), defaults)] + [
        ("overlay %s" % c, os.path.join(packaging, "deploy", "overlays", c, "rendered.yaml"), render.cloud_values(c))
        for c in render.CLOUDS]
    for label, path, values in manifests:
        docs = render.read_yaml_all(path)
        check_daemonset(label, docs, values)
        check_rbac(label, docs, values)
        check_device_classes(label, docs, values)
        check(sorted(d["kind"] for d in docs) ==
              sorted(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DeviceClass", "DeviceClass",
                      "DeviceClass", "DaemonSet"]), "%s: the expected set of objects" % label)
    azure = render.cloud_values("azure")
    check(azure["flags"]["moveIbInterfaces"] is False, "the azure overlay publishes IB HCAs IB-only")
    # AWS's EFA has no netdev (IB-only whatever the flag), OCI's RoCE and Alibaba's eRDMA are
    # Ethernet: the flag, which only skips IPoIB netdevs, keeps its default there.
    for cloud in ("alibaba", "aws", "gcp", "oci", "generic"):
        check(render.cloud_values(cloud)["flags"]["moveIbInterfaces"] is True,
              "the %s overlay keeps --move-ib-interfaces=true" % cloud)
    clouds = ("alibaba", "aws", "azure", "gcp", "oci", "generic")
    check(render.CLOUDS == clouds, "render.py renders the overlays %s (got %s)" % (clouds, render.CLOUDS))
    on_disk = sorted(os.listdir(os.path.join(packaging, "deploy", "overlays")))
    check(on_disk == sorted(render.CLOUDS), "deploy/overlays holds exactly the overlays render.py renders (got %s)" % on_disk)
    images = {}
    for line in open(os.path.join(packaging, "images", "images.txt"), encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            name, *contents = line.split()
            images[name] = contents
    for cloud, plugins in (("alibaba", "alibaba"), ("aws", "aws"), ("azure", "azure"), ("gcp", "gcp"),
                           ("oci", "oci"), ("generic", "generic")):
        values = render.cloud_values(cloud)
        check([p["repository"] for p in values["pluginImages"]] == ["dranet-plugins-" + plugins],
              "overlay %s uses the %s plugin image" % (cloud, plugins))
        carried = {p for image in values["pluginImages"] for p in images.get(image["repository"], [])}
        check(all(image["repository"] in images for image in values["pluginImages"]),
              "overlay %s: its plugin images are in images/images.txt" % cloud)
        if cloud != "generic":
            check(cloud in carried, "overlay %s: its image carries the %s plugin" % (cloud, cloud))
        config = values["flags"]["pluginConfig"]
        for entry in config:
            check(entry.split(".", 1)[0] in carried,
                  "overlay %s: --plugin-config=%s names a plugin its image carries (%s)" % (cloud, entry, sorted(carried)))
        # The plugin images carry neither NVML nor ROCm SMI.
        for plugin, setting in (("nvidia", "nvidia.nvml=off"), ("amd", "amd.rocm-smi=off")):
            check((setting in config) == (plugin in carried),
                  "overlay %s: %s exactly when its image carries the %s plugin" % (cloud, setting, plugin))

    # 6. The Helm templates read exactly the values that exist.
    templates = os.path.join(packaging, "helm", "dranet", "templates")
    refs = template_value_refs(templates)
    paths = set(value_paths(defaults))
    for ref in sorted(refs):
        # pluginImages items and updateStrategy (a DaemonSet's own field, read
        # to refuse surge without seamlessUpgrade) may hold what defaults lack.
        check(ref in paths or ref.split(".")[0] in ("pluginImages", "updateStrategy"),
              "templates reference .Values.%s, which values.yaml has" % ref)
    for path in sorted(paths):
        check(any(r == path or r.startswith(path + ".") or path.startswith(r + ".") for r in refs),
              "values.yaml %s is used by the templates" % path)

    print("%d failure(s)" % len(FAILURES))
    if FAILURES:
        return 1
    return 0 if helm else 77


if __name__ == "__main__":
    sys.exit(main())
