#!/usr/bin/env python3
"""Generates the node snapshots under tests/nodes/ (docs/snapshots.md).

Run from anywhere: python3 tests/nodes/generate.py. Output is deterministic
(no timestamps, sorted JSON), symlinks are relative and stay inside each
snapshot, so the tree can be committed as is. Each snapshot's README says
which values come from published material and which are representative.
"""
import ipaddress
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

FORMAT_VERSION = 2      # kSnapshotFormatVersion (core/inventory/snapshot.h)
UVERBS_MAJOR = 231      # uverbsN = 231:(192+N), umadN = 231:N, issmN = 231:(64+N)
RDMA_CM_DEV = "10:58"   # misc major 10, dynamic minor (representative)


class Snapshot:
    def __init__(self, name, kernel_links=False, parent=HERE):
        """kernel_links: write a link to an ancestor directory (a netdev's or an
        RDMA device's `device`) as the kernel does, ending in the target's name
        (`../../../0000:00:0b.0`, whose base name is the PCI address) rather
        than the shorter `../..`. parent: the directory the snapshot is made in."""
        self.root = os.path.join(parent, name)
        self.kernel_links = kernel_links
        if os.path.exists(self.root):
            shutil.rmtree(self.root)
        os.makedirs(self.root)
        self.links = []          # netlink.json "links"
        self.routes = []         # netlink.json "routes" (every table but local)
        self.rules = []          # netlink.json "rules"
        self.neighbors = []      # netlink.json "neighbors" (permanent entries)
        self.ifindex = 0
        self.uverbs = 0
        self.umad = 0

    # -- primitives ---------------------------------------------------------
    def file(self, rel, content):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(content)

    def dir(self, rel):
        os.makedirs(os.path.join(self.root, rel), exist_ok=True)

    def link(self, rel, target_rel):
        """Symlink root/rel -> root/target_rel, written as a relative link."""
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        target = os.path.relpath(os.path.join(self.root, target_rel), os.path.dirname(path))
        if self.kernel_links and all(part == ".." for part in target.split("/")):
            # kernfs climbs to the first proper ancestor of the target, then names it.
            target = os.path.join(target, "..", os.path.basename(target_rel))
        os.symlink(target, path)

    def json(self, rel, value):
        self.file(rel, json.dumps(value, indent=2, sort_keys=True) + "\n")

    # -- sysfs building blocks ----------------------------------------------
    def pci_function(self, devpath, cls, vendor, device, subsys_vendor, subsys_device, numa,
                     driver=None, extra=None):
        bdf = os.path.basename(devpath)
        self.file(f"{devpath}/class", f"0x{cls:06x}\n")
        self.file(f"{devpath}/vendor", f"0x{vendor:04x}\n")
        self.file(f"{devpath}/device", f"0x{device:04x}\n")
        self.file(f"{devpath}/subsystem_vendor", f"0x{subsys_vendor:04x}\n")
        self.file(f"{devpath}/subsystem_device", f"0x{subsys_device:04x}\n")
        self.file(f"{devpath}/numa_node", f"{numa}\n")
        for key, value in (extra or {}).items():
            self.file(f"{devpath}/{key}", f"{value}\n")
        # What the kernel's dev_uevent and pci_uevent write for the function.
        self.file(f"{devpath}/uevent",
                  (f"DRIVER={driver}\n" if driver else "") +
                  f"PCI_CLASS={cls:X}\nPCI_ID={vendor:04X}:{device:04X}\n"
                  f"PCI_SUBSYS_ID={subsys_vendor:04X}:{subsys_device:04X}\nPCI_SLOT_NAME={bdf}\n"
                  f"MODALIAS=pci:v{vendor:08X}d{device:08X}sv{subsys_vendor:08X}sd{subsys_device:08X}"
                  f"bc{cls >> 16:02X}sc{(cls >> 8) & 0xff:02X}i{cls & 0xff:02X}\n")
        if driver:
            self.dir(f"sys/bus/pci/drivers/{driver}")
            self.link(f"{devpath}/driver", f"sys/bus/pci/drivers/{driver}")
        self.link(f"sys/bus/pci/devices/{bdf}", devpath)

    def bridge(self, devpath, numa, device=0x1979):
        # PCIe bridge / switch port (class 0x0604); ids are representative.
        self.pci_function(devpath, 0x060400, 0x15b3, device, 0x15b3, 0x0000, numa, driver="pcieport")

    def netdev(self, parent, name, mac, mtu, arp_type=1, flags=0x1003, operstate="up", kind="",
               addresses=(), master=None, alias="", speed=None):
        """speed: the link speed in Mb/s (class/net/<if>/speed), when the node type's is known."""
        self.ifindex += 1
        base = f"{parent}/net/{name}" if parent else f"sys/devices/virtual/net/{name}"
        for key, value in (("address", mac), ("mtu", mtu), ("type", arp_type), ("flags", f"0x{flags:x}"),
                           ("operstate", operstate), ("ifindex", self.ifindex), ("iflink", self.ifindex),
                           ("ifalias", alias)):
            self.file(f"{base}/{key}", f"{value}\n")
        if speed is not None:
            self.file(f"{base}/speed", f"{speed}\n")
        if parent:
            self.link(f"{base}/device", parent)
        if master:
            self.link(f"{base}/master", f"sys/class/net/{master}")
        self.link(f"sys/class/net/{name}", base)
        # The link as the node's rtnetlink dump gives it, which is what
        # discovery reads on a snapshot (the sysfs files above say the same).
        entry = {"name": name, "kind": kind, "addresses": list(addresses), "ifindex": self.ifindex,
                 "flags": flags, "mtu": mtu, "arpType": arp_type, "parentIndex": self.ifindex,
                 "operstate": operstate, "mac": mac, "alias": alias}
        if master:
            entry["master"] = master
        self.links.append(entry)
        return self.ifindex

    def rdma_device(self, parent, name, link_layer, netdev=None, umad=True, issm=True, rate=None,
                    node_type="1: CA"):
        """rate: the port's rate as the kernel prints it (ports/1/rate), e.g. "400 Gb/sec (4X NDR)".
        node_type: as the kernel prints it (node_type), e.g. "7: unspecified" for EFA."""
        base = f"{parent}/infiniband/{name}"
        self.file(f"{base}/node_type", f"{node_type}\n")
        self.file(f"{base}/ports/1/link_layer", f"{link_layer}\n")
        self.file(f"{base}/ports/1/state", "4: ACTIVE\n")
        if rate is not None:
            self.file(f"{base}/ports/1/rate", f"{rate}\n")
        if netdev:
            self.file(f"{base}/ports/1/gid_attrs/ndevs/0", f"{netdev}\n")
        self.link(f"{base}/device", parent)
        self.link(f"sys/class/infiniband/{name}", base)
        n = self.uverbs
        self.uverbs += 1
        self.char_device(parent, "infiniband_verbs", f"uverbs{n}", name, f"{UVERBS_MAJOR}:{192 + n}")
        if umad:
            m = self.umad
            self.umad += 1
            self.char_device(parent, "infiniband_mad", f"umad{m}", name, f"{UVERBS_MAJOR}:{m}")
            if issm:
                self.char_device(parent, "infiniband_mad", f"issm{m}", name, f"{UVERBS_MAJOR}:{64 + m}")

    def char_device(self, parent, cls, name, ibdev, dev):
        base = f"{parent}/{cls}/{name}"
        self.file(f"{base}/ibdev", f"{ibdev}\n")
        self.file(f"{base}/dev", f"{dev}\n")
        self.link(f"sys/class/{cls}/{name}", base)

    def rdma_globals(self):
        self.file("sys/class/infiniband_verbs/abi_version", "6\n")
        self.file("sys/class/infiniband_mad/abi_version", "5\n")
        self.file("sys/devices/virtual/misc/rdma_cm/dev", f"{RDMA_CM_DEV}\n")
        self.link("sys/class/misc/rdma_cm", "sys/devices/virtual/misc/rdma_cm")

    def loopback(self):
        self.netdev(None, "lo", "00:00:00:00:00:00", 65536, arp_type=772, flags=0x9, operstate="unknown",
                    addresses=["127.0.0.1/8", "::1/128"])

    def dmi(self, **files):
        for key, value in files.items():
            self.file(f"sys/devices/virtual/dmi/id/{key}", f"{value}\n")
        self.link("sys/class/dmi/id", "sys/devices/virtual/dmi/id")

    def numa_nodes(self, cpulists):
        for index, cpulist in enumerate(cpulists):
            self.file(f"sys/devices/system/node/node{index}/cpulist", f"{cpulist}\n")

    def route(self, destination, interface, family="inet", gateway=None, source=None, scope="universe",
              table="main", metric=100, protocol=0, type="unicast"):
        """One netlink.json v2 route with a single next hop (docs/snapshots.md)."""
        entry = {"family": family, "destination": destination, "interface": interface, "scope": scope,
                 "table": table, "metric": metric, "protocol": protocol, "type": type}
        if gateway:
            entry["gateway"] = gateway
        if source:
            entry["source"] = source
        self.routes.append(entry)

    def default_route(self, interface, metric=100, family="inet", **kwargs):
        # protocol 0 (unspecified) unless given: these snapshots do not say
        # how the default route was installed.
        self.route("default", interface, family=family, metric=metric, **kwargs)

    def default_rules(self):
        """The rules the kernel installs in every network namespace."""
        for family, priority, table in (("inet", 0, "local"), ("inet", 32766, "main"), ("inet", 32767, "default"),
                                        ("inet6", 0, "local"), ("inet6", 32766, "main")):
            self.rules.append({"family": family, "priority": priority, "table": table, "action": "lookup"})

    def finish(self, node_name, source, description, readme):
        self.json("netlink.json", {"formatVersion": FORMAT_VERSION, "links": self.links, "routes": self.routes,
                                   "rules": self.rules, "neighbors": self.neighbors})
        self.json("dranet-snapshot.json", {"formatVersion": FORMAT_VERSION, "nodeName": node_name, "source": source,
                                           "description": description})
        self.file("README.md", readme.strip() + "\n")


