#!/usr/bin/env python3
"""Runs packaging/images/assemble.sh on a build tree and checks each image's contents:
every expected file is there, the binaries run, `ldd` finds every library, and (on
Debian) every library the binaries load comes from the runtime package list or from
what debian:bookworm-slim already holds.

  assemble_test.py --source REPO --build BUILD_DIR --out SCRATCH_DIR
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

FAILURES = []


def check(ok, message):
    if not ok:
        FAILURES.append(message)
        print("FAIL: " + message)
    return ok


def ldd_libraries(path):
    out = subprocess.run(["ldd", path], capture_output=True, text=True)
    missing = re.findall(r"^\s*(\S+) => not found", out.stdout, re.M)
    check(not missing, "ldd %s: no missing library (missing: %s)" % (path, missing))
    return re.findall(r"=> (/\S+)", out.stdout)


def installed_closure(roots):
    """Installed packages reachable from roots through Depends/Pre-Depends."""
    seen, todo = set(), list(roots)
    while todo:
        pkg = todo.pop()
        if pkg in seen:
            continue
        out = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", pkg], capture_output=True, text=True)
        if out.returncode != 0:
            continue
        seen.add(pkg)
        for alt in out.stdout.split(","):
            for choice in alt.split("|"):
                name = choice.strip().split(" ")[0].split(":")[0]
                if name:
                    todo.append(name)
    return seen


def package_of(path):
    for candidate in (path, os.path.realpath(path), re.sub(r"^/usr", "", os.path.realpath(path))):
        out = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if out.returncode == 0:
            return out.stdout.split(":")[0].strip()
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    images_dir = os.path.join(args.source, "packaging", "images")
    shutil.rmtree(args.out, ignore_errors=True)
    out = subprocess.run([os.path.join(images_dir, "assemble.sh"), args.build, args.out], capture_output=True, text=True)
    print(out.stdout, end="")
    if not check(out.returncode == 0, "assemble.sh succeeds: " + out.stderr):
        return 1

    images = {}
    for line in open(os.path.join(images_dir, "images.txt")):
        if line.strip() and not line.startswith("#"):
            name, *contents = line.split()
            images[name] = contents
    want_plugins = {"dranet-plugins-alibaba": {"alibaba", "nvidia"}, "dranet-plugins-aws": {"aws", "nvidia"},
                    "dranet-plugins-azure": {"azure", "nvidia", "amd"}, "dranet-plugins-gcp": {"gcp", "nvidia"},
                    "dranet-plugins-oci": {"oci", "nvidia", "amd"}, "dranet-plugins-generic": {"nvidia", "amd"}}
    check(set(images) == {"dranet"} | set(want_plugins),
          "images.txt lists the base image and the alibaba, aws, azure, gcp, oci and generic plugin images (got %s)"
          % sorted(images))
    for image, contents in images.items():
        rootfs = os.path.join(args.out, image, "rootfs")
        files = sorted(os.path.relpath(os.path.join(d, f), rootfs) for d, _, fs in os.walk(rootfs) for f in fs)
        if contents == ["base"]:
            check(files == ["usr/bin/dranetctl", "usr/bin/dranetd"], "%s holds dranetd and dranetctl only (got %s)" % (image, files))
            check(os.path.isdir(os.path.join(rootfs, "opt/dranet/plugins")), "%s has the plugin volume mount point" % image)
            dranetd = os.path.join(rootfs, "usr/bin/dranetd")
            v = subprocess.run([dranetd, "--version"], capture_output=True, text=True)
            check(v.returncode == 0 and v.stdout.startswith("dranetd ") and "dra.net" in v.stdout,
                  "%s: dranetd --version runs (%r)" % (image, v.stdout.strip()))
            v = subprocess.run([os.path.join(rootfs, "usr/bin/dranetctl"), "version"], capture_output=True, text=True)
            check(v.returncode == 0 and "dranetctl" in v.stdout, "%s: dranetctl version runs (%r)" % (image, v.stdout.strip()))
            libs = ldd_libraries(dranetd) + ldd_libraries(os.path.join(rootfs, "usr/bin/dranetctl"))
            packages = [l.strip() for l in open(os.path.join(args.out, image, "packages.txt")) if l.strip()]
            if shutil.which("dpkg-query"):
                # debian:bookworm-slim already holds apt and its dependencies (libc6, libstdc++6, ...).
                closure = installed_closure(packages + ["apt", "base-files", "libc-bin"])
                for pkg in packages:
                    check(pkg in closure, "runtime package %s is installed here (so its name is right)" % pkg)
                check("pci.ids" in packages, "the runtime image gets pci.ids for PCI names")
                print("%s: %d shared libraries checked against %d runtime packages" % (image, len(set(libs)), len(packages)))
                for lib in sorted(set(libs)):
                    owner = package_of(lib)
                    check(owner is not None and owner.split(":")[0] in closure,
                          "%s: %s (package %s) comes with runtime-packages.txt or bookworm-slim" % (image, lib, owner))
            else:
                print("dpkg not available: runtime package list not cross-checked")
        else:
            names = {re.sub(r"^dranet-plugin-(.*)\.so$", r"\1", os.path.basename(f)) for f in files}
            check(all(f.startswith("plugins/") and f.endswith(".so") for f in files), "%s holds only /plugins/*.so" % image)
            check(names == set(contents) == want_plugins.get(image), "%s holds plugins %s (got %s)" % (
                image, sorted(want_plugins.get(image, [])), sorted(names)))
            for f in files:
                so = os.path.join(rootfs, f)
                ldd_libraries(so)
                check(oct(os.stat(so).st_mode & 0o777) == "0o644", "%s: %s is 0644" % (image, f))
    print("%d failure(s)" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
