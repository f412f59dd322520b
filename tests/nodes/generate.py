#!/usr/bin/env python3
"""Generates the node snapshots under tests/nodes/ (docs/snapshots.md).

Run from anywhere: python3 tests/nodes/generate.py. Output is deterministic
(no timestamps, sorted JSON), symlinks are relative and stay inside each
snapshot, so the tree can be committed as is. Each snapshot's README says
which values come from published material and which are representative.
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

FORMAT_VERSION = 2      # kSnapshotFormatVersion (core/inventory/snapshot.h)
UVERBS_MAJOR = 231      # uverbsN = 231:(192+N), umadN = 231:N, issmN = 231:(64+N)
RDMA_CM_DEV = "10:58"   # misc major 10, dynamic minor (representative)


class Snapshot:
    def __init__(self, name):
        self.root = os.path.join(HERE, name)
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
        self.links.append({"name": name, "kind": kind, "addresses": list(addresses)})
        return self.ifindex

    def rdma_device(self, parent, name, link_layer, netdev=None, umad=True, issm=True, rate=None):
        """rate: the port's rate as the kernel prints it (ports/1/rate), e.g. "400 Gb/sec (4X NDR)"."""
        base = f"{parent}/infiniband/{name}"
        self.file(f"{base}/node_type", "1: CA\n")
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


def sriov():
    s = Snapshot("sriov-8pf-64vf")
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
                       extra={"sriov_totalvfs": 64, "sriov_numvfs": 64})
        pf_name = f"pf{pf}"
        s.netdev(pf_path, pf_name, mac(0x0c, 0x42, 0xa1, pf, 0, 0), 9000, addresses=[f"10.{pf}.0.1/16"])
        s.rdma_device(pf_path, f"mlx5_{pf}", "Ethernet", netdev=pf_name)
        for vf in range(64):
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
    s.finish(node, "synthetic", "8 SR-IOV PFs x 64 VFs, for scale", f"""
# sriov-8pf-64vf — synthetic SR-IOV node (scale fixture)

Node name: `{node}`. Entirely synthetic (generated by `tests/nodes/generate.py`), modelled on a host
with 8 ConnectX-6 Dx PFs (`15b3:101d`) in SR-IOV mode, 64 VFs each (`15b3:101e`): 520 network functions,
each with a netdev (`pfN`, `pfNvfM`) and a RoCE RDMA device (`mlx5_*`, uverbs for all, umad/issm for
PFs only). PFs 0–3 on NUMA 0, 4–7 on NUMA 1, one PCIe root per PF. A virtio `eth0` carries the default
route and must be excluded. Used by the discovery benchmark and slice-splitting tests.
""")


def main():
    for build in (gb300, mi300x, a4, sriov):
        build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