def mac(*octets):
    return ":".join(f"{o:02x}" for o in octets)


VMBUS = "sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00"


def azure_vf_path(guid, domain, bus=0, dev=0):
    # Hyper-V vPCI: every passed-through function gets its own PCI domain
    # under a VMBus device, so each has a root bus of its own.
    return f"{VMBUS}/{guid}/pci{domain:04x}:{bus:02x}/{domain:04x}:{bus:02x}:{dev:02x}.0"


def azure_front_end(s, vf_domain, an_rdma_name):
    """eth0 (hv_netvsc on VMBus, default route) with its accelerated-networking VF."""
    hv = f"{VMBUS}/000d3a6f-5a3c-000d-3a6f-5a3c000d3a6f"
    s.file(f"{hv}/class_id", "{f8615163-df3e-46c5-913f-f2d2f965ed0e}\n")
    s.netdev(hv, "eth0", "00:0d:3a:6f:5a:3c", 1500, addresses=["10.224.0.5/16", "fe80::20d:3aff:fe6f:5a3c/64"])
    vf = azure_vf_path("7870a5b2-0001-4a6b-9c44-1e2f3a4b5c6d", vf_domain, 0, 2)
    s.pci_function(vf, 0x020000, 0x15b3, 0x101a, 0x15b3, 0x0190, 0, driver="mlx5_core")
    name = f"enP{vf_domain}s1"
    s.netdev(vf, name, "00:0d:3a:6f:5a:3c", 1500, flags=0x1803, master="eth0")
    s.rdma_device(vf, an_rdma_name, "Ethernet", netdev=name)
    s.default_route("eth0")


def azure_platform(s, cpulists, compute):
    """What every Azure snapshot shares: RDMA globals, DMI, NUMA nodes, IMDS."""
    s.rdma_globals()
    s.dmi(**AZURE_DMI)
    s.numa_nodes(cpulists)
    s.json("metadata/azure/metadata/instance", {"compute": compute, "network": AZURE_NETWORK})


def azure_compute(name, vm_size, placement_group, vmss, extra=None):
    compute = {
        "azEnvironment": "AzurePublicCloud", "location": "eastus2", "name": name, "osType": "Linux",
        "placementGroupId": placement_group, "platformFaultDomain": "0", "platformUpdateDomain": "0",
        "resourceGroupName": "mc_dranet-rg_dranet-aks_eastus2",
        "resourceId": f"/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
                      f"mc_dranet-rg_dranet-aks_eastus2/providers/Microsoft.Compute/virtualMachineScaleSets/"
                      f"{vmss}/virtualMachines/0",
        "subscriptionId": "00000000-0000-0000-0000-000000000000", "tagsList": [],
        "vmId": "5c08b38e-4d57-4c23-ac45-aca61037f084", "vmScaleSetName": vmss, "vmSize": vm_size, "zone": "1",
    }
    compute.update(extra or {})
    return compute


AZURE_NETWORK = {"interface": [{
    "ipv4": {"ipAddress": [{"privateIpAddress": "10.224.0.5", "publicIpAddress": ""}],
             "subnet": [{"address": "10.224.0.0", "prefix": "16"}]},
    "ipv6": {"ipAddress": []},
    "macAddress": "000D3A6F5A3C"}]}

AZURE_DMI = dict(sys_vendor="Microsoft Corporation", product_name="Virtual Machine",
                 chassis_asset_tag="7783-7084-3265-9085-8269-3286-77", chassis_vendor="Microsoft Corporation",
                 board_vendor="Microsoft Corporation")


def gb300():
    s = Snapshot("nd-gb300-v6")
    node = "aks-gpu-45139532-vmss000081"
    s.loopback()
    for i, numa in enumerate([0, 0, 1, 1]):
        domain = 0x0101 + i
        vf = azure_vf_path(f"00000101-{i:04x}-4c1f-8e0b-6f1d2c3b4a59", domain)
        s.pci_function(vf, 0x020700, 0x15b3, 0x101e, 0x15b3, 0x0240, numa, driver="mlx5_core")
        # Pods on these nodes see exactly uverbsN, umadN and rdma_cm (DRANET's GB300 example): no issm.
        s.rdma_device(vf, f"mlx5_{i}", "InfiniBand", issm=False, rate="800 Gb/sec (4X XDR)")
    # The front end's RDMA device registers last, so the IB VFs keep uverbs0..3.
    azure_front_end(s, 0x7870, "mlx5_an0")
    for i, (domain, numa) in enumerate([(0x0008, 0), (0x0009, 0), (0x0018, 1), (0x0019, 1)]):
        root = f"{VMBUS}/00000008-{i:04x}-4f4e-9d3c-2a1b0c9d8e7f/pci{domain:04x}:00"
        port = f"{root}/{domain:04x}:00:00.0"
        s.bridge(port, numa)
        s.pci_function(f"{port}/{domain:04x}:06:00.0", 0x030200, 0x10de, 0x31c2, 0x10de, 0x0000, numa,
                       driver="nvidia")
    azure_platform(s, ["0-63", "64-127"], azure_compute(node.replace("vmss", "vmss_"), "Standard_ND128isr_GB300_v6",
                                "c6c749e8-a38b-470e-8c94-2a7d00001bf0", "aks-gpu-45139532-vmss",
                                {"interconnectGroupId": "2deed8b4-d1e9-42be-a40a-9882201aa9f5",
                                 "interconnectSubgroupId": "0f0ba375-aaf1-4ac8-a579-a3b180d47de5"}))
    s.finish(node, "representative", "Azure ND GB300 v6 (Standard_ND128isr_GB300_v6), IB-only VFs", f"""
# nd-gb300-v6 — Azure ND GB300 v6 (`Standard_ND128isr_GB300_v6`)

Node name: `{node}`. Generated by `tests/nodes/generate.py`; not a capture.

## From published material (kubernetes-sigs/dranet's AKS GB300 example: ResourceSlices and claim templates in `examples/azure_aks_examples/gb300/`)
- 4 ConnectX VFs `0101:00:00.0` … `0104:00:00.0`, PCI `15b3:101e`, subsystem device `0240`, class
  InfiniBand, RDMA devices `mlx5_0` … `mlx5_3`, NUMA nodes 0, 0, 1, 1, no netdev (IPoIB not used).
- Char devices per NIC: `uverbsN`, `umadN` (N = NIC index) plus `rdma_cm`.
- GPUs `0008:06:00.0`, `0009:06:00.0`, `0018:06:00.0`, `0019:06:00.0` (NVIDIA, NUMA 0, 0, 1, 1; PCIe
  roots `pci0008:00` … `pci0019:00`).
- IMDS: `vmSize`, `placementGroupId` `c6c749e8-a38b-470e-8c94-2a7d00001bf0`, `interconnectGroupId`,
  `interconnectSubgroupId` (the last two only appear with api-version 2025-11-11, which DRANET uses).
- DMI `sys_vendor` and `chassis_asset_tag` as Azure VMs report them.
- 800 Gb/s InfiniBand per VF: each port's `rate` reads `800 Gb/sec (4X XDR)`, the kernel's form for
  that line rate (the string itself is not a capture).

## Representative (not published; chosen to be plausible)
- The Hyper-V VMBus device paths and GUIDs, the GPUs' PCI device id (`0x31c2`), the bridge above each GPU,
  `rdma_cm`'s minor number, the uverbs/umad minors (kernel defaults). No issm devices: the published
  pod listing shows only uverbsN, umadN and rdma_cm.
- The front-end NIC: `eth0` (hv_netvsc, default route) with its accelerated-networking VF `enP30832s1`
  (`7870:00:02.0`, `15b3:101a`, RDMA device `mlx5_an0`, enslaved to `eth0`); addresses; CPU lists;
  the IMDS fields other than those listed above; the node's location and ids.
""")


