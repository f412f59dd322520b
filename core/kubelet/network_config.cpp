#include "kubelet/network_config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <set>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/json.h"

namespace dranet::kubelet {
namespace {

using rapidjson::Value;

[[noreturn]] void Fail(const std::string& path, const std::string& why) {
  throw ConfigError(path + ": " + why);
}

// Every problem of a config, not only the first: each field is read on its
// own, a failure is noted and reading goes on.
class Problems {
 public:
  template <typename Read>
  void Check(Read&& read) {
    try {
      read();
    } catch (const ConfigError& e) {
      if (items_.size() < kMaxProblems) items_.push_back(e.what());
    }
  }
  void Add(std::string problem) {
    if (items_.size() < kMaxProblems) items_.push_back(std::move(problem));
  }
  void ThrowIfAny() const {
    if (items_.empty()) return;
    std::string all;
    for (const auto& item : items_) all += (all.empty() ? "" : "; ") + item;
    throw ConfigError(all);
  }

 private:
  static constexpr std::size_t kMaxProblems = 32;
  std::vector<std::string> items_;
};

// Reads the members of one JSON object, refusing unknown and repeated keys.
class StrictObject {
 public:
  StrictObject(const Value& value, std::string path, std::vector<std::string>& set_fields)
      : value_(value), path_(std::move(path)), set_fields_(set_fields) {
    if (!value.IsObject()) Fail(Where(), "must be an object");
    std::set<std::string> seen;
    for (const auto& m : value.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      if (!seen.insert(key).second) Fail(Child(key), "given twice");
    }
  }

  // Every member not in `known` is an unknown field: each one is noted.
  void RejectUnknown(std::initializer_list<const char*> known, Problems& problems) const {
    for (const auto& m : value_.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; }))
        problems.Add(Child(key) + ": unknown field (see the NetworkConfig reference in docs/kubelet.md)");
    }
  }

  const Value* Find(const char* key) const {
    auto it = value_.FindMember(key);
    if (it == value_.MemberEnd() || it->value.IsNull()) return nullptr;
    set_fields_.push_back(Child(key));
    return &it->value;
  }

  std::optional<std::string> String(const char* key) const {
    const Value* v = Find(key);
    if (!v) return std::nullopt;
    if (!v->IsString()) Fail(Child(key), "must be a string");
    if (v->GetStringLength() > kMaxConfigStringBytes)
      Fail(Child(key), "longer than " + std::to_string(kMaxConfigStringBytes) + " bytes");
    return std::string(v->GetString(), v->GetStringLength());
  }

  std::optional<bool> Bool(const char* key) const {
    const Value* v = Find(key);
    if (!v) return std::nullopt;
    if (!v->IsBool()) Fail(Child(key), "must be true or false");
    return v->GetBool();
  }

  std::optional<int64_t> Int(const char* key, int64_t lo, int64_t hi, const std::string& rule) const {
    const Value* v = Find(key);
    if (!v) return std::nullopt;
    if (!v->IsInt64()) Fail(Child(key), "must be an integer");
    int64_t n = v->GetInt64();
    if (n < lo || n > hi) Fail(Child(key), rule + " (got " + std::to_string(n) + ")");
    return n;
  }

  const Value* Array(const char* key, std::size_t max_items) const {
    const Value* v = Find(key);
    if (!v) return nullptr;
    if (!v->IsArray()) Fail(Child(key), "must be a list");
    if (v->Size() > max_items)
      Fail(Child(key), "has " + std::to_string(v->Size()) + " entries, at most " +
                           std::to_string(max_items) + " are allowed");
    return v;
  }

  // Reads each entry of list `key` with `read(entry, "key[i]")`, noting
  // every failing entry.
  template <typename Read>
  void EachOf(const char* key, std::size_t max_items, Problems& problems, Read&& read) const {
    const Value* list = nullptr;
    problems.Check([&] { list = Array(key, max_items); });
    if (!list) return;
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i)
      problems.Check([&] { read((*list)[i], Child(key) + "[" + std::to_string(i) + "]"); });
  }

  std::string Child(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const std::string& Where() const { return path_.empty() ? kRoot : path_; }

 private:
  static inline const std::string kRoot = "parameters";
  const Value& value_;
  std::string path_;
  std::vector<std::string>& set_fields_;
};

