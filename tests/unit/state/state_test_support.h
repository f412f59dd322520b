#pragma once
// Test support for core/state: a unique temp directory with a fake procfs.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "inject/plan.h"

namespace dranet::state::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "dranet-state-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void WriteFile(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A plan with one of everything, so round trips cover every field.
inline inject::ClaimPlan SamplePlan(const std::string& uid, const std::string& pod = "pod-1") {
  inject::ClaimPlan p;
  p.claim_uid = uid;
  p.claim_namespace = "ml";
  p.claim_name = "claim-" + uid;
  p.pod_uids = {pod};
  p.devices = {{"nic", "node-a", "pci-0101-00-00-0"},
               {"share", "node-a", "pci-0103-00-00-0", false, "6f1c0d1e-0000-4000-8000-000000000001"},
               {"watch", "node-a", "pci-0102-00-00-0", true}};
  p.device_nodes = {{"/dev/infiniband/uverbs0", "/dev/infiniband/uverbs0", 231, 192, "rw"}};
  p.device_nodes[0].file_mode = 0600;  // not the default: the round trip must keep it
  p.env = {{"NCCL_IB_HCA", "=mlx5_0"}};
  p.mounts = {{"/host/x", "/x", {"ro", "bind"}}};
  inject::NetdevPlan n;
  n.device_name = "pci-0000-8a-00-0";
  n.host_if_name = "gpu0rdma0";
  n.pod_if_name = "net1";
  n.mtu = 8896;
  n.addresses = {"192.168.1.2/32"};
  n.routes = {{"10.0.0.0/8", "192.168.1.1", "", 100, 5}, {"192.168.1.1/32", "", "192.168.1.2", 0, 100, 253, 16}};
  n.rules = {{100, "192.168.1.0/24", "", 101, 2}};
  n.neighbors = {{"192.168.1.1", "00:00:5e:00:01:01"}};
  n.rdma_device = "mlx5_0";
  n.rdma_exclusive = true;
  n.host_state = {"gpu0rdma0", 8896, {"192.168.1.2/32"}, {{"0.0.0.0/0", "192.168.1.1", "192.168.1.2", 0, 0}}, {}, {}, true, "02:00:00:00:00:01", {}};
  n.host_state.up = false;  // a link that was down on the host stays down after teardown
  n.host_state.rules = {{0, "", "10.1.0.0/16", 102, 2}};
  n.host_state.neighbors = {{"fe80::1", "02:00:00:00:00:01"}};
  // Every claim-config setting, and the host's values to restore.
  n.settings.mac = "02:11:22:33:44:55";
  n.settings.gso_max_size = n.settings.gro_max_size = 196608;
  n.settings.gso_ipv4_max_size = n.settings.gro_ipv4_max_size = 131072;
  n.settings.arp_ignore = 1;
  n.settings.arp_announce = 2;
  n.settings.forwarding = true;
  n.settings.ethtool_features = {{"tx-tcp-segmentation", false}, {"rx-gro", true}};
  n.settings.ethtool_private_flags = {{"rx_striding_rq", false}};
  n.host_state.settings.mac = "02:00:00:00:00:01";
  n.host_state.settings.gso_max_size = 65536;
  n.host_state.settings.arp_announce = 0;
  n.host_state.settings.forwarding = false;
  n.host_state.settings.ethtool_features = {{"tx-tcp-segmentation", true}, {"rx-gro", false}};
  n.vrf_name = "blue";
  n.vrf_table = 1234;
  n.disable_ebpf_programs = true;
  n.dhcp_lease = inject::DhcpLeaseRecord{"192.0.2.10/24", "192.0.2.1", "02:00:00:00:00:aa", "02:00:00:00:00:01"};
  // A second netdev: a share's IPVLAN child of another netdev.
  inject::NetdevPlan child;
  child.device_name = "pci-0000-8b-00-0";
  child.host_if_name = "gpu1rdma0";
  child.pod_if_name = "net1";
  child.addresses = {"10.1.2.3/24"};
  child.child_type = "ipvlan";
  child.child_mode = "l2";
  child.dhcp_lease = inject::DhcpLeaseRecord{"10.1.2.3/24", "10.1.2.1", "02:00:00:00:00:bb", "02:00:00:00:00:02",
                                             "dranet/claim/pci-0000-8b-00-0/share"};
  p.netdevs = {n, child};
  p.profiles = {{"pci-0000-8a-00-0", "gold", R"({"profile":"gold"})", "02:00:00:00:00:01", "0000:8a:00.0"}};
  p.published_attributes = {{"pci-0000-8a-00-0", R"({"dra.net/ifName":{"string":"gpu0rdma0"},"dra.net/mtu":{"int":9000},)"
                                                  R"("dra.net/rdma":{"bool":true}})"}};
  p.cdi_device_ids = {"dra.net/claim=" + uid};
  return p;
}

}  // namespace dranet::state::testing