def mi300x():
    s = Snapshot("nd-mi300x-v5")
    node = "aks-gpu-37973606-vmss000000"
    s.loopback()
    for i in range(8):
        numa = 0 if i < 4 else 1
        domain = 0x0101 + i
        vf = azure_vf_path(f"00000101-{i:04x}-47aa-b1c2-5d6e7f8091a2", domain)
        s.pci_function(vf, 0x020700, 0x15b3, 0x101e, 0x15b3, 0x0101, numa, driver="mlx5_core")
        # Azure HPC images load ib_ipoib: ib0..ib7 exist; DRANET runs with
        # --move-ib-interfaces=false so they are ignored (skip_ipoib).
        guid = f"00:00:01:07:fe:80:00:00:00:00:00:00:00:15:5d:ff:fd:34:{0x10 + i:02x}:{0x20 + i:02x}"
        s.netdev(vf, f"ib{i}", guid, 4092, arp_type=32, kind="ipoib", addresses=[f"172.16.{i}.5/16"],
                 speed=400000)
        s.rdma_device(vf, f"mlx5_{i}", "InfiniBand", issm=False, rate="400 Gb/sec (4X NDR)")  # as GB300: no issm
    azure_front_end(s, 0x6a4f, "mlx5_an0")
    for i in range(8):
        numa = 0 if i < 4 else 1
        domain = 0x0002 + i
        root = f"{VMBUS}/00000002-{i:04x}-4a3b-8c7d-9e0f1a2b3c4d/pci{domain:04x}:00"
        s.pci_function(f"{root}/{domain:04x}:00:00.0", 0x120000, 0x1002, 0x74a1, 0x1002, 0x74a1, numa,
                       driver="amdgpu")
    azure_platform(s, ["0-47", "48-95"], azure_compute(node.replace("vmss", "vmss_"), "Standard_ND96isr_MI300X_v5",
                                                       "c0104dd3-6665-45bf-afde-b2f35e590b93",
                                                       "aks-gpu-37973606-vmss"))
    s.finish(node, "representative", "Azure ND MI300X v5 (Standard_ND96isr_MI300X_v5), IB-only VFs", f"""
# nd-mi300x-v5 — Azure ND MI300X v5 (`Standard_ND96isr_MI300X_v5`)

Node name: `{node}`. Generated by `tests/nodes/generate.py`; not a capture.

## From published material (kubernetes-sigs/dranet's AKS MI300X example slice, `examples/azure_aks_examples/mi300x/`)
- 8 ConnectX-7 VFs `0101:00:00.0` … `0108:00:00.0`, PCI `15b3:101e`, subsystem device `0101`, class
  InfiniBand, RDMA devices `mlx5_0` … `mlx5_7`, NUMA 0 for the first four, 1 for the rest.
- 8 AMD Instinct MI300X GPUs (`1002:74a1`), 4 per NUMA node.
- IMDS `vmSize` and `placementGroupId` `c0104dd3-6665-45bf-afde-b2f35e590b93`; DMI as Azure reports it.
- 400 Gb/s InfiniBand per VF: each port's `rate` reads `400 Gb/sec (4X NDR)` and each IPoIB netdev's
  `speed` `400000` (Mb/s), the kernel's forms for that line rate (not captures).

## Representative (not published)
- IPoIB netdevs `ib0` … `ib7` (kind `ipoib`, MTU 4092, addresses): DRANET's Azure setup runs with
  `--move-ib-interfaces=false`, so discovery is expected to run with `skip_ipoib` here.
- GPU PCI addresses (`0002:00:00.0` … `0009:00:00.0`), their class (`0x1200`), VMBus paths and GUIDs,
  char-device minors, `rdma_cm`'s minor, the front-end NIC (`eth0` + accelerated-networking VF
  `enP27215s1` / `mlx5_an0`), addresses, CPU lists and the remaining IMDS fields.
""")


def a4():
    s = Snapshot("a4-highgpu-8g")
    node = "gke-a4-cluster-a4-highgpu-8g-7f3c9b2e-x8kq"
    s.loopback()
    interfaces = []
    # Two gVNICs on the root bus: eth0 carries the default route.
    for index, (name, dev, address, network) in enumerate([("eth0", 4, "10.128.0.70", "default"),
                                                            ("eth1", 5, "10.0.1.2", "gvnic-net-1")]):
        path = f"sys/devices/pci0000:00/0000:00:{dev:02x}.0"
        s.pci_function(path, 0x020000, 0x1ae0, 0x0042, 0x1ae0, 0x0058, 0, driver="gve")
        m = mac(0x42, 0x01, 0x0a, 0x80, 0x00, 0x46 + index)
        s.netdev(path, name, m, 1460, addresses=[f"{address}/32"])
        interfaces.append(gce_nic(m, address, network, 1460))
        gce_dhcp_routes(s, name, address, primary=(name == "eth0"))
    # Four PCIe switches, two GPU+NIC pairs each; every pair has its own
    # second-level switch, so NIC N is one hop from GPU N (nvidia-smi: PIX)
    # and both share the root `pci0000:<R>`.
    for switch, root_bus in enumerate([0x04, 0x0f, 0xb4, 0xbf]):
        numa = 0 if switch < 2 else 1
        root = f"sys/devices/pci0000:{root_bus:02x}"
        port = f"{root}/0000:{root_bus:02x}:00.0"
        upstream = f"{port}/0000:{root_bus + 1:02x}:00.0"
        s.bridge(port, numa, 0x1b01)
        s.bridge(upstream, numa, 0xc030)
        for pair in range(2):
            gpu = switch * 2 + pair
            base = root_bus + 3 + pair * 4
            down = f"{upstream}/0000:{root_bus + 2:02x}:{pair:02x}.0"
            sub_up = f"{down}/0000:{base:02x}:00.0"
            s.bridge(down, numa, 0xc030)
            s.bridge(sub_up, numa, 0xc030)
            nic_port = f"{sub_up}/0000:{base + 1:02x}:00.0"
            gpu_port = f"{sub_up}/0000:{base + 1:02x}:01.0"
            s.bridge(nic_port, numa, 0xc030)
            s.bridge(gpu_port, numa, 0xc030)
            nic = f"{nic_port}/0000:{base + 2:02x}:00.0"
            s.pci_function(nic, 0x020000, 0x15b3, 0x1021, 0x15b3, 0x0041, numa, driver="mlx5_core")
            name = f"gpu{gpu}rdma0"
            m = mac(0x9a, 0x41, 0x2e, 0x4f, 0x80 + gpu, 0x16)
            s.netdev(nic, name, m, 8896, addresses=[f"192.168.{gpu + 1}.4/32", f"fe80::9841:2eff:fe4f:{0x80 + gpu:x}16/64"],
                     speed=400000)
            s.rdma_device(nic, f"mlx5_{gpu}", "Ethernet", netdev=name, rate="400 Gb/sec (4X NDR)")
            s.pci_function(f"{gpu_port}/0000:{base + 3:02x}:00.0", 0x030200, 0x10de, 0x2901, 0x10de, 0x1999,
                           numa, driver="nvidia")
            interfaces.append(gce_nic(m, f"192.168.{gpu + 1}.4", "a4-rdma-roce", 8896))
            gce_dhcp_routes(s, name, f"192.168.{gpu + 1}.4")
    s.routes.sort(key=route_dump_order)  # as the kernel dumps table main
    s.default_rules()
    s.rdma_globals()
    s.dmi(sys_vendor="Google", product_name="Google Compute Engine", chassis_vendor="Google",
          board_vendor="Google", chassis_asset_tag="")
    s.numa_nodes(["0-55,112-167", "56-111,168-223"])
    gce = "metadata/gce/computeMetadata/v1/instance"
    s.file(f"{gce}/name", node)
    s.file(f"{gce}/machine-type", "projects/123456789012/machineTypes/a4-highgpu-8g")
    s.file(f"{gce}/attributes/physical_host", "/c2a4d6e8f0b1/1f3e5d7c/0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d")
    s.json(f"{gce}/network-interfaces/index", interfaces)
    s.finish(node, "representative", "GKE A4 (a4-highgpu-8g), 8 x B200, 8 RoCE NICs", f"""
# a4-highgpu-8g — GKE A4 (`a4-highgpu-8g`, 8 × NVIDIA B200)

Node name: `{node}`. Generated by `tests/nodes/generate.py`; not a capture.

## From published material (kubernetes-sigs/dranet's GKE RDMA docs and demo: `site/content/docs/user/gke-rdma.md`, `examples/demo_gke_rdma/`)
- 8 ConnectX-7 RoCE NICs (`15b3:1021`) with netdevs `gpu0rdma0` … `gpu7rdma0`, RDMA devices `mlx5_0` …
  `mlx5_7`, MTU 8896, one /32 address each (`192.168.1.4` … `192.168.8.4`), NICs 0–3 on NUMA 0 and 4–7 on
  NUMA 1; `gpu7rdma0` on PCI bus `c8`. NIC N sits under the same PCIe switch as GPU N.
- 2 gVNICs (`1ae0:0042`): `eth0` is the default uplink, `eth1` a second VPC.
- GCE metadata paths and shapes (`instance/machine-type` = `…/machineTypes/a4-highgpu-8g`,
  `instance/network-interfaces/?recursive=true&alt=json`, `instance/attributes/physical_host`).
- DMI `product_name` "Google Compute Engine".
- 400 Gb/s per RoCE NIC: each `gpuNrdma0`'s `speed` reads `400000` (Mb/s) and its RDMA port's `rate`
  `400 Gb/sec (4X NDR)`, the kernel's forms for that line rate (not captures; the gVNICs carry no
  `speed`).

## Representative (not published)
- Every PCI address except `gpu7rdma0`'s bus: the switch layout (four switches, two GPU+NIC pairs each,
  one second-level switch per pair), bridge ids, GPU buses (NCCL logs show GPUs on buses `8f`, `90`, `97`,
  `c4`, `cb`, `cc` on some nodes; this layout does not reproduce them), the B200 subsystem id.
- MAC addresses, gVNIC addresses, network names, project number, `physical_host`, CPU lists, char-device
  minors and `rdma_cm`'s minor.

## Routes and rules (`netlink.json`)
Layout from public material, values representative. GCE's DHCP server answers with a /32 address and
classless static routes (DHCP option 121, RFC 3442); the default route goes to `nic0` only
(cloud.google.com/compute/docs/instances/create-instance-multiple-nics: "Each compute instance receives
a default route using DHCP Option 121 ... associated with nic0"; also
cloud.google.com/vpc/docs/create-use-multiple-interfaces).
Published `ip route` output of GCE VMs shows the primary NIC as
`default via 10.128.0.1 dev ens4 proto dhcp src 10.128.0.x metric 100` plus
`10.128.0.1 dev ens4 proto dhcp scope link src 10.128.0.x metric 100`. Here, in table `main`:
- `eth0`: that pair (`default via 10.128.0.1`, `10.128.0.1 scope link`), proto dhcp, src `10.128.0.70`, metric 100.
- every other NIC (`eth1`, `gpuNrdma0`): `<gw> dev <nic> proto dhcp scope link src <ip> metric 100` and
  `<subnet>/24 via <gw> dev <nic> proto dhcp src <ip> metric 100`, gateway = first address of the subnet
  (as the metadata's `gateway`): `192.168.(N+1).1` and `192.168.(N+1).0/24` for `gpuNrdma0`, `10.0.1.1`
  and `10.0.1.0/24` for `eth1`. The /24 subnet size is representative (the metadata only says
  `subnetmask` 255.255.255.255); no public capture of this per-NIC subnet route was found.
- Rules: the kernel's defaults only (0 local, 32766 main, 32767 default; IPv6 0 and 32766). No
  permanent neighbours, no IPv6 routes (the `fe80::/64` kernel routes a real node has are left out).
""")