int IpFamily(const std::string& text) {
  unsigned char buf[16];
  if (inet_pton(AF_INET, text.c_str(), buf) == 1) return AF_INET;
  if (inet_pton(AF_INET6, text.c_str(), buf) == 1) return AF_INET6;
  return 0;
}

// Family of "ip/prefix", 0 when malformed.
int CidrFamily(const std::string& text) {
  auto slash = text.find('/');
  if (slash == std::string::npos || slash + 1 >= text.size()) return 0;
  int family = IpFamily(text.substr(0, slash));
  const std::string prefix = text.substr(slash + 1);
  if (family == 0 || prefix.size() > 3 ||
      !std::all_of(prefix.begin(), prefix.end(), [](unsigned char c) { return std::isdigit(c); }))
    return 0;
  int bits = std::stoi(prefix);
  return bits <= (family == AF_INET ? 32 : 128) ? family : 0;
}

// Why `cidr` (well formed) can never be a pod interface's address, or "".
std::string UnusableAddress(const std::string& cidr) {
  unsigned char b[16] = {};
  const std::string ip = cidr.substr(0, cidr.find('/'));
  if (inet_pton(AF_INET, ip.c_str(), b) == 1) {
    if (b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0) return "the unspecified address";
    if (b[0] == 127) return "a loopback address";
    if (b[0] >= 224 && b[0] <= 239) return "a multicast address";
    if (b[0] == 255 && b[1] == 255 && b[2] == 255 && b[3] == 255) return "the broadcast address";
    return "";
  }
  inet_pton(AF_INET6, ip.c_str(), b);
  static const unsigned char kZero[16] = {};
  if (std::equal(b, b + 16, kZero)) return "the unspecified address";
  if (std::equal(b, b + 15, kZero) && b[15] == 1) return "a loopback address";
  if (b[0] == 0xff) return "a multicast address";
  return "";
}

bool ValidMac(const std::string& text) {
  // 6, 8 or 20 octets of two hex digits, separated by ':' or '-' (as Go's net.ParseMAC).
  if (text.size() < 17) return false;
  char sep = text[2];
  if (sep != ':' && sep != '-') return false;
  std::size_t octets = 0;
  for (std::size_t i = 0; i < text.size(); i += 3) {
    if (i + 2 > text.size() || !std::isxdigit(static_cast<unsigned char>(text[i])) ||
        !std::isxdigit(static_cast<unsigned char>(text[i + 1])))
      return false;
    if (i + 2 < text.size() && text[i + 2] != sep) return false;
    ++octets;
  }
  return octets == 6 || octets == 8 || octets == 20;
}

// Why `text` (a valid MAC) can never be an interface's own address, or "".
std::string UnusableMac(const std::string& text) {
  std::vector<unsigned> octets;
  for (std::size_t i = 0; i + 1 < text.size(); i += 3) octets.push_back(std::stoul(text.substr(i, 2), nullptr, 16));
  if (std::all_of(octets.begin(), octets.end(), [](unsigned o) { return o == 0; })) return "the all-zero address";
  if (std::all_of(octets.begin(), octets.end(), [](unsigned o) { return o == 0xff; })) return "the broadcast address";
  // IEEE 802 addresses (EUI-48 and EUI-64): the lowest bit of the first
  // octet marks a group address. An IPoIB address starts with flags and
  // a queue pair number instead.
  if (octets.size() != 20 && (octets.front() & 1) != 0)
    return "a multicast address (the lowest bit of its first octet is set)";
  return "";
}

