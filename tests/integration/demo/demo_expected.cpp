#include "demo_expected.h"

#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "netns_lab.h"

namespace dranet::demo {
namespace fs = std::filesystem;
namespace {

class Reader {
 public:
  explicit Reader(const fs::path& file) : file_(file.string()) {}

  [[noreturn]] void Fail(const std::string& where, const std::string& what) const {
    throw std::runtime_error(file_ + ": " + where + ": " + what);
  }

  // `node` is a map whose keys are all in `allowed`.
  void Keys(const YAML::Node& node, const std::string& where, const std::set<std::string>& allowed) const {
    if (!node.IsMap()) Fail(where, "expected a mapping");
    for (const auto& kv : node) {
      const auto key = kv.first.as<std::string>();
      if (!allowed.count(key)) Fail(where, "unknown key \"" + key + "\"");
    }
  }

  template <typename T>
  T Scalar(const YAML::Node& node, const std::string& where) const {
    if (!node.IsScalar()) Fail(where, "expected a scalar");
    try {
      return node.as<T>();
    } catch (const YAML::Exception& e) {
      Fail(where, e.what());
    }
  }

  std::vector<std::string> Strings(const YAML::Node& node, const std::string& where) const {
    if (!node) return {};
    if (!node.IsSequence()) Fail(where, "expected a sequence");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < node.size(); ++i)
      out.push_back(Scalar<std::string>(node[i], where + "[" + std::to_string(i) + "]"));
    return out;
  }

  template <typename T>
  std::map<std::string, T> Map(const YAML::Node& node, const std::string& where) const {
    std::map<std::string, T> out;
    if (!node) return out;
    if (!node.IsMap()) Fail(where, "expected a mapping");
    for (const auto& kv : node) {
      const auto key = kv.first.as<std::string>();
      out[key] = Scalar<T>(kv.second, where + "." + key);
    }
    return out;
  }

  ExpectedNetdev Netdev(const std::string& name, const YAML::Node& node, const std::string& where) const {
    Keys(node, where, {"mac", "mtu", "up", "addresses", "routes"});
    ExpectedNetdev e;
    e.name = name;
    if (node["mac"]) e.mac = Scalar<std::string>(node["mac"], where + ".mac");
    if (!node["mtu"]) Fail(where, "mtu is required");
    e.mtu = Scalar<uint32_t>(node["mtu"], where + ".mtu");
    if (node["up"]) e.up = Scalar<bool>(node["up"], where + ".up");
    e.addresses = Strings(node["addresses"], where + ".addresses");
    e.routes = Strings(node["routes"], where + ".routes");
    return e;
  }

  ExpectedAlignment Alignment(const YAML::Node& node, const std::string& where) const {
    Keys(node, where, {"gpus", "nics", "aligned", "pcieRoot"});
    ExpectedAlignment a;
    a.gpus = Map<int64_t>(node["gpus"], where + ".gpus");
    a.nics = Map<int64_t>(node["nics"], where + ".nics");
    if (node["aligned"]) a.aligned = Scalar<bool>(node["aligned"], where + ".aligned");
    if (node["pcieRoot"]) a.pcie_root = Scalar<std::string>(node["pcieRoot"], where + ".pcieRoot");
    if (a.nics.empty()) Fail(where, "nics is required");
    // Alignment is between GPUs and NICs: a claim with GPUs must say which it is.
    if (!a.gpus.empty() && !a.aligned) Fail(where, "aligned is required with gpus");
    if (a.gpus.empty() && a.aligned) Fail(where, "aligned needs gpus");
    return a;
  }

  ExpectedResults Read() const {
    YAML::Node doc;
    try {
      doc = YAML::LoadFile(file_);
    } catch (const YAML::Exception& e) {
      throw std::runtime_error("cannot read " + file_ + ": " + e.what());
    }
    Keys(doc, "top level", {"apiVersion", "kind", "metadata", "spec"});
    if (!doc["kind"] || Scalar<std::string>(doc["kind"], "kind") != "ExpectedResults" || !doc["apiVersion"] ||
        Scalar<std::string>(doc["apiVersion"], "apiVersion") != "demo.dra.net/v1")
      Fail("top level", "not a demo.dra.net/v1 ExpectedResults");
    const YAML::Node spec = doc["spec"];
    if (!spec) Fail("top level", "spec is required");
    Keys(spec, "spec", {"node", "netdevs", "claims"});
    ExpectedResults r;
    r.source = file_;
    if (!spec["node"]) Fail("spec", "node is required");
    r.node = Scalar<std::string>(spec["node"], "spec.node");
    std::map<std::string, ExpectedNetdev> netdevs;
    if (spec["netdevs"] && !spec["netdevs"].IsMap()) Fail("spec.netdevs", "expected a mapping");
    for (const auto& kv : spec["netdevs"]) {
      const auto name = kv.first.as<std::string>();
      netdevs[name] = Netdev(name, kv.second, "spec.netdevs." + name);
    }
    const YAML::Node claims = spec["claims"];
    if (!claims || !claims.IsSequence() || claims.size() == 0) Fail("spec.claims", "a non-empty sequence is required");
    for (std::size_t i = 0; i < claims.size(); ++i) {
      const YAML::Node c = claims[i];
      std::string where = "spec.claims[" + std::to_string(i) + "]";
      Keys(c, where, {"template", "devices", "env", "netdevs", "alignment"});
      ExpectedClaim claim;
      if (!c["template"]) Fail(where, "template is required");
      claim.template_name = Scalar<std::string>(c["template"], where + ".template");
      where = "claim " + claim.template_name;
      if (r.Find(claim.template_name)) Fail(where, "listed twice");
      claim.devices = Map<std::string>(c["devices"], where + ".devices");
      claim.env = Map<std::string>(c["env"], where + ".env");
      for (const auto& name : Strings(c["netdevs"], where + ".netdevs")) {
        auto it = netdevs.find(name);
        if (it == netdevs.end()) Fail(where + ".netdevs", name + " is not among spec.netdevs");
        claim.netdevs[name] = it->second;
      }
      if (c["alignment"]) claim.alignment = Alignment(c["alignment"], where + ".alignment");
      r.claims.push_back(std::move(claim));
    }
    return r;
  }