def gce_dhcp_routes(s, name, ip, primary=False):
    """Routes the GCE DHCP server gives a NIC with a /32 address (option 121): a
    link-scope route to the subnet gateway (the first address of the subnet,
    as `gateway` in the metadata), then the default route for nic0 or the
    subnet's /24 via the gateway for every other NIC. dhclient / networkd
    install them with proto dhcp, metric 100 and the NIC's address as src."""
    gateway = ip.rsplit(".", 1)[0] + ".1"
    s.route(f"{gateway}/32", name, scope="link", source=ip, protocol="dhcp")
    if primary:
        s.default_route(name, gateway=gateway, source=ip, protocol="dhcp")
    else:
        s.route(ip.rsplit(".", 1)[0] + ".0/24", name, gateway=gateway, source=ip, protocol="dhcp")


def route_dump_order(route):
    """IPv4 routes of one table in the order the kernel's FIB trie dumps them."""
    destination = "0.0.0.0/0" if route["destination"] == "default" else route["destination"]
    address, length = destination.split("/")
    return tuple(int(octet) for octet in address.split(".")), int(length)


def gce_nic(m, ip, network, mtu):
    return {"accessConfigs": [], "dnsServers": ["169.254.169.254"], "forwardedIps": [],
            "gateway": ip.rsplit(".", 1)[0] + ".1", "ip": ip, "ipAliases": [], "mac": m, "mtu": mtu,
            "network": f"projects/123456789012/networks/{network}", "subnetmask": "255.255.255.255",
            "targetInstanceIps": []}


def sriov(vfs_per_pf=64, parent=HERE):
    """8 PFs with `vfs_per_pf` VFs each (at most 254 each: one PCI bus per PF)."""
    s = Snapshot(f"sriov-8pf-{vfs_per_pf}vf", parent=parent)
    node = "sriov-synthetic-node"
    s.loopback()
    uplink = "sys/devices/pci0000:00/0000:00:03.0"
    s.pci_function(uplink, 0x020000, 0x1af4, 0x1041, 0x1af4, 0x0001, 0, driver="virtio-pci")
    s.netdev(f"{uplink}/virtio0", "eth0", mac(0x52, 0x54, 0, 0x12, 0x34, 0x56), 1500,
             addresses=["192.0.2.10/24"])
    s.default_route("eth0")
    rdma_index = 8
    for pf in range(8):
        numa = 0 if pf < 4 else 1
        root_bus = [0x16, 0x29, 0x3c, 0x4f, 0x97, 0xaa, 0xbd, 0xd0][pf]
        port = f"sys/devices/pci{0:04x}:{root_bus:02x}/0000:{root_bus:02x}:00.0"
        s.bridge(port, numa)
        bus = root_bus + 1
        pf_path = f"{port}/0000:{bus:02x}:00.0"
        s.pci_function(pf_path, 0x020000, 0x15b3, 0x101d, 0x15b3, 0x0016, numa, driver="mlx5_core",
                       extra={"sriov_totalvfs": vfs_per_pf, "sriov_numvfs": vfs_per_pf})
        pf_name = f"pf{pf}"
        s.netdev(pf_path, pf_name, mac(0x0c, 0x42, 0xa1, pf, 0, 0), 9000, addresses=[f"10.{pf}.0.1/16"])
        s.rdma_device(pf_path, f"mlx5_{pf}", "Ethernet", netdev=pf_name)
        for vf in range(vfs_per_pf):
            function = vf + 2
            vf_path = f"{port}/0000:{bus:02x}:{function // 8:02x}.{function % 8}"
            s.pci_function(vf_path, 0x020000, 0x15b3, 0x101e, 0x15b3, 0x0016, numa, driver="mlx5_core")
            s.link(f"{vf_path}/physfn", pf_path)
            s.link(f"{pf_path}/virtfn{vf}", vf_path)
            vf_name = f"pf{pf}vf{vf}"
            s.netdev(vf_path, vf_name, mac(0x0c, 0x42, 0xa1, pf, 1, vf), 9000)
            s.rdma_device(vf_path, f"mlx5_{rdma_index}", "Ethernet", netdev=vf_name, umad=False)
            rdma_index += 1
    s.rdma_globals()
    s.dmi(sys_vendor="QEMU", product_name="Standard PC (Q35 + ICH9, 2009)")
    s.numa_nodes(["0-31", "32-63"])
    s.finish(node, "synthetic", f"8 SR-IOV PFs x {vfs_per_pf} VFs, for scale", f"""
# sriov-8pf-{vfs_per_pf}vf — synthetic SR-IOV node (scale fixture)

Node name: `{node}`. Entirely synthetic (generated by `tests/nodes/generate.py`), modelled on a host
with 8 ConnectX-6 Dx PFs (`15b3:101d`) in SR-IOV mode, {vfs_per_pf} VFs each (`15b3:101e`): {8 + 8 * vfs_per_pf} network functions,
each with a netdev (`pfN`, `pfNvfM`) and a RoCE RDMA device (`mlx5_*`, uverbs for all, umad/issm for
PFs only). PFs 0–3 on NUMA 0, 4–7 on NUMA 1, one PCIe root per PF. A virtio `eth0` carries the default
route and must be excluded. Used by the discovery benchmark and slice-splitting tests.
""")


def link_local(m):
    """The IPv6 link-local address the kernel derives from an Ethernet MAC (EUI-64)."""
    octets = [int(x, 16) for x in m.split(":")]
    eui = [octets[0] ^ 0x02] + octets[1:3] + [0xff, 0xfe] + octets[3:]
    return str(ipaddress.IPv6Address(bytes([0xfe, 0x80] + [0] * 6 + eui))) + "/64"


def slaac(prefix, m):
    """The address SLAAC forms from a /64 prefix and an Ethernet MAC (EUI-64)."""
    host = int(ipaddress.IPv6Interface(link_local(m)).ip) & ((1 << 64) - 1)
    return str(ipaddress.IPv6Address(int(ipaddress.IPv6Network(prefix).network_address) | host)) + "/64"


def kernel_rules(s, extra_inet=()):
    """The kernel's default rules with `extra_inet` (IPv4 rules) between 0 and 32766."""
    s.rules.append({"family": "inet", "priority": 0, "table": "local", "action": "lookup"})
    s.rules.extend(extra_inet)
    for family, priority, table in (("inet", 32766, "main"), ("inet", 32767, "default"),
                                    ("inet6", 0, "local"), ("inet6", 32766, "main")):
        s.rules.append({"family": family, "priority": priority, "table": table, "action": "lookup"})


# AWS p4d.24xlarge: the four PCIe roots, each with one EFA-enabled network
# card (an ENA netdev at <bus>:01.0 and its EFA at <bus>:1b.0) and two A100s
# (<bus>:1c.0, <bus>:1d.0), NUMA node of the root, and each card's ENA:
# (ifName, MAC, IPv4). ens33 (card 0) is the primary ENI with the default route.
AWS_P4D_CARDS = [
    (0x10, 0, "ens33", mac(0x0e, 0x7b, 0x15, 0x4c, 0xd2, 0x39), "192.168.153.160"),
    (0x20, 0, "ens65", "0e:96:fe:e8:a3:f5", "192.168.155.224"),
    (0x90, 1, "ens129", "0e:3e:8a:cc:9f:b3", "192.168.144.206"),
    (0xa0, 1, "ens161", "0e:0b:90:44:2f:6f", "192.168.146.128"),
]