void CheckIfName(const std::string& path, const std::string& name) {
  if (name.empty()) return;
  if (name.size() > 15) Fail(path, "\"" + name + "\" is longer than 15 characters");
  if (name == "." || name == "..") Fail(path, "\"" + name + "\" is not a valid interface name");
  // "all" and "default" are the namespace-wide sysctl directories
  // (net.ipv4.conf.all): an interface of that name cannot register its own,
  // so the move fails; every namespace has "lo".
  if (name == "all" || name == "default" || name == "lo")
    Fail(path, "\"" + name + "\" is reserved in every network namespace" +
                   (name == "lo" ? " (its loopback interface)" : " (the namespace-wide sysctls net.ipv4.conf." + name + ")"));
  for (unsigned char c : name)
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.')
      Fail(path, "\"" + name + "\" may only hold letters, digits, '-', '_' and '.'");
}

InterfaceConfig ReadInterface(const Value& v, std::vector<std::string>& set, Problems& problems) {
  StrictObject o(v, "interface", set);
  o.RejectUnknown({"name", "addresses", "dhcp", "mtu", "hardwareAddr", "gsoMaxSize", "groMaxSize",
                   "gsoIPv4MaxSize", "groIPv4MaxSize", "disableEbpfPrograms", "forwarding",
                   "arpIgnore", "arpAnnounce", "vrf", "type", "ipvlan", "macvlan", "addressing"},
                  problems);
  InterfaceConfig c;
  problems.Check([&] {
    c.name = o.String("name").value_or("");
    CheckIfName(o.Child("name"), c.name);
  });
  o.EachOf("addresses", kMaxConfigAddresses, problems, [&](const Value& a, const std::string& path) {
    if (!a.IsString() || CidrFamily(a.GetString()) == 0) Fail(path, "must be a CIDR such as \"192.0.2.5/24\"");
    if (const auto why = UnusableAddress(a.GetString()); !why.empty())
      Fail(path, std::string(a.GetString()) + " is " + why + ", never a pod interface's address");
    c.addresses.emplace_back(a.GetString(), a.GetStringLength());
  });
  problems.Check([&] { c.dhcp = o.Bool("dhcp"); });
  const int64_t kInt32Max = 2147483647;
  // 68: the IPv4 minimum; 65535: the largest IP packet, above every netdev's maximum MTU.
  problems.Check([&] {
    if (auto mtu = o.Int("mtu", 68, 65535, "must be between 68 and 65535")) c.mtu = static_cast<int32_t>(*mtu);
  });
  problems.Check([&] {
    if (auto mac = o.String("hardwareAddr")) {
      if (!ValidMac(*mac)) Fail(o.Child("hardwareAddr"), "\"" + *mac + "\" is not a MAC address");
      if (const auto why = UnusableMac(*mac); !why.empty())
        Fail(o.Child("hardwareAddr"), *mac + " is " + why + ", never an interface's own address");
      c.hardware_addr = mac;
    }
  });
  auto positive = [&](const char* key, std::optional<int32_t>& into) {
    problems.Check([&] {
      if (auto n = o.Int(key, 1, kInt32Max, "must be greater than 0")) into = static_cast<int32_t>(*n);
    });
  };
  positive("gsoMaxSize", c.gso_max_size);
  positive("groMaxSize", c.gro_max_size);
  positive("gsoIPv4MaxSize", c.gso_ipv4_max_size);
  positive("groIPv4MaxSize", c.gro_ipv4_max_size);
  problems.Check([&] { c.disable_ebpf_programs = o.Bool("disableEbpfPrograms"); });
  problems.Check([&] { c.forwarding = o.Bool("forwarding"); });
  problems.Check([&] {
    if (auto n = o.Int("arpIgnore", 0, 8, "must be 0, 1, 2, 3 or 8")) {
      if (*n > 3 && *n != 8) Fail(o.Child("arpIgnore"), "must be 0, 1, 2, 3 or 8 (got " + std::to_string(*n) + ")");
      c.arp_ignore = static_cast<int32_t>(*n);
    }
  });
  problems.Check([&] {
    if (auto n = o.Int("arpAnnounce", 0, 2, "must be 0, 1 or 2")) c.arp_announce = static_cast<int32_t>(*n);
  });
  problems.Check([&] {
    const Value* vrf = o.Find("vrf");
    if (!vrf) return;
    StrictObject vo(*vrf, "interface.vrf", set);
    vo.RejectUnknown({"name", "table"}, problems);
    VrfConfig cfg;
    problems.Check([&] {
      cfg.name = vo.String("name").value_or("");
      if (cfg.name.empty()) Fail(vo.Child("name"), "is required when vrf is set");
      CheckIfName(vo.Child("name"), cfg.name);
    });
    problems.Check([&] {
      cfg.table = vo.Int("table", 1, 4294967295LL, "must be greater than 0");
      if (cfg.table && (*cfg.table == 253 || *cfg.table == 254 || *cfg.table == 255))
        Fail(vo.Child("table"), "253, 254 and 255 are reserved routing tables");
    });
    c.vrf = cfg;
  });
  auto one_of = [&](const StrictObject& obj, const char* key, std::initializer_list<const char*> allowed) {
    std::optional<std::string> value = obj.String(key);
    if (!value) return value;
    std::string list;
    for (const char* a : allowed) {
      if (*value == a) return value;
      list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
    }
    Fail(obj.Child(key), "\"" + *value + "\" is not one of " + list);
    return value;
  };
  problems.Check([&] { c.type = one_of(o, "type", {"passthrough", "ipvlan", "macvlan"}); });
  problems.Check([&] { c.addressing = one_of(o, "addressing", {"static", "dhcp", "unnumbered"}); });
  problems.Check([&] {
    const Value* ipvlan = o.Find("ipvlan");
    if (!ipvlan) return;
    StrictObject io(*ipvlan, "interface.ipvlan", set);
    io.RejectUnknown({"mode", "flag"}, problems);
    problems.Check([&] { c.ipvlan_mode = one_of(io, "mode", {"l2", "l3", "l3s"}); });
    // The kernel's default isolation: children talk to each other and to the
    // parent's network. The others (private, vepa) are not offered yet.
    problems.Check([&] { one_of(io, "flag", {"bridge"}); });
    if (c.type.value_or("") != "ipvlan") problems.Add("interface.ipvlan: needs interface.type \"ipvlan\"");
  });
  problems.Check([&] {
    const Value* macvlan = o.Find("macvlan");
    if (!macvlan) return;
    StrictObject mo(*macvlan, "interface.macvlan", set);
    mo.RejectUnknown({"mode"}, problems);
    problems.Check([&] { c.macvlan_mode = one_of(mo, "mode", {"bridge", "private", "vepa"}); });
    if (c.type.value_or("") != "macvlan") problems.Add("interface.macvlan: needs interface.type \"macvlan\"");
  });
  if (c.addressing == "dhcp") {
    if (c.dhcp == false) problems.Add("interface: addressing \"dhcp\" and dhcp: false contradict each other");
    c.dhcp = true;
  } else if (c.addressing && c.dhcp.value_or(false)) {
    problems.Add("interface: dhcp: true and addressing \"" + *c.addressing + "\" contradict each other");
  }
  if (c.addressing == "unnumbered" && !c.addresses.empty())
    problems.Add("interface: addressing \"unnumbered\" and addresses cannot be used together");
  if (c.dhcp.value_or(false) && !c.addresses.empty())
    problems.Add("interface: dhcp and addresses cannot be used together");
  return c;
}

