#!/usr/bin/env python3
"""Writes the seed corpora under tests/fuzz/corpus/<target>/ (docs/fuzzing.md).

Seeds are small valid inputs in each target's input format; libFuzzer mutates
from there. Re-run after changing a target's format:  python3 tests/fuzz/make_seeds.py
Files named crash-* or regress-* in a corpus are regression inputs kept by hand;
this script never touches them.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def fdp_string(data: bytes) -> bytes:
    """One FuzzedDataProvider::ConsumeRandomLengthString field: backslashes
    doubled, ended by a backslash and another byte."""
    return data.replace(b"\\", b"\\\\") + b"\\ "


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def cel():
    selectors = {
        "rdma": 'device.attributes["dra.net"].rdma == true',
        "driver-mtu": 'device.driver == "dra.net" && device.attributes["dra.net"].mtu >= 9000',
        "has-in": 'has(device.attributes["dra.net"].ifName) && "rdma" in device.attributes["dra.net"]',
        "strings": 'device.attributes["dra.net"].ifName.startsWith("gpu") && '
                   'device.attributes["dra.net"].rdmaDevice.matches("^mlx5_[0-9]+$")',
        "semver": 'device.attributes["dra.net"].kernelVersion.isGreaterThan(semver("5.15.0"))',
        "quantity": 'device.capacity["dra.net"].bandwidth.compareTo(quantity("100Gi")) >= 0',
        "arith": '(device.attributes["dra.net"].mtu * 2 - 1) % 7 == 3 ? [1, 2] + [3] == [1, 2, 3] : false',
        "std-attrs": 'device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:80"',
        "size-substring": 'size("héllo") == 5 && "abcdef".substring(1, 3) == "bc" && int("42") == 42',
    }
    for name, text in selectors.items():
        write("cel_fuzz", name, b"\x00" + text.encode())
    filters = {
        "default-filter": '!("dra.net/type" in attributes) || attributes["dra.net/type"].StringValue != "veth"',
        "filter-int": 'attributes["dra.net/mtu"].IntValue > 1500 && attributes["dra.net/rdma"].BoolValue',
    }
    for name, text in filters.items():
        write("cel_fuzz", name, b"\x01" + text.encode())
    write("cel_fuzz", "tight-cost", b"\x02" + b'"a" + "b" + "c" == "abc"')


def ttrpc_header(length, stream, typ, flags):
    return struct.pack(">IIBB", length, stream, typ, flags)


def pb_string(field, s: bytes):
    return bytes([field << 3 | 2, len(s)]) + s


def mux(conn, payload):
    return struct.pack(">II", conn, len(payload)) + payload


def ttrpc_mux():
    # Preamble: number of read sizes (1 byte, FuzzedDataProvider consumes
    # integrals from the END of the data), so seeds are built back to front:
    # the stream first, then 24 round-trip bytes, with the sizes at the end.
    request = pb_string(1, b"nri.pkg.api.v1alpha1.Plugin") + pb_string(2, b"Configure")
    req_msg = ttrpc_header(len(request), 1, 1, 0) + request
    response = bytes([0x0a, 0x00]) + pb_string(2, b"\x10\x0f")
    resp_msg = ttrpc_header(len(response), 1, 2, 0) + response
    streams = {
        "one-request": mux(1, req_msg),
        "request-and-response": mux(1, req_msg) + mux(2, resp_msg),
        "split-message": mux(1, req_msg[:7]) + mux(2, resp_msg) + mux(1, req_msg[7:]),
        "oversized": mux(1, ttrpc_header(600, 3, 1, 0) + b"x" * 600) + mux(1, req_msg),
        "empty-frame": mux(1, b"") + mux(2, resp_msg),
    }
    for name, stream in streams.items():
        # layout: [24 round-trip bytes][stream]...[sizes][count]; the
        # provider reads integrals from the end and bytes from the front.
        sizes = bytes([3, 5, 1, 17])
        data = bytes(range(1, 25)) + stream + sizes + bytes([len(sizes)])
        write("ttrpc_mux_fuzz", name, data)


def nri_message():
    pod = (pb_string(1, b"sandbox-1") + pb_string(2, b"pod-a") + pb_string(3, b"uid-1") +
           pb_string(4, b"default"))
    ns = pb_string(1, b"network") + pb_string(2, b"/var/run/netns/cni-1")
    linux = bytes([5 << 3 | 2, len(ns)]) + ns
    pod_with_netns = pod + bytes([8 << 3 | 2, len(linux)]) + linux
    container = (pb_string(1, b"ctr-1") + pb_string(2, b"sandbox-1") + pb_string(3, b"main") +
                 pb_string(8, b"PATH=/usr/bin") + pb_string(8, b"NCCL_DEBUG=INFO"))
    configure = pb_string(2, b"containerd") + pb_string(3, b"v2.0.0") + pb_string(6, b"v0.8.0")
    methods = {  # index into kMethods of nri_message_fuzz.cpp
        "configure": (0, configure),
        "synchronize": (1, bytes([0x0a, len(pod_with_netns)]) + pod_with_netns + b"\x18\x01"),
        "create-container": (3, bytes([0x0a, len(pod)]) + pod + bytes([0x12, len(container)]) + container),
        "run-pod": (4, bytes([0x0a, len(pod_with_netns)]) + pod_with_netns),
        "stop-pod": (5, bytes([0x0a, len(pod)]) + pod),
        "state-change": (7, bytes([0x08, 0x01, 0x12, len(pod)]) + pod),
    }
    for name, (index, payload) in methods.items():
        # byte 0 even: request mode; the method index is an integral read
        # from the end of the remaining bytes.
        write("nri_message_fuzz", name, b"\x00" + payload + bytes([index]))
    write("nri_message_fuzz", "plans", b"\x01" + fdp_string(b"uid-a") + fdp_string(b"/dev/infiniband/uverbs0") +
          fdp_string(b"rw") + fdp_string(b"NCCL_IB_HCA") + fdp_string(b"mlx5_0") + b"\x02\x01\x01\x02\x03")


def api_json():
    slice_obj = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "node-a-dra.net-0", "uid": "1234", "resourceVersion": "7",
                     "labels": {"app.kubernetes.io/managed-by": "dranet"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-a",
                                          "uid": "abcd", "controller": True}]},
        "spec": {"driver": "dra.net", "nodeName": "node-a",
                 "pool": {"name": "node-a", "generation": 3, "resourceSliceCount": 1},
                 "devices": [{"name": "pci-0000-8a-00-0", "attributes": {
                     "dra.net/ifName": {"string": "gpu0rdma0"}, "rdma": {"bool": True},
                     "dra.net/mtu": {"int": 9000}, "dra.net/kernel": {"version": "6.8.0"}}}]},
    }
    write("api_json_fuzz", "slice", json.dumps(slice_obj))
    foreign = json.loads(json.dumps(slice_obj))
    foreign["spec"]["devices"][0]["capacity"] = {"dra.net/bw": {"value": "400Gi"}}
    foreign["spec"]["devices"][0]["attributes"]["dra.net/list"] = {"ints": [1, 2]}
    write("api_json_fuzz", "slice-foreign", json.dumps(foreign))
    claim = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "claim-1", "namespace": "default", "uid": "c-1", "resourceVersion": "9",
                     "generation": 2},
        "status": {
            "allocation": {"devices": {
                "results": [{"request": "nic", "driver": "dra.net", "pool": "node-a",
                             "device": "pci-0000-8a-00-0"},
                            {"request": "gpu/sub", "driver": "gpu.nvidia.com", "pool": "node-a",
                             "device": "gpu-0", "adminAccess": True, "shareID": "s1"}],
                "config": [{"source": "FromClaim", "requests": ["nic"],
                            "opaque": {"driver": "dra.net",
                                       "parameters": {"interface": {"name": "eth1", "mtu": 9000}}}}]}},
            "reservedFor": [{"resource": "pods", "name": "pod-a", "uid": "p-1"}]},
    }
    write("api_json_fuzz", "claim", json.dumps(claim))
    write("api_json_fuzz", "claim-unallocated", json.dumps({"metadata": {"name": "c"}, "spec": {}}))
    # Hostile input (docs/operations.md, "the limits"): nesting past the cap
    # inside a claim, a name that is a path, bytes that are not UTF-8.
    write("api_json_fuzz", "claim-deep-annotation",
          '{"metadata": {"name": "c", "annotations": {"a": ' + "[" * 200 + "]" * 200 + "}}}")
    write("api_json_fuzz", "claim-path-name", json.dumps({"metadata": {"name": "../../../api/v1/nodes/x",
                                                                       "namespace": "kube-system/secrets"}}))
    write("api_json_fuzz", "claim-not-utf8",
          b'{"metadata": {"name": "c"}, "status": {"allocation": {"devices": {"config": [{"opaque": '
          b'{"driver": "dra.net", "parameters": {"interface": {"name": "\xff\xfe"}}}}]}}}}')


def sysfs():
    netlink = {"formatVersion": 1,
               "links": [{"name": "eth0", "kind": "", "addresses": ["10.0.0.4/24", "fe80::1/64"]},
                         {"name": "veth0", "kind": "veth", "addresses": []}],
               "routes": [{"family": "inet", "destination": "default", "metric": 100,
                           "interfaces": ["eth0"]}]}
    # In kFuzzedFiles order (sysfs_fuzz.cpp).
    files = [json.dumps(netlink), "0x020000", "0x15b3", "0x101e", "0", "0x15b3", "0x0023", "8", "2",
             "02:00:00:aa:bb:cc", "9000", "up", "1", "0x1003", "2", "2", "",
             "1: CA", "eth0", "Ethernet", "4: ACTIVE",
             "mlx5_0", "231:192", "10:58",
             "0a:00:00:00:00:01", "1500", "1", "3", "4", "0x1003",
             "DRIVER=mlx5_core\nPCI_CLASS=20000\nPCI_ID=15B3:101E\nPCI_SUBSYS_ID=15B3:0023\n"
             "PCI_SLOT_NAME=0000:00:04.0\n"]
    write("sysfs_fuzz", "roce-nic", b"".join(fdp_string(f.encode()) for f in files))
    ib_only = list(files)
    ib_only[1] = "0x020700"  # InfiniBand controller
    ib_only[19] = "InfiniBand"
    ib_only[18] = ""
    write("sysfs_fuzz", "ib-class", b"".join(fdp_string(f.encode()) for f in ib_only))
    bad = ["{", "0xzz", "", "", "-5", "", "", "99999999999999999999", "-1", "not-a-mac", "-1",
           "weird", "65535", "zz", "0", "0", "a" * 100, "", "", "", "", "", "x:y", "1:",
           "", "", "", "", "", "", "DRIVER=\nPCI_ID=15B3:\nPCI_SUBSYS_ID=:\n=\n" + "PCI_ID=1:2\n" * 300]
    write("sysfs_fuzz", "garbage", b"".join(fdp_string(f.encode()) for f in bad))


def claim_config():
    configs = {
        "interface": {"interface": {"name": "eth1", "mtu": 9000, "addresses": ["10.1.0.2/24"],
                                    "hardwareAddr": "02:00:00:00:00:01"}},
        "routes": {"routes": [{"destination": "10.2.0.0/16", "gateway": "10.1.0.1"},
                              {"destination": "0.0.0.0/0", "gateway": "10.1.0.1", "table": 100}]},
        "rules-neighbors": {"rules": [{"priority": 100, "source": "10.1.0.0/24", "table": 100}],
                            "neighbors": [{"destination": "10.1.0.1", "hardwareAddr": "02:00:00:00:00:02"}]},
        "ethtool": {"ethtool": {"features": {"tx-checksumming": False},
                                "privateFlags": {"disable-fw-lldp": True}}},
        "vrf-dhcp": {"interface": {"dhcp": True, "vrf": {"name": "blue", "table": 10}}},
        # Values that can never be valid on a pod interface (refused at prepare).
        "never-valid": {"interface": {"name": "eth0", "mtu": 2147483647,
                                      "addresses": ["0.0.0.0/0", "::/0", "127.0.0.1/8", "224.0.0.1/4"]}},
    }
    for name, config in configs.items():
        write("claim_config_fuzz", name, b"\x00" + json.dumps(config).encode())
    write("claim_config_fuzz", "merge", b"\x01" + fdp_string(json.dumps(configs["interface"]).encode()) +
          json.dumps({"interface": {"mtu": 1500}}).encode())


def dhcp_reply(msg_type, options, xid=0x12345678, yiaddr=bytes([192, 0, 2, 50])):
    """A BOOTREPLY to 02:00:00:00:d0:01 from server 192.0.2.1; `options` is a
    list of (code, data) pieces written in order."""
    header = struct.pack(">BBBBIHH", 2, 1, 6, 0, xid, 0, 0x8000) + bytes(4) + yiaddr + bytes(8)
    header += bytes([2, 0, 0, 0, 0xd0, 0x01]) + bytes(10 + 64 + 128)
    body = bytes([53, 1, msg_type, 54, 4, 192, 0, 2, 1])
    for code, data in options:
        body += bytes([code, len(data)]) + data
    return header + bytes([99, 130, 83, 99]) + body + b"\xff"


def ipv4_udp_to_client(payload):
    """payload in UDP 192.0.2.1:67 -> 255.255.255.255:68 (UDP checksum 0: none)."""
    udp = struct.pack(">HHHH", 67, 68, 8 + len(payload), 0) + payload
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                               bytes([192, 0, 2, 1]), bytes([255] * 4)))
    total = sum(ip[i] << 8 | ip[i + 1] for i in range(0, 20, 2))
    while total > 0xffff:
        total = (total & 0xffff) + (total >> 16)
    ip[10:12] = struct.pack(">H", ~total & 0xffff)
    return bytes(ip) + udp


def dhcp_message():
    routes = bytes([16, 10, 20, 192, 0, 2, 254, 24, 198, 51, 100, 0, 0, 0, 0, 0, 192, 0, 2, 254])
    mask = (1, bytes([255, 255, 255, 0]))
    lease = (51, bytes([0, 0, 0x0e, 0x10]))
    write("dhcp_message_fuzz", "offer-datagram", ipv4_udp_to_client(dhcp_reply(2, [mask, lease, (121, routes)])))
    write("dhcp_message_fuzz", "ack-datagram", ipv4_udp_to_client(dhcp_reply(5, [mask, lease, (121, routes)])))
    write("dhcp_message_fuzz", "ack-payload-split-121",
          dhcp_reply(5, [mask, (121, routes[:9]), (121, routes[9:])]))
    write("dhcp_message_fuzz", "nak-payload", dhcp_reply(6, [(56, b"address in use")], yiaddr=bytes(4)))


if __name__ == "__main__":
    cel()
    ttrpc_mux()
    nri_message()
    api_json()
    sysfs()
    claim_config()
    dhcp_message()