def aws_p4d():
    s = Snapshot("aws-p4d", kernel_links=True)
    node = "ip-192-168-153-160.ec2.internal"
    s.loopback()
    gateway = "192.168.128.1"
    main_routes, table_routes, rules = [], [], []
    for card, (bus, numa, name, m, ip) in enumerate(AWS_P4D_CARDS):
        root = f"sys/devices/pci0000:{bus:02x}"
        ena = f"{root}/0000:{bus:02x}:01.0"
        s.pci_function(ena, 0x020000, 0x1d0f, 0xec20, 0x1d0f, 0xec20, numa, driver="ena")
        s.netdev(ena, name, m, 9001, addresses=[f"{ip}/19"])
        # No BPF programs on the ENAs (the published slice: dra.net/ebpf false).
        s.links[-1].update(tcFilterNames=[], tcxProgramNames=[])
        efa = f"{root}/0000:{bus:02x}:1b.0"
        s.pci_function(efa, 0x020000, 0x1d0f, 0xefa0, 0x1d0f, 0xefa0, numa, driver="efa")
        # No netdev and no MAD interface: uverbsN only (plus rdma_cm).
        s.rdma_device(efa, f"rdmap{bus}s27", "Unknown", umad=False, rate="100 Gb/sec (4X EDR)",
                      node_type="7: unspecified")
        for dev in (0x1c, 0x1d):
            s.pci_function(f"{root}/0000:{bus:02x}:{dev:02x}.0", 0x030200, 0x10de, 0x20b0, 0x10de, 0x134f, numa,
                           driver="nvidia")
        # amazon-ec2-net-utils: route metric 512 + 10 x device number; the
        # DHCP routes of a secondary ENI go to table 10000 + device number,
        # selected by a rule on its address.
        metric = 512 + 10 * card
        main_routes.append(("192.168.128.0/19", name, dict(scope="link", source=ip, protocol="kernel", metric=metric)))
        if card == 0:
            main_routes.append(("default", name, dict(gateway=gateway, source=ip, protocol="dhcp", metric=metric)))
            main_routes.append((f"{gateway}/32", name, dict(scope="link", source=ip, protocol="dhcp", metric=metric)))
        else:
            table = 10000 + card
            table_routes.append(("default", name, dict(gateway=gateway, source=ip, protocol="dhcp", metric=metric,
                                                       table=table)))
            table_routes.append((f"{gateway}/32", name, dict(scope="link", source=ip, protocol="dhcp", metric=metric,
                                                             table=table)))
            rules.append({"family": "inet", "priority": table, "source": f"{ip}/32", "table": table,
                          "action": "lookup"})
    # Dump order: tables 10001-10003 (hash buckets 17-19) before main (254).
    for destination, name, kwargs in table_routes + sorted(
            main_routes, key=lambda r: route_dump_order({"destination": r[0]})):
        s.route(destination, name, **kwargs)
    kernel_rules(s, rules)
    s.rdma_globals()
    s.dmi(sys_vendor="Amazon EC2", product_name="p4d.24xlarge", board_vendor="Amazon EC2", bios_vendor="Amazon EC2",
          chassis_asset_tag="Amazon EC2", chassis_vendor="Amazon EC2")
    s.numa_nodes(["0-23,48-71", "24-47,72-95"])
    imds = "metadata/aws/latest"
    s.json(f"{imds}/dynamic/instance-identity/document", {
        "accountId": "123456789012", "architecture": "x86_64", "availabilityZone": "us-east-1a",
        "billingProducts": None, "devpayProductCodes": None, "imageId": "ami-0c4e2a6b8d0f13579",
        "instanceId": "i-0a1b2c3d4e5f60718", "instanceType": "p4d.24xlarge", "kernelId": None,
        "marketplaceProductCodes": None, "pendingTime": "2026-06-02T09:14:27Z", "privateIp": "192.168.153.160",
        "ramdiskId": None, "region": "us-east-1", "version": "2017-09-30"})
    s.file(f"{imds}/meta-data/placement/availability-zone-id", "use1-az4")
    s.file(f"{imds}/meta-data/placement/group-name", "p4d-efa-cluster-pg")
    s.finish(node, "representative", "AWS p4d.24xlarge (8 x A100), 4 EFA + 4 ENA", f"""
# aws-p4d — AWS `p4d.24xlarge` (8 × NVIDIA A100-SXM4-40GB, 4 EFA)

Node name: `{node}`. Generated by `tests/nodes/generate.py`; not a capture.

## From published material (kubernetes-sigs/dranet's EKS GPU + EFA example: `examples/aws_eks_examples/gpu-efa/` — `resourceslice-dranet.yaml`, `resourceslice-gpu.yaml`, `README.md`)
- Four PCIe roots `pci0000:10`, `pci0000:20` (NUMA 0), `pci0000:90`, `pci0000:a0` (NUMA 1), each with
  one EFA at `<bus>:1b.0` (PCI `1d0f:efa0`, subsystem device `efa0`, RDMA devices `rdmap16s27`,
  `rdmap32s27`, `rdmap144s27`, `rdmap160s27`, no netdev) and two A100 GPUs at `<bus>:1c.0` and
  `<bus>:1d.0` (`gpu-0` … `gpu-7`).
- ENAs (PCI `1d0f:ec20`, subsystem device `ec20`) `ens65` (`0000:20:01.0`, `0e:96:fe:e8:a3:f5`,
  `192.168.155.224/19`), `ens129` (`0000:90:01.0`, `0e:3e:8a:cc:9f:b3`, `192.168.144.206/19`),
  `ens161` (`0000:a0:01.0`, `0e:0b:90:44:2f:6f`, `192.168.146.128/19`), MTU 9001, up.
- `ens33`, the default ENA on `pci0000:10`, is the uplink: DRANET does not publish it.
- No BPF programs on the ENAs (`dra.net/ebpf` false): `netlink.json` records empty
  `tcFilterNames`/`tcxProgramNames` for them.
- Drivers `efa`, `ena`, `nvidia`; the node name, whose `ec2.internal` domain is us-east-1's (region
  `us-east-1`). The IMDSv2 paths and the instance identity document's fields are as AWS documents
  them (`instanceType`, `region`, `availabilityZone`, `privateIp`, `version` `2017-09-30`, …).
- DMI as Nitro instances report it: `sys_vendor`, `board_vendor`, `bios_vendor`, `chassis_asset_tag`
  `Amazon EC2`, `product_name` the instance type.
- Kernel facts for EFA (Linux `drivers/infiniband/hw/efa`): the port reports no link layer
  (`IB_LINK_LAYER_UNSPECIFIED`, which `ports/1/link_layer` prints as `Unknown`; `ibv_devinfo` shows
  it as unspecified), `node_type` reads `7: unspecified`, the port's `rate` reads
  `100 Gb/sec (4X EDR)` (the driver reports 4X EDR; p4d.24xlarge has 400 Gb/s over four EFAs, 100
  each; DRANET's README says "400 Gb/s each"). No umad/issm: EFA has no MAD interface. The `rate`
  string is the kernel's format, not a capture; ENAs carry no `speed`.

## Representative (not published; chosen to be plausible)
- `ens33`'s PCI address `0000:10:01.0` (as the other ENAs), MAC, and address `192.168.153.160/19`
  (from the node name); the /19's gateway `192.168.128.1`.
- Routes and rules follow amazon-ec2-net-utils' published policy routing (route metric
  512 + 10 × device number; a secondary ENI's DHCP routes in table 10000 + device number, with a
  rule `from <address> lookup <table>` at that priority): `ens33` holds the main table's only
  default route (metric 512); `ens65`/`ens129`/`ens161` get device numbers 1/2/3 (metrics
  522/532/542, tables 10001–10003). The kernel prefix routes of the four /19s are in table main
  with each ENI's metric. No IPv6 addresses or routes.
- The flat PCI layout (every function on its root's bus, no bridges), GPU subsystem id `10de:134f`,
  NUMA CPU lists, char-device minors, `rdma_cm`'s minor, and the IMDS values other than those above
  (account, AMI, instance id, pending time, AZ `us-east-1a`, AZ id `use1-az4`, placement group
  `p4d-efa-cluster-pg`).
- No NVSwitch, NVMe or EBS functions (not network or GPU devices).
""")


# OCI BM.GPU.GB200-v3.4: the ConnectX-8 ports (PCI domain, NUMA node,
# (ifName, MAC) of functions 0 and 1) from DRANET's published slice.
OCI_GB200_NICS = [
    (0x0000, 0, [("rdma0", "60:5e:65:14:0f:10"), ("rdma1", "60:5e:65:14:0f:11")]),
    (0x0002, 0, [("rdma2", "60:5e:65:14:0f:40"), ("rdma3", "60:5e:65:14:0f:41")]),
    (0x0010, 1, [("rdma4", "60:5e:65:20:28:84"), ("rdma5", "60:5e:65:20:28:85")]),
    (0x0012, 1, [("rdma6", "60:5e:65:20:28:b4"), ("rdma7", "60:5e:65:20:28:b5")]),
]
# The management NICs named by the published slice's header: (domain, NUMA, ifName).
OCI_GB200_FRONT = [(0x0007, 0, "eth0"), (0x0017, 1, "eth1")]

OCI_DMI = dict(sys_vendor="Oracle Corporation", chassis_vendor="Oracle Corporation",
               chassis_asset_tag="OracleCloud.com")


def oci_instance(shape, instance_id, display_name):
    return {
        "availabilityDomain": "Uocm:US-ASHBURN-AD-1", "canonicalRegionName": "us-ashburn-1",
        "compartmentId": "ocid1.compartment.oc1..aaaaaaaa3fk66tpwuaxse2dvsebiw2jttrj4asvn3h63a2iv3xomdxleth5a",
        "displayName": display_name, "faultDomain": "FAULT-DOMAIN-1", "hostname": display_name,
        "id": instance_id,
        "image": "ocid1.image.oc1.iad.aaaaaaaamec5ntdwv5aagjpjjvmizzirxzn73o3twq35yupmuq4rpv5ehy6q",
        "ociAdName": "iad-ad-1", "region": "iad",
        "regionInfo": {"realmDomainComponent": "oraclecloud.com", "realmKey": "oc1", "regionIdentifier": "us-ashburn-1",
                       "regionKey": "IAD"},
        "shape": shape, "state": "Running", "timeCreated": 1780391667000,
    }


def oci_front_end(s, bdf, name, m, address=None, gateway=None):
    """An OCI front-end (VCN) NIC port: the primary VNIC when given an address
    (default route via the subnet's gateway), else down and unconfigured."""
    if not address:
        s.netdev(bdf, name, m, 9000, flags=0x1002, operstate="down")
        return
    s.netdev(bdf, name, m, 9000, addresses=[f"{address}/18"])
    s.route("default", name, gateway=gateway, source=address, protocol="dhcp", metric=100)
    s.route(ipaddress.ip_interface(f"{address}/18").network.with_prefixlen, name, scope="link", source=address,
            protocol="kernel", metric=100)


