#!/usr/bin/env python3
"""Least privilege from a kube-apiserver audit log (JSON lines, level Metadata).

    audit_check.py --audit-log FILE --clusterrole ROLE.json --user USER
    audit_check.py --audit-log FILE --user USER --since-line N [--no-writes]

The second form only counts USER's requests after line N of the log (a
window of a test) and, with --no-writes, fails on any create, update, patch
or delete among them.

Fails (exit 1) when a request of USER was answered 403, is a resource
request that no rule of the ClusterRole allows (a rule the cluster would need
from some other binding), or when a rule verb went unused that RARE below
does not name with the reason a run may not need it. Prints what USER did
(verb, resource, count) and each rule verb it never used.

Writing a ResourceClaim's status on Kubernetes 1.36 and later is also checked
against `resourceclaims/driver` with the verb prefixed `associated-node:`
(granular status authorization); the audit log records only the status
request, so a status write that succeeded counts as a use of that rule too.
"""
import argparse
import collections
import json
import sys

# Rule verbs a run may leave unused: each is needed only in a situation the
# install test does not make (packaging/helm/dranet/templates/rbac.yaml).
RARE = {
    ("resourceslices", "get"): "only when a create finds the slice's name held by another node's or driver's slice",
}


def rule_allows(rule, verb, group, resource, name):
    if "*" not in rule.get("verbs", []) and verb not in rule.get("verbs", []):
        return False
    if "*" not in rule.get("apiGroups", []) and group not in rule.get("apiGroups", []):
        return False
    if "*" not in rule.get("resources", []) and resource not in rule.get("resources", []):
        return False
    names = rule.get("resourceNames") or []
    return not names or name in names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--audit-log", required=True)
    ap.add_argument("--clusterrole")
    ap.add_argument("--user", required=True)
    ap.add_argument("--since-line", type=int, default=0, help="count only the requests after this line")
    ap.add_argument("--no-writes", action="store_true", help="fail on any write among the requests counted")
    ap.add_argument("--allow-unused", action="store_true",
                    help="print the rule verbs never used without failing (a run that does not exercise them all)")
    args = ap.parse_args()
    if args.clusterrole is None and args.since_line == 0:
        ap.error("--clusterrole is needed unless a window (--since-line) is counted")

    rules = json.load(open(args.clusterrole)).get("rules", []) if args.clusterrole else None
    used = set()  # (rule index, verb)
    seen = collections.Counter()
    problems = []
    status_written = False
    writes = 0
    for number, line in enumerate(open(args.audit_log), 1):
        if number <= args.since_line:
            continue
        event = json.loads(line)
        if event.get("user", {}).get("username") != args.user:
            continue
        # A watch is counted when it starts (one still open at the end has
        # no ResponseComplete); every other request when it completes.
        stage, code = event.get("stage"), event.get("responseStatus", {}).get("code", 0)
        if event["verb"] == "watch":
            if not (stage == "ResponseStarted" or (stage == "ResponseComplete" and code >= 400)):
                continue
        elif stage != "ResponseComplete":
            continue
        verb = event["verb"]
        if verb in ("create", "update", "patch", "delete", "deletecollection"):
            writes += 1
        ref = event.get("objectRef")
        if ref is None:  # discovery and other non-resource URLs
            what = f"{verb} {event['requestURI'].split('?')[0]}"
            seen[(what, code)] += 1
            if code == 403:
                problems.append(f"403 for {what}")
            continue
        group = ref.get("apiGroup", "")
        resource = ref.get("resource", "") + ("/" + ref["subresource"] if ref.get("subresource") else "")
        name = ref.get("name", "")
        what = f"{verb} {group or 'core'}/{resource}"
        seen[(what, code)] += 1
        if code == 403:
            problems.append(f"403 for {what} {ref.get('namespace', '')}/{name}")
        if rules is None:
            continue
        allowing = [i for i, r in enumerate(rules) if rule_allows(r, verb, group, resource, name)]
        if not allowing:
            problems.append(f"no rule of the ClusterRole allows {what} (name {name!r})")
        for i in allowing:
            used.add((i, verb))
        if resource == "resourceclaims/status" and verb in ("patch", "update") and 200 <= code < 300:
            status_written = True
            for i, r in enumerate(rules):
                if "resourceclaims/driver" in r.get("resources", []):
                    used.add((i, "associated-node:" + verb))

    window = f" after line {args.since_line}" if args.since_line else ""
    print(f"requests of {args.user}{window}: {sum(seen.values())}, {writes} of them writes")
    for (what, code), n in sorted(seen.items()):
        print(f"  {n:5d}  {what}  -> {code}")
    if args.no_writes and writes:
        problems.append(f"{writes} write(s) where none was expected")
    if rules is None:
        for p in problems:
            print("PROBLEM:", p)
        return 1 if problems else 0
    unused = [(i, v) for i, r in enumerate(rules) for v in r.get("verbs", []) if (i, v) not in used]
    print("rule verbs never used in this run:" if unused else "every rule verb was used")
    for i, v in unused:
        r = rules[i]
        what = f"{v} {','.join(r.get('apiGroups', [])) or 'core'}/{','.join(r.get('resources', []))}"
        reasons = [RARE[(res, v)] for res in r.get("resources", []) if (res, v) in RARE]
        if reasons:
            print(f"  {what}: {reasons[0]}")
        else:
            print(f"  {what}: never used" + ("" if args.allow_unused else ", and no reason is known why a run would not"))
            if not args.allow_unused:
                problems.append(f"the ClusterRole grants {what}, which dranetd did not use")
    if status_written:
        print("(associated-node:* on resourceclaims/driver counted as used because a status write"
              " succeeded; the API server checks it from Kubernetes 1.36 on)")
    else:
        print("no claim status was written in this run")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