RouteConfig ReadRoute(const Value& v, const std::string& path, std::vector<std::string>& set, Problems& problems) {
  StrictObject o(v, path, set);
  o.RejectUnknown({"destination", "gateway", "source", "scope", "table"}, problems);
  RouteConfig r;
  int family = 0;
  problems.Check([&] {
    r.destination = o.String("destination").value_or("");
    family = CidrFamily(r.destination);
    if (family == 0) Fail(o.Child("destination"), "is required and must be a CIDR");
  });
  problems.Check([&] {
    r.scope = static_cast<uint8_t>(o.Int("scope", 0, 255, "must be 0 (universe) or 253 (link)").value_or(0));
    if (r.scope != 0 && r.scope != 253) Fail(o.Child("scope"), "must be 0 (universe) or 253 (link)");
  });
  problems.Check([&] {
    r.gateway = o.String("gateway").value_or("");
    if (r.gateway.empty() && r.scope != 253) Fail(o.Child("gateway"), "is required unless scope is 253 (link)");
    if (!r.gateway.empty() && family != 0 && IpFamily(r.gateway) != family)
      Fail(o.Child("gateway"), "must be an IP address of the destination's family");
  });
  problems.Check([&] {
    r.source = o.String("source").value_or("");
    if (!r.source.empty() && family != 0 && IpFamily(r.source) != family)
      Fail(o.Child("source"), "must be an IP address of the destination's family");
  });
  problems.Check([&] { r.table = o.Int("table", 0, 4294967295LL, "must not be negative").value_or(0); });
  return r;
}