def oci_gb200():
    s = Snapshot("oci-gb200", kernel_links=True)
    node = "10.140.65.248"
    s.loopback()
    # Every function in PCI domain order, as the HCAs register: mlx5_4 is
    # eth0's (0007), mlx5_9 eth1's (0017).
    functions = [(d, numa, ports) for d, numa, ports in OCI_GB200_NICS] + \
                [(d, numa, name) for d, numa, name in OCI_GB200_FRONT]
    hca = 0
    for domain, numa, what in sorted(functions, key=lambda f: f[0]):
        root = f"sys/devices/pci{domain:04x}:00"
        port = f"{root}/{domain:04x}:00:00.0"
        s.bridge(port, numa)
        if isinstance(what, str):
            # BlueField-3 (NIC mode) front-end port; eth0 is the primary VNIC.
            nic = f"{port}/{domain:04x}:01:00.0"
            s.pci_function(nic, 0x020000, 0x15b3, 0xa2dc, 0x15b3, 0x0051, numa, driver="mlx5_core")
            m = mac(0x02, 0x00, 0x17, 0x0a, 0x41, 0xf8 if what == "eth0" else 0xf9)
            if what == "eth0":
                oci_front_end(s, nic, what, m, address=node, gateway="10.140.64.1")
            else:
                oci_front_end(s, nic, what, m)
            s.rdma_device(nic, f"mlx5_{hca}", "Ethernet", netdev=what)
            hca += 1
            continue
        # ConnectX-8: its PCIe switch (upstream and downstream port) above both functions.
        upstream = f"{port}/{domain:04x}:01:00.0"
        downstream = f"{upstream}/{domain:04x}:02:00.0"
        s.bridge(upstream, numa, 0x197b)
        s.bridge(downstream, numa, 0x197b)
        for function, (name, m) in enumerate(what):
            nic = f"{downstream}/{domain:04x}:03:00.{function}"
            s.pci_function(nic, 0x020000, 0x15b3, 0x1023, 0x15b3, 0x0071, numa, driver="mlx5_core",
                           extra={"sriov_totalvfs": 16, "sriov_numvfs": 0})
            prefix = f"2001:db8:8c:{0x100 + int(name[4:]):x}::/64"
            s.netdev(nic, name, m, 9000, addresses=[slaac(prefix, m), link_local(m)], speed=400000)
            s.rdma_device(nic, f"mlx5_{hca}", "Ethernet", netdev=name, rate="400 Gb/sec (4X NDR)")
            hca += 1
    for domain, numa in [(0x0008, 0), (0x0009, 0), (0x0018, 1), (0x0019, 1)]:
        port = f"sys/devices/pci{domain:04x}:00/{domain:04x}:00:00.0"
        s.bridge(port, numa)
        s.pci_function(f"{port}/{domain:04x}:06:00.0", 0x030200, 0x10de, 0x2941, 0x10de, 0x20d5, numa,
                       driver="nvidia")
    s.default_rules()
    s.rdma_globals()
    s.dmi(**OCI_DMI)
    s.numa_nodes(["0-71", "72-143"])
    host = "ocid1.computebaremetalhost.oc1.iad.anzxsljr52tswuacrtl2crvcb5utepdggc2lnosv5ryufz42abkeod3wm4zb"
    s.json("metadata/oci/opc/v2/host/index", {
        "id": host,
        "networkBlockId": "2e0b6ca9842e38fe7c2bedf293b9b1dd0f3d52e68dcf1897b77ee72305d89ae6",
        "rackId": "a50cc4303fe65f439091168d1cf9cd46389cf30bba14a9a55a46fbd232efc153",
        "rdmaTopologyData": {
            "customerGpuMemoryFabric":
                "ocid1.computegpumemoryfabric.oc1.iad.anzxsljr52tswuacjzzisb4yoeucx6bxyhkuhxkyhonyokwxmrzlemtlxh7a",
            "customerHPCIslandId":
                "ocid1.computehpcisland.oc1.iad.anzxsljr52tswuacilgz5lxox5z74c32h7kpasndhl5gzwajbhoxx5oc5hfd",
            "customerHostId": host,
            "customerLocalBlock":
                "ocid1.computelocalblock.oc1.iad.anzxsljr52tswuackr5rr3lhh6obnscn24yuo5wkdb5boasdny4vzn7fa5ma",
            "customerNetworkBlock":
                "ocid1.computenetworkblock.oc1.iad.anzxsljr52tswuacnk6rqshabqpcetn6waf6gngmmhpvkfdugrcg4lrjhqwq",
        }})
    s.json("metadata/oci/opc/v2/instance/index", oci_instance(
        "BM.GPU.GB200-v3.4",
        "ocid1.instance.oc1.iad.anuwcljreiukuzlxe2532wtyr5neyaifwpb277yfzwzhalmeubmttxl6tw2a",
        "oke-gb200-pool1-node-0"))
    s.finish(node, "representative", "OCI BM.GPU.GB200-v3.4 (4 x GB200), 8 ConnectX-8 RoCE ports", f"""
# oci-gb200 — OCI `BM.GPU.GB200-v3.4` (4 × NVIDIA GB200, 8 ConnectX-8 RoCE ports)

Node name: `{node}`. Generated by `tests/nodes/generate.py`; not a capture.

## From published material (kubernetes-sigs/dranet's OKE GB200 example: `examples/oci_oke_examples/BM.GPU.GB200-v3.4/` — `resourceslice-dranet.yaml`, `resourceslice-gpu.yaml`, `README.md`, `placement-group/`)
- 8 ConnectX-8 functions (`CX8 Family [ConnectX-8]`, PCI `15b3:1023`, driver `mlx5_core`) with
  netdevs `rdma0` … `rdma7` at `0000:03:00.0/.1`, `0002:03:00.0/.1` (NUMA 0), `0010:03:00.0/.1`,
  `0012:03:00.0/.1` (NUMA 1), PCIe roots `pci0000:00`, `pci0002:00`, `pci0010:00`, `pci0012:00`, the
  published MACs, MTU 9000, up, SR-IOV capable with no VFs (`sriov` true, `sriovVfs` 0).
- RDMA devices: `rdma0`–`rdma3` = `mlx5_0`–`mlx5_3`, `rdma4` = `mlx5_5` … `rdma7` = `mlx5_8` (DRANET's
  README; also the `NCCL_IB_HCA` list Oracle publishes for this shape in
  oracle-quickstart/oci-hpc-oke, `=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_5,mlx5_6,mlx5_7,mlx5_8`).
- Management NICs `eth0` at `0007:01:00.0` and `eth1` at `0017:01:00.0` (the published slice's header).
- GPUs `0008:06:00.0`, `0009:06:00.0` (NUMA 0), `0018:06:00.0`, `0019:06:00.0` (NUMA 1), each on its
  own root `pci0008:00` …; GPU↔NIC is `SYS` (C2C), so alignment is by NUMA node.
- RoCEv2 with an RA-assigned global IPv6 address on each RDMA port (`NCCL_IB_GID_INDEX=3`).
- 400 Gb/s per port ("4x NDR"): each `rdmaN`'s `speed` reads `400000` and its RDMA port's `rate`
  `400 Gb/sec (4X NDR)`, the kernel's forms for that line rate (not captures).
- IMDS `GET /opc/v2/host/` fields `networkBlockId`, `rackId` and `rdmaTopologyData`
  (`customerHPCIslandId`, `customerNetworkBlock`, `customerLocalBlock`, `customerGpuMemoryFabric`,
  `customerHostId`). The part after the last `.` of `customerLocalBlock`, `customerNetworkBlock` and
  `customerGpuMemoryFabric` is the value DRANET publishes and the placement-group templates select
  (`anzxsljr52tswuackr5…`, `anzxsljr52tswuacnk6…`, `anzxsljr52tswuacjzz…`).
- DMI `chassis_asset_tag` `OracleCloud.com` (how OCI instances are recognised) and `sys_vendor`
  `Oracle Corporation`.

## Representative (not published; chosen to be plausible)
- Which NIC carries the default route: `eth0` (primary VNIC, `10.140.65.248/18`, gateway `10.140.64.1`,
  proto dhcp, metric 100), so it is not published. The published slice's header lists `eth0` among
  the slice's devices; where that node's default route was is not published. `eth1` is down, without
  an address, and is published (RDMA device `mlx5_9`).
- The management NICs' type (BlueField-3 in NIC mode, `15b3:a2dc`), MACs, and their HCA names
  `mlx5_4`/`mlx5_9` (PCI-order naming; `mlx5_4` is the gap in the published mapping).
- The PCIe tree below each root (root port, ConnectX-8 switch ports at buses 01/02, the bridge above
  each GPU), bridge ids, subsystem ids, the GB200 PCI device id (`10de:2941`), `sriov_totalvfs` 16.
- IPv6 addresses: one documentation-prefix /64 per port (`2001:db8:8c:10N::/64`) with the SLAAC
  (EUI-64) host part, plus the link-local address; no IPv6 routes (no RA default routes). No IPv4 on
  the RDMA ports. No pod-networking virtual interfaces (`eth0v*`).
- The OCID type and region segments (`ocid1.computelocalblock.oc1.iad.` …), `customerHPCIslandId`,
  `customerHostId`/`id`, the hex `networkBlockId`/`rackId`, and every `/opc/v2/instance/` field but
  `shape`. No DMI `product_name`. CPU lists, char-device minors, `rdma_cm`'s minor.
""")


# OCI BM.GPU.H100.8: the eight dual-port ConnectX-7 cards (bus, NUMA node);
# NIC ports rdma(2i), rdma(2i+1) share a PCIe switch with GPU i, on bus + 3.
OCI_H100_CARDS = [(0x0c, 0), (0x2a, 0), (0x41, 0), (0x58, 0), (0x86, 1), (0xa5, 1), (0xbd, 1), (0xd5, 1)]
# Front-end ports (bus, NUMA, ifName): mlx5_2 and mlx5_11 in PCI order.
OCI_H100_FRONT = [(0x1f, 0, "eth0"), (0x9a, 1, "eth1")]