 private:
  std::string file_;
};

const inventory::LinkFacts* LinkNamed(const inventory::NetlinkFacts& facts, const std::string& name) {
  for (const auto& link : facts.links)
    if (link.name == name) return &link;
  return nullptr;
}

// The kernel derives IPv6 link-local addresses from the MAC: not a fact
// dranetd carries.
bool IsIpv6LinkLocal(const std::string& address) { return address.rfind("fe80:", 0) == 0; }

// "lacks X" / "has unexpected Y" lines for two string sets.
void SetDifferences(const std::string& prefix, std::vector<std::string> want, std::vector<std::string> got,
                    std::vector<std::string>& problems) {
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  std::vector<std::string> missing, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  for (const auto& m : missing) problems.push_back(prefix + " lacks " + m);
  for (const auto& e : extra) problems.push_back(prefix + " has unexpected " + e);
}

}  // namespace

const ExpectedClaim* ExpectedResults::Find(const std::string& template_name) const {
  for (const auto& c : claims)
    if (c.template_name == template_name) return &c;
  return nullptr;
}

ExpectedResults ReadExpectedResults(const fs::path& file) {
  if (!fs::exists(file)) throw std::runtime_error("no expected results at " + file.string());
  return Reader(file).Read();
}

std::vector<std::string> RoutesThrough(const inventory::NetlinkFacts& facts, int ifindex, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& route : facts.routes) {
    if (route.table == RT_TABLE_LOCAL) continue;
    if (route.family == AF_INET6 && route.protocol == RTPROT_KERNEL) continue;
    for (const auto& hop : route.nexthops) {
      if (hop.ifindex != ifindex) continue;
      auto one = route;
      one.nexthops = {hop};
      out.push_back(netlab::FormatRoute(one, name));
      break;
    }
  }
  return out;
}

std::vector<std::string> NetdevDifferences(const inventory::NetlinkFacts& facts, const ExpectedNetdev& e) {
  const auto* link = LinkNamed(facts, e.name);
  if (link == nullptr) return {e.name + " is missing"};
  std::vector<std::string> problems;
  if (!e.mac.empty() && link->mac != e.mac)
    problems.push_back(e.name + " has MAC " + link->mac + ", expected " + e.mac);
  if (link->mtu != e.mtu)
    problems.push_back(e.name + " has MTU " + std::to_string(link->mtu) + ", expected " + std::to_string(e.mtu));
  const bool up = (link->flags & IFF_UP) != 0;
  if (up != e.up) problems.push_back(e.name + (up ? " is up, expected down" : " is down, expected up"));
  std::vector<std::string> addresses;
  for (const auto& a : link->addresses)
    if (!IsIpv6LinkLocal(a)) addresses.push_back(a);
  SetDifferences(e.name + " address list", e.addresses, addresses, problems);
  SetDifferences(e.name + " route list", e.routes, RoutesThrough(facts, link->ifindex, e.name), problems);
  return problems;
}

std::vector<std::string> MapDifferences(const std::string& what, const std::map<std::string, std::string>& want,
                                        const std::map<std::string, std::string>& got) {
  std::vector<std::string> problems;
  for (const auto& [key, value] : want) {
    auto it = got.find(key);
    if (it == got.end()) problems.push_back(what + " " + key + " (" + value + ") is missing");
    else if (it->second != value)
      problems.push_back(what + " " + key + " is \"" + it->second + "\", expected \"" + value + "\"");
  }
  for (const auto& [key, value] : got)
    if (!want.count(key)) problems.push_back("unexpected " + what + " " + key + " (" + value + ")");
  return problems;
}

}  // namespace dranet::demo