RuleConfig ReadRule(const Value& v, const std::string& path, std::vector<std::string>& set, Problems& problems) {
  StrictObject o(v, path, set);
  o.RejectUnknown({"priority", "source", "destination", "table"}, problems);
  RuleConfig r;
  int sf = 0, df = 0;
  problems.Check([&] { r.priority = o.Int("priority", 0, 32767, "must be between 0 and 32767").value_or(0); });
  problems.Check([&] {
    r.source = o.String("source").value_or("");
    sf = r.source.empty() ? 0 : CidrFamily(r.source);
    if (!r.source.empty() && sf == 0) Fail(o.Child("source"), "must be a CIDR");
  });
  problems.Check([&] {
    r.destination = o.String("destination").value_or("");
    df = r.destination.empty() ? 0 : CidrFamily(r.destination);
    if (!r.destination.empty() && df == 0) Fail(o.Child("destination"), "must be a CIDR");
  });
  if (sf != 0 && df != 0 && sf != df) problems.Add(path + ": source and destination must be of one family");
  problems.Check([&] { r.table = o.Int("table", 0, 4294967295LL, "must not be negative").value_or(0); });
  return r;
}

std::map<std::string, bool> ReadFlagMap(const Value& v, const std::string& path) {
  if (!v.IsObject()) Fail(path, "must be an object of name: true|false");
  if (v.MemberCount() > kMaxConfigListItems)
    Fail(path, "has more than " + std::to_string(kMaxConfigListItems) + " entries");
  std::map<std::string, bool> out;
  for (const auto& m : v.GetObject()) {
    std::string key(m.name.GetString(), m.name.GetStringLength());
    if (key.empty() || key.size() > 64) Fail(path, "names must be 1 to 64 bytes");
    if (!m.value.IsBool()) Fail(path + "." + key, "must be true or false");
    if (!out.emplace(key, m.value.GetBool()).second) Fail(path + "." + key, "given twice");
  }
  return out;
}