def oci_h100():
    s = Snapshot("oci-h100", kernel_links=True)
    node = "10.140.70.21"
    s.loopback()
    cards = [(bus, numa, None) for bus, numa in OCI_H100_CARDS] + list(OCI_H100_FRONT)
    hca = 0
    port_index = 0
    for bus, numa, front in sorted(cards):
        if front:
            root = f"sys/devices/pci0000:{bus - 1:02x}"
            port = f"{root}/0000:{bus - 1:02x}:01.0"
            s.bridge(port, numa)
            nic = f"{port}/0000:{bus:02x}:00.0"
            s.pci_function(nic, 0x020000, 0x15b3, 0x101d, 0x15b3, 0x0016, numa, driver="mlx5_core")
            m = mac(0x02, 0x00, 0x17, 0x0b, 0x46, 0x15 if front == "eth0" else 0x16)
            if front == "eth0":
                oci_front_end(s, nic, front, m, address=node, gateway="10.140.64.1")
            else:
                oci_front_end(s, nic, front, m)
            s.rdma_device(nic, f"mlx5_{hca}", "Ethernet", netdev=front)
            hca += 1
            continue
        # Root port -> switch upstream port -> downstream ports to the NIC
        # (bus) and to the GPU (bus + 3): nvidia-smi PIX between them.
        r = bus - 3
        root_port = f"sys/devices/pci0000:{r:02x}/0000:{r:02x}:01.0"
        upstream = f"{root_port}/0000:{r + 1:02x}:00.0"
        to_nic = f"{upstream}/0000:{r + 2:02x}:00.0"
        to_gpu = f"{upstream}/0000:{r + 2:02x}:03.0"
        s.bridge(root_port, numa)
        for bridge in (upstream, to_nic, to_gpu):
            s.bridge(bridge, numa, 0xc030)
        for function in range(2):
            nic = f"{to_nic}/0000:{bus:02x}:00.{function}"
            s.pci_function(nic, 0x020000, 0x15b3, 0x1021, 0x15b3, 0x0041, numa, driver="mlx5_core")
            name = f"rdma{port_index}"
            m = mac(0xa0, 0x88, 0xc2, 0x5e, bus, 0x10 + function)
            ip = f"192.168.{port_index}.17"
            s.netdev(nic, name, m, 4220, addresses=[f"{ip}/24", link_local(m)], speed=200000)
            s.route(f"192.168.{port_index}.0/24", name, scope="link", source=ip, protocol="kernel", metric=0)
            s.rdma_device(nic, f"mlx5_{hca}", "Ethernet", netdev=name, rate="200 Gb/sec (4X HDR)")
            hca += 1
            port_index += 1
        s.pci_function(f"{to_gpu}/0000:{bus + 3:02x}:00.0", 0x030200, 0x10de, 0x2330, 0x10de, 0x16c1, numa,
                       driver="nvidia")
    s.routes.sort(key=route_dump_order)  # as the kernel dumps table main
    s.default_rules()
    s.rdma_globals()
    s.dmi(**OCI_DMI)
    s.numa_nodes(["0-55,112-167", "56-111,168-223"])
    s.json("metadata/oci/opc/v2/host/index", {
        "id": "ocid1.computebaremetalhost.oc1.iad.anuwcljrcvf2jil36cku47tuuw2e4fdchkoyuye7mmyazq44y3fhqjl5ubzq",
        "networkBlockId": "518bcd9bfd0b14c95229b713be187a25ce769276f6830ba48fa315fa41f07332",
        "rackId": "86d900410823cc9b5e256abfb62cea7da65a3bc6f0d65239f7142a0dfdfbcbcc"})
    s.json("metadata/oci/opc/v2/instance/index", oci_instance(
        "BM.GPU.H100.8",
        "ocid1.instance.oc1.iad.anuwcljrkimv5dfwfp4pssd6x5z3yb3ri7m5v23xy3lgnbrst4htn45oxqia",
        "oke-h100-pool1-node-0"))
    s.finish(node, "representative", "OCI BM.GPU.H100.8 (8 x H100), 16 ConnectX-7 RoCE ports", f"""
# oci-h100 — OCI `BM.GPU.H100.8` (8 × NVIDIA H100 SXM5 80GB, 16 ConnectX-7 RoCE ports)

Node name: `{node}`. Generated by `tests/nodes/generate.py`; not a capture.

## From published material (kubernetes-sigs/dranet's OKE H100 example: `examples/oci_oke_examples/BM.GPU.H100.8/README.md`; Oracle's NCCL settings for this shape in oracle-quickstart/oci-hpc-oke `docs/recommended-nccl-rccl-parameters-by-shape.md`; Oracle's OCI HPC tutorial "NCCL Tests実行方法（BM.GPU.H100.8編）", oracle-japan/ocitutorials)
- 16 ConnectX-7 ports (8 dual-port cards, PCI `15b3:1021`) with netdevs `rdma0` … `rdma15` at
  `0000:{{0c,2a,41,58,86,a5,bd,d5}}:00.{{0,1}}` in that order (device names `pci-0000-0c-00-0` …
  `pci-0000-d5-00-1`); 2 NUMA nodes, each with 4 GPUs and 8 NIC ports.
- RDMA device names: the RDMA ports are `mlx5_0,mlx5_1,mlx5_3` … `mlx5_10,mlx5_12` … `mlx5_17`
  (Oracle's `NCCL_IB_HCA` for the shape); `mlx5_2` and `mlx5_11` are therefore the front-end ports.
  `NCCL_SOCKET_IFNAME=eth0`: the front-end netdev is `eth0`.
- 8 H100 SXM5 80GB GPUs (`10de:2330`) on buses `0f, 2d, 44, 5b, 89, a8, c0, d8` (the tutorial's
  nccl-tests device list), i.e. three buses below NIC card N.
- 3,200 Gb/s of RDMA per node over 16 ports: 200 Gb/s each; every `rdmaN`'s `speed` reads `200000`
  and its RDMA port's `rate` `200 Gb/sec (4X HDR)`, the kernel's forms for that line rate (not
  captures). RoCEv2, `NCCL_IB_GID_INDEX=3`.
- IMDS `GET /opc/v2/host/` without `rdmaTopologyData` (only `networkBlockId`, `rackId`), as DRANET's
  README describes for H100; DMI `chassis_asset_tag` `OracleCloud.com`, `sys_vendor` `Oracle Corporation`.

## Representative (not published; chosen to be plausible)
- The PCIe tree: one root per card (`pci0000:09`, `pci0000:27`, … three buses above the NIC), a
  switch below the root port with one downstream port to the NIC card and one to its GPU, so NIC
  ports `rdma2i`/`rdma2i+1` and GPU `i` are `PIX`; bridge ids; GPU, NIC and subsystem ids.
- Front-end ports: `eth0` (`0000:1f:00.0`, NUMA 0, ConnectX-6 Dx `15b3:101d`, `mlx5_2`) is the
  primary VNIC with the default route (`10.140.70.21/18`, gateway `10.140.64.1`, proto dhcp, metric
  100) and is not published; `eth1` (`0000:9a:00.0`, NUMA 1, `mlx5_11`) is down, without an address,
  and is published (the DRANET template's `ifName.startsWith("rdma")` keeps it out).
- MACs, MTU 4220 on the RDMA ports (RoCE MTU 4096 plus headers), IPv4 addresses (`192.168.N.17/24`
  on `rdmaN`, so GID index 3 is the RoCEv2 IPv4 GID) and their kernel prefix routes (metric 0);
  link-local IPv6 addresses, no IPv6 routes. No SR-IOV.
- IMDS values (OCIDs, hex `networkBlockId`/`rackId`, every `/opc/v2/instance/` field but `shape`);
  no DMI `product_name`; CPU lists (2 × 56 cores, SMT), char-device minors, `rdma_cm`'s minor.
""")


def alibaba_gn8is():
    s = Snapshot("alibaba-gn8is", kernel_links=True)
    node = "cn-hangzhou.192.168.8.210"
    address = "192.168.8.210"
    s.loopback()
    root = "sys/devices/pci0000:00"
    virtio = f"{root}/0000:00:05.0"
    s.pci_function(virtio, 0x020000, 0x1af4, 0x1000, 0x1af4, 0x0001, 0, driver="virtio-pci")
    s.netdev(f"{virtio}/virtio2", "eth0", mac(0x00, 0x16, 0x3e, 0x2a, 0x7c, 0x51), 1500,
             addresses=[f"{address}/18"])
    s.default_route("eth0", gateway="192.168.63.253", source=address, protocol="dhcp")
    s.route("192.168.0.0/18", "eth0", scope="link", source=address, protocol="kernel")
    erdma = f"{root}/0000:00:0b.0"
    s.pci_function(erdma, 0x00ff00, 0x1ded, 0x107f, 0x1ded, 0x107f, 0, driver="erdma")
    # The eRDMA engine serves the ENI's netdev: its port's GID 0 names eth0.
    s.rdma_device(erdma, "erdma_0", "Ethernet", netdev="eth0")
    for dev in (0x07, 0x08):
        s.pci_function(f"{root}/0000:00:{dev:02x}.0", 0x030200, 0x10de, 0x26ba, 0x10de, 0x1957, 0, driver="nvidia")
    s.default_rules()
    s.rdma_globals()
    s.dmi(sys_vendor="Alibaba Cloud", product_name="Alibaba Cloud ECS")
    s.numa_nodes(["0-31"])
    imds = "metadata/alibaba/latest/meta-data"
    s.file(f"{imds}/instance/instance-type", "ecs.gn8is-2x.8xlarge")
    s.file(f"{imds}/instance-id", "i-bp1d3c8x0hk2vq5m7f2a")
    s.file(f"{imds}/region-id", "cn-hangzhou")
    s.file(f"{imds}/zone-id", "cn-hangzhou-k")
    s.finish(node, "representative", "Alibaba ecs.gn8is-2x.8xlarge (2 x L20), one eRDMA", f"""
# alibaba-gn8is — Alibaba Cloud `ecs.gn8is-2x.8xlarge` (2 × NVIDIA L20, one eRDMA)

Node name: `{node}`. Generated by `tests/nodes/generate.py`; not a capture.

## From published material (kubernetes-sigs/dranet's ACK eRDMA example: `examples/alibaba_ack_examples/gpu-erdma/README.md`, `site/content/docs/user/alibaba-ack-erdma.md`)
- One eRDMA function `0000:00:0b.0` (driver `erdma`, PCI `1ded:107f` "Elastic RDMA Adapter", class
  `0x00ff` as DRANET's discovery notes it) with RDMA device `erdma_0`, published IB-only as
  `pci-0000-00-0b-0`; NCCL sees it as `erdma_0:1/RoCE` (link layer Ethernet) with its out-of-band
  traffic on `eth0`.
- 2 NVIDIA L20 GPUs (`10de:26ba`), 48 GB each; eRDMA reuses the VPC network (the ENI's netdev).
- IMDS paths `/latest/meta-data/instance-id` and `/latest/meta-data/instance/instance-type`
  (`ecs.gn8is-2x.8xlarge`), token-protected.
- DMI `sys_vendor` `Alibaba Cloud`, `product_name` `Alibaba Cloud ECS`.

## Representative (not published; chosen to be plausible)
- `eth0` (virtio-net at `0000:00:05.0`, MAC `00:16:3e:…`, MTU 1500, `192.168.8.210/18`, default route
  via the vSwitch gateway `192.168.63.253`, proto dhcp, metric 100) is the uplink and is not
  published. The eRDMA port's `gid_attrs/ndevs/0` names `eth0`, as for a RoCEv2-mode eRDMA device
  (`node_type` `1: CA`, with umad/issm); an iWARP-mode device would report `4: RNIC` instead.
- The GPUs' BDFs (`0000:00:07.0`, `0000:00:08.0`), subsystem ids, a flat root bus, one NUMA node
  (`numa_node` 0), CPU list, node name, instance id, region `cn-hangzhou` and zone `cn-hangzhou-k`.
- No `speed`/`rate` files: the published 25 Gb/s eRDMA bandwidth has no fixed kernel form here.
""")


# baremetal-2cx7: an on-premises Supermicro GPU server, no cloud. One
# Broadcom PCIe switch per CPU socket, (root bus, NUMA node, ifName, RDMA
# device): the root port's bus is the host bridge's, the switch's upstream
# port is on bus + 1, its two downstream ports on bus + 2, the ConnectX-7 on
# bus + 3 and the H100 on bus + 4 (nvidia-smi PIX between them).
BAREMETAL_SWITCHES = [(0x15, 0, "ens1np0", "mlx5_0"), (0x97, 1, "ens2np0", "mlx5_1")]


def baremetal_2cx7():
    s = Snapshot("baremetal-2cx7", kernel_links=True)
    node = "gpu-node-01"
    s.loopback()

    def port(devpath, numa, vendor, device):
        # PCIe root port or switch port (class 0x0604), driver pcieport.
        s.pci_function(devpath, 0x060400, vendor, device, vendor, 0x0000, numa, driver="pcieport")

    # Onboard Intel X710 (first port) on socket 0: the uplink, with the
    # node's address and the only default route (static, NetworkManager's
    # metric for Ethernet).
    address = "10.10.20.31"
    root_port = "sys/devices/pci0000:00/0000:00:01.0"
    port(root_port, 0, 0x8086, 0x352a)
    x710 = f"{root_port}/0000:01:00.0"
    s.pci_function(x710, 0x020000, 0x8086, 0x1572, 0x15d9, 0x1b1c, 0, driver="i40e")
    uplink_mac = mac(0x3c, 0xec, 0xef, 0x8a, 0x51, 0xe0)
    s.netdev(x710, "eno1", uplink_mac, 1500, addresses=[f"{address}/24", link_local(uplink_mac)], speed=10000)
    s.default_route("eno1", gateway="10.10.20.1", protocol="static")
    s.route("10.10.20.0/24", "eno1", scope="link", source=address, protocol="kernel")
    for index, (bus, numa, name, rdma) in enumerate(BAREMETAL_SWITCHES):
        root_port = f"sys/devices/pci0000:{bus:02x}/0000:{bus:02x}:01.0"
        upstream = f"{root_port}/0000:{bus + 1:02x}:00.0"
        to_nic = f"{upstream}/0000:{bus + 2:02x}:00.0"
        to_gpu = f"{upstream}/0000:{bus + 2:02x}:01.0"
        port(root_port, numa, 0x8086, 0x352a)
        for bridge in (upstream, to_nic, to_gpu):
            port(bridge, numa, 0x1000, 0xc030)
        nic = f"{to_nic}/0000:{bus + 3:02x}:00.0"
        s.pci_function(nic, 0x020000, 0x15b3, 0x1021, 0x15b3, 0x0041, numa, driver="mlx5_core",
                       extra={"sriov_totalvfs": 16, "sriov_numvfs": 0})
        m = mac(0xb8, 0x3f, 0xd2, 0x4a, bus, 0x10)
        ip = f"192.168.{101 + index}.31"
        s.netdev(nic, name, m, 9000, addresses=[f"{ip}/24", link_local(m)], speed=400000)
        s.route(f"192.168.{101 + index}.0/24", name, scope="link", source=ip, protocol="kernel")
        s.rdma_device(nic, rdma, "Ethernet", netdev=name, rate="400 Gb/sec (4X NDR)")
        s.pci_function(f"{to_gpu}/0000:{bus + 4:02x}:00.0", 0x030200, 0x10de, 0x2331, 0x10de, 0x1626, numa,
                       driver="nvidia")
    s.routes.sort(key=route_dump_order)  # as the kernel dumps table main
    s.default_rules()
    s.rdma_globals()
    s.dmi(sys_vendor="Supermicro", product_name="SYS-421GE-TNRT", board_vendor="Supermicro",
          chassis_vendor="Supermicro", chassis_asset_tag="To be filled by O.E.M.",
          bios_vendor="American Megatrends International, LLC.")
    s.numa_nodes(["0-31,64-95", "32-63,96-127"])
    s.finish(node, "representative",
             "Bare-metal Supermicro SYS-421GE-TNRT (2 x H100 PCIe), 2 ConnectX-7 RoCE, no cloud", f"""
# baremetal-2cx7 — on-premises Supermicro `SYS-421GE-TNRT` (2 × NVIDIA H100 PCIe, 2 ConnectX-7 RoCE ports), no cloud

Node name: `{node}`. Generated by `tests/nodes/generate.py`; not a capture. No `metadata/`
directory: there is no cloud metadata service, so every cloud plugin (aws, azure, gcp, oci,
alibaba) must report itself not applicable from DMI alone, and only discovery and the GPU plugin
contribute attributes.

## From published material (PCI ID Repository `pci.ids`; Linux drivers `mlx5_core`, `i40e`; Supermicro's product page for SYS-421GE-TNRT)
- `SYS-421GE-TNRT` is a Supermicro 4U dual-socket (Intel Xeon) GPU SuperServer for PCIe GPUs.
- PCI ids: ConnectX-7 `15b3:1021` ("MT2910 Family [ConnectX-7]", driver `mlx5_core`), H100 PCIe
  `10de:2331` (3D controller, class `0x0302`, driver `nvidia`), Ethernet Controller X710 for 10GbE
  SFP+ `8086:1572` (driver `i40e`), Broadcom / PLX PEX890xx Gen 5 switch `1000:c030`.
- DMI strings as Supermicro boards with AMI firmware report them: `sys_vendor`, `board_vendor`,
  `chassis_vendor` `Supermicro`, `bios_vendor` `American Megatrends International, LLC.`, and the
  firmware's unset default `To be filled by O.E.M.` in `chassis_asset_tag`.
- Kernel forms: a 400 Gb/s port's `speed` reads `400000` and its RDMA port's `rate`
  `400 Gb/sec (4X NDR)`; the X710's `speed` reads `10000`. Predictable interface names: `eno1` for
  an onboard device, `ens<slot>np<port>` for a slot device whose driver reports a physical port
  name (mlx5's `p0`).

## Representative (not published; chosen to be plausible)
- The PCIe tree: one host bridge per switch, `pci0000:15` (NUMA 0) and `pci0000:97` (NUMA 1), a root
  port (`0000:15:01.0`, `0000:97:01.0`, id `8086:352a`), the switch's upstream port (bus 16 / 98) and
  two downstream ports (bus 17 / 99), one to the ConnectX-7 and one to the H100, so each NIC and its
  switch's GPU are `PIX`: `ens1np0` (`0000:18:00.0`, `mlx5_0`) with GPU `0000:19:00.0`, `ens2np0`
  (`0000:9a:00.0`, `mlx5_1`) with GPU `0000:9b:00.0`. One single-port card per switch.
- `eno1`: the X710's first port at `0000:01:00.0` below root port `0000:00:01.0` (NUMA 0), Supermicro
  MAC `3c:ec:ef:…`, MTU 1500, `10.10.20.31/24`, the only default route (via `10.10.20.1`, proto
  static, metric 100, as NetworkManager installs a static configuration), so discovery does not
  publish it. The X710's second port and the board's BMC/other onboard functions are left out.
- RoCE ports: MACs, MTU 9000, `192.168.101.31/24` on `ens1np0` and `192.168.102.31/24` on `ens2np0`
  with their kernel prefix routes (metric 100), link-local IPv6 addresses, no IPv6 routes; SR-IOV
  capable (`sriov_totalvfs` 16) with no VFs.
- Subsystem ids (`15b3:0041`, `10de:1626`, `15d9:1b1c`), the node name, CPU lists (2 × 32 cores,
  SMT), char-device minors, `rdma_cm`'s minor. No DMI `board_name`/`bios_version`.
""")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--sriov-scale":
        # A synthetic SR-IOV node of another size, for bench/discovery_scale.sh:
        # generate.py --sriov-scale VFS_PER_PF OUT_DIR makes OUT_DIR/sriov-8pf-<VFS_PER_PF>vf.
        sriov(int(sys.argv[2]), os.path.abspath(sys.argv[3]))
        return 0
    if len(sys.argv) != 1:
        print("usage: generate.py [--sriov-scale VFS_PER_PF OUT_DIR]", file=sys.stderr)
        return 2
    for build in (gb300, mi300x, a4, sriov, aws_p4d, oci_gb200, oci_h100, alibaba_gn8is,
                  baremetal_2cx7):
        build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