// Reads a whole config; throws one ConfigError naming every problem.
NetworkConfig ReadConfig(const Value& root) {
  NetworkConfig c;
  Problems problems;
  StrictObject o(root, "", c.set_fields);
  o.RejectUnknown({"profile", "interface", "routes", "rules", "neighbors", "ethtool"}, problems);
  problems.Check([&] { c.profile = o.String("profile").value_or(""); });
  problems.Check([&] {
    if (const Value* v = o.Find("interface")) c.interface = ReadInterface(*v, c.set_fields, problems);
  });
  o.EachOf("routes", kMaxConfigListItems, problems, [&](const Value& v, const std::string& path) {
    c.routes.push_back(ReadRoute(v, path, c.set_fields, problems));
  });
  o.EachOf("rules", kMaxConfigListItems, problems, [&](const Value& v, const std::string& path) {
    c.rules.push_back(ReadRule(v, path, c.set_fields, problems));
  });
  o.EachOf("neighbors", kMaxConfigListItems, problems, [&](const Value& v, const std::string& path) {
    StrictObject n(v, path, c.set_fields);
    n.RejectUnknown({"destination", "hardwareAddr"}, problems);
    NeighborConfig nc;
    problems.Check([&] {
      nc.destination = n.String("destination").value_or("");
      if (IpFamily(nc.destination) == 0) Fail(n.Child("destination"), "is required and must be an IP address");
    });
    problems.Check([&] {
      nc.hardware_addr = n.String("hardwareAddr").value_or("");
      if (!ValidMac(nc.hardware_addr)) Fail(n.Child("hardwareAddr"), "is required and must be a MAC address");
    });
    c.neighbors.push_back(std::move(nc));
  });
  problems.Check([&] {
    const Value* v = o.Find("ethtool");
    if (!v) return;
    StrictObject e(*v, "ethtool", c.set_fields);
    e.RejectUnknown({"features", "privateFlags"}, problems);
    EthtoolConfig ec;
    problems.Check([&] {
      if (const Value* f = e.Find("features")) ec.features = ReadFlagMap(*f, "ethtool.features");
    });
    problems.Check([&] {
      if (const Value* f = e.Find("privateFlags")) ec.private_flags = ReadFlagMap(*f, "ethtool.privateFlags");
    });
    c.ethtool = std::move(ec);
  });
  if (c.interface.vrf && !c.rules.empty()) problems.Add("rules: cannot be used together with interface.vrf");
  problems.ThrowIfAny();
  return c;
}

rapidjson::Document ParseObject(std::string_view json) {
  if (json.size() > kMaxConfigBytes)
    throw ConfigError("parameters: " + std::to_string(json.size()) + " bytes, at most " +
                      std::to_string(kMaxConfigBytes) + " are allowed");
  rapidjson::Document doc;
  if (const auto error = ParseJson(doc, json, /*stop_when_done=*/true); !error.empty())
    throw ConfigError("parameters: not valid JSON (" + error + ")");
  if (!doc.IsObject()) throw ConfigError("parameters: must be a JSON object");
  return doc;
}

std::string Serialize(const Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

// What makes two entries of a list one entry when configs merge: routes by
// destination and table, neighbours by destination, addresses and rules by
// their whole value.
std::string EntryIdentity(const std::string& list_path, const Value& entry) {
  auto member = [&](const char* key) {
    auto it = entry.FindMember(key);
    return it == entry.MemberEnd() || it->value.IsNull() ? std::string() : Serialize(it->value);
  };
  if (list_path == "routes" && entry.IsObject()) {
    const std::string table = member("table");
    return member("destination") + "|" + (table.empty() ? "0" : table);
  }
  if (list_path == "neighbors" && entry.IsObject()) return member("destination");
  return Serialize(entry);
}

// Merges `from` into `into`: objects key by key, scalars replaced, lists
// appended with entries of the same identity (EntryIdentity) taking the
// later value in the earlier place.
void DeepMerge(Value& into, const Value& from, rapidjson::Document::AllocatorType& alloc,
               const std::string& path = "") {
  for (const auto& m : from.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    const std::string child = path.empty() ? key : path + "." + key;
    auto it = into.FindMember(m.name);
    if (it != into.MemberEnd() && it->value.IsObject() && m.value.IsObject()) {
      DeepMerge(it->value, m.value, alloc, child);
    } else if (it != into.MemberEnd() && it->value.IsArray() && m.value.IsArray()) {
      for (const auto& entry : m.value.GetArray()) {
        const std::string identity = EntryIdentity(child, entry);
        auto& list = it->value;
        auto same = std::find_if(list.Begin(), list.End(),
                                 [&](const Value& existing) { return EntryIdentity(child, existing) == identity; });
        if (same != list.End()) {
          same->CopyFrom(entry, alloc);
        } else {
          Value copy(entry, alloc);
          list.PushBack(copy, alloc);
        }
      }
    } else if (it != into.MemberEnd()) {
      it->value.CopyFrom(m.value, alloc);
    } else {
      Value name(m.name, alloc);
      Value value(m.value, alloc);
      into.AddMember(name, value, alloc);
    }
  }
}

// The merged document of MergeNetworkConfigs; every input's problems are
// named, each with its label.
rapidjson::Document MergeDocuments(const std::vector<std::string>& json_objects,
                                   const std::vector<std::string>& labels) {
  rapidjson::Document merged;
  merged.SetObject();
  Problems problems;
  for (std::size_t i = 0; i < json_objects.size(); ++i) {
    const std::string label = i < labels.size() ? labels[i] : "config " + std::to_string(i);
    rapidjson::Document doc;
    try {
      doc = ParseObject(json_objects[i]);
      ReadConfig(doc);
    } catch (const ConfigError& e) {
      problems.Add(label + ": " + e.what());
      continue;
    }
    DeepMerge(merged, doc, merged.GetAllocator());
  }
  problems.ThrowIfAny();
  return merged;
}

NetworkConfig ReadMerged(const rapidjson::Document& merged) {
  try {
    return ReadConfig(merged);
  } catch (const ConfigError& e) {
    throw ConfigError("merged configs: " + std::string(e.what()));
  }
}

}  // namespace

NetworkConfig ParseNetworkConfig(std::string_view json) {
  auto doc = ParseObject(json);
  return ReadConfig(doc);
}

NetworkConfig MergeNetworkConfigs(const std::vector<std::string>& json_objects,
                                  const std::vector<std::string>& labels) {
  return ReadMerged(MergeDocuments(json_objects, labels));
}

MergedNetworkConfig MergeNetworkConfigsWithJson(const std::vector<std::string>& json_objects,
                                                const std::vector<std::string>& labels) {
  const auto merged = MergeDocuments(json_objects, labels);
  return {ReadMerged(merged), Serialize(merged)};
}

std::vector<std::string> FieldsSet(const NetworkConfig& config) {
  std::vector<std::string> named;  // list items and ethtool keys are named by their list
  for (const auto& field : config.set_fields)
    if (field.find('[') == std::string::npos && field.rfind("ethtool.", 0) != 0) named.push_back(field);
  std::vector<std::string> out;
  for (const auto& field : named) {
    const bool has_child = std::any_of(named.begin(), named.end(),
                                       [&](const std::string& f) { return f.rfind(field + ".", 0) == 0; });
    if (!has_child) out.push_back(field);  // "interface.mtu" says more than "interface"
  }
  return out;
}

std::vector<std::string> FieldsNotForRdmaOnly(const NetworkConfig& config) {
  std::vector<std::string> out;
  for (const auto& field : FieldsSet(config)) {
    if (field == "profile" || field == "interface" || field == "interface.forwarding" ||
        field.rfind("interface.vrf", 0) == 0)
      continue;
    out.push_back(field);
  }
  return out;
}

std::vector<std::string> ProblemsForChild(const NetworkConfig& config, const std::string& child_type) {
  const auto& i = config.interface;
  const std::string a_child = child_type == "ipvlan" ? "an IPVLAN child" : "a " + child_type + " child";
  std::vector<std::string> out;
  if (i.hardware_addr && child_type == "ipvlan")
    out.push_back("interface.hardwareAddr: an IPVLAN child has its parent's MAC; interface.type \"macvlan\" gives "
                  "the pod an address of its own");
  if (config.ethtool)
    out.push_back("ethtool: the parent's offloads are the host's; " + a_child + " takes no ethtool settings");
  if (i.disable_ebpf_programs.value_or(false))
    out.push_back("interface.disableEbpfPrograms: a new child has no BPF programs to detach");
  // An IPVLAN child's lease is asked for on its parent with a client
  // identifier of its own; a macvlan child's MAC is not known at prepare.
  if (i.dhcp.value_or(false) && child_type != "ipvlan")
    out.push_back("interface.dhcp: " + a_child + " takes static addresses (interface.addresses) or none; an "
                  "IPVLAN child can have a DHCP lease");
  return out;
}

}  // namespace dranet::kubelet
