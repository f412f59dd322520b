#include "state/plan_json.h"

#include "base/json.h"

#include <map>
#include <optional>
#include <stdexcept>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace dranet::state {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
using inject::ClaimPlan;

void Str(Writer& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

void StrList(Writer& w, const char* key, const std::vector<std::string>& values) {
  w.Key(key);
  w.StartArray();
  for (const auto& v : values) w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  w.EndArray();
}

void Num(Writer& w, const char* key, uint32_t value) {
  w.Key(key);
  w.Uint(value);
}

// "key": [ {fields of item}... ]
template <typename T, typename Fields>
void ObjectList(Writer& w, const char* key, const std::vector<T>& items, Fields fields) {
  w.Key(key);
  w.StartArray();
  for (const auto& item : items) {
    w.StartObject();
    fields(item);
    w.EndObject();
  }
  w.EndArray();
}

void WriteRoutes(Writer& w, const char* key, const std::vector<inject::Route>& routes) {
  ObjectList(w, key, routes, [&](const inject::Route& r) {
    Str(w, "destination", r.destination);
    Str(w, "gateway", r.gateway);
    Str(w, "source", r.source);
    w.Key("table");
    w.Int(r.table);
    Num(w, "metric", r.metric);
    Num(w, "scope", r.scope);
    Num(w, "protocol", r.protocol);
  });
}

void WriteRules(Writer& w, const std::vector<inject::Rule>& rules) {
  ObjectList(w, "rules", rules, [&](const inject::Rule& r) {
    Num(w, "priority", r.priority);
    Str(w, "source", r.source);
    Str(w, "destination", r.destination);
    w.Key("table");
    w.Int(r.table);
    w.Key("family");
    w.Int(r.family);
  });
}

void WriteNeighbors(Writer& w, const std::vector<inject::Neighbor>& neighbors) {
  ObjectList(w, "neighbors", neighbors, [&](const inject::Neighbor& n) {
    Str(w, "destination", n.destination);
    Str(w, "lladdr", n.lladdr);
  });
}

void WriteFlagMap(Writer& w, const char* key, const std::map<std::string, bool>& flags) {
  w.Key(key);
  w.StartObject();
  for (const auto& [name, on] : flags) {
    w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    w.Bool(on);
  }
  w.EndObject();
}

// Only what is set: an empty LinkSettings writes nothing, so checkpoints of
// plans without such config look as they always did.
void WriteLinkSettings(Writer& w, const inject::LinkSettings& s) {
  if (s.empty()) return;
  w.Key("settings");
  w.StartObject();
  if (!s.mac.empty()) Str(w, "mac", s.mac);
  auto opt = [&](const char* key, const auto& value) {
    if (!value) return;
    w.Key(key);
    w.Int64(*value);
  };
  opt("gsoMaxSize", s.gso_max_size);
  opt("groMaxSize", s.gro_max_size);
  opt("gsoIPv4MaxSize", s.gso_ipv4_max_size);
  opt("groIPv4MaxSize", s.gro_ipv4_max_size);
  opt("arpIgnore", s.arp_ignore);
  opt("arpAnnounce", s.arp_announce);
  if (s.forwarding) {
    w.Key("forwarding");
    w.Bool(*s.forwarding);
  }
  if (!s.ethtool_features.empty()) WriteFlagMap(w, "ethtoolFeatures", s.ethtool_features);
  if (!s.ethtool_private_flags.empty()) WriteFlagMap(w, "ethtoolPrivateFlags", s.ethtool_private_flags);
  w.EndObject();
}

void WritePlan(Writer& w, const ClaimPlan& p) {
  w.StartObject();
  Str(w, "claimUID", p.claim_uid);
  Str(w, "namespace", p.claim_namespace);
  Str(w, "name", p.claim_name);
  StrList(w, "podUIDs", p.pod_uids);
  ObjectList(w, "devices", p.devices, [&](const inject::AllocatedDevice& d) {
    Str(w, "request", d.request);
    Str(w, "pool", d.pool);
    Str(w, "device", d.device);
    if (d.admin_access) {
      w.Key("adminAccess");
      w.Bool(true);
    }
    if (!d.share_id.empty()) Str(w, "shareID", d.share_id);
  });
  ObjectList(w, "deviceNodes", p.device_nodes, [&](const inject::DeviceNode& n) {
    Str(w, "containerPath", n.container_path);
    Str(w, "hostPath", n.host_path);
    Num(w, "major", n.major);
    Num(w, "minor", n.minor);
    Str(w, "permissions", n.permissions);
    Num(w, "fileMode", n.file_mode);
  });
  w.Key("env");
  w.StartObject();
  for (const auto& [k, v] : p.env) Str(w, k.c_str(), v);
  w.EndObject();
  ObjectList(w, "mounts", p.mounts, [&](const inject::Mount& m) {
    Str(w, "hostPath", m.host_path);
    Str(w, "containerPath", m.container_path);
    StrList(w, "options", m.options);
  });
  ObjectList(w, "netdevs", p.netdevs, [&](const inject::NetdevPlan& n) {
    Str(w, "device", n.device_name);
    Str(w, "hostIfName", n.host_if_name);
    Str(w, "podIfName", n.pod_if_name);
    if (n.mtu) Num(w, "mtu", *n.mtu);
    StrList(w, "addresses", n.addresses);
    WriteRoutes(w, "routes", n.routes);
    WriteRules(w, n.rules);
    WriteNeighbors(w, n.neighbors);
    WriteLinkSettings(w, n.settings);
    if (!n.vrf_name.empty()) {
      Str(w, "vrfName", n.vrf_name);
      Num(w, "vrfTable", n.vrf_table);
    }
    if (n.disable_ebpf_programs) {
      w.Key("disableEbpfPrograms");
      w.Bool(true);
    }
    if (!n.child_type.empty()) {
      Str(w, "childType", n.child_type);
      Str(w, "childMode", n.child_mode);
    }
    if (n.dhcp_lease) {
      w.Key("dhcpLease");
      w.StartObject();
      Str(w, "address", n.dhcp_lease->address);
      Str(w, "serverID", n.dhcp_lease->server_id);
      Str(w, "serverMAC", n.dhcp_lease->server_mac);
      Str(w, "clientMAC", n.dhcp_lease->client_mac);
      if (!n.dhcp_lease->client_id.empty()) Str(w, "clientID", n.dhcp_lease->client_id);
      w.EndObject();
    }
    Str(w, "rdmaDevice", n.rdma_device);
    w.Key("rdmaExclusive");
    w.Bool(n.rdma_exclusive);
    w.Key("hostState");
    w.StartObject();
    Str(w, "ifName", n.host_state.if_name);
    if (!n.host_state.mac.empty()) Str(w, "mac", n.host_state.mac);
    if (!n.host_state.permanent_mac.empty()) Str(w, "permanentMac", n.host_state.permanent_mac);
    Num(w, "mtu", n.host_state.mtu);
    StrList(w, "addresses", n.host_state.addresses);
    WriteRoutes(w, "routes", n.host_state.routes);
    WriteRules(w, n.host_state.rules);
    WriteNeighbors(w, n.host_state.neighbors);
    w.Key("up");
    w.Bool(n.host_state.up);
    WriteLinkSettings(w, n.host_state.settings);
    w.EndObject();
  });
  StrList(w, "cdiDeviceIDs", p.cdi_device_ids);
  if (!p.profiles.empty()) {
    ObjectList(w, "profiles", p.profiles, [&](const inject::ProfileRecord& r) {
      Str(w, "device", r.device);
      Str(w, "profile", r.profile);
      Str(w, "config", r.config_json);
      Str(w, "macAddress", r.mac_address);
      Str(w, "pciAddress", r.pci_address);
    });
  }
  if (!p.published_attributes.empty()) {
    w.Key("publishedAttributes");
    w.StartObject();
    for (const auto& [device, json] : p.published_attributes) {
      // Re-read rather than pasted: the checkpoint stays valid, canonical
      // JSON whatever the text holds (a record that is not an object is left out).
      rapidjson::Document record;
      if (!ParseJson(record, json).empty() || !record.IsObject()) continue;
      w.Key(device.c_str(), static_cast<rapidjson::SizeType>(device.size()));
      record.Accept(w);
    }
    w.EndObject();
  }
  w.EndObject();
}

// Strict readers: the field must be present with the right type.
[[noreturn]] void Bad(const std::string& where, const char* key, const char* want) {
  throw std::invalid_argument(where + "." + key + ": missing or not " + want);
}

const rapidjson::Value& Field(const rapidjson::Value& o, const std::string& where, const char* key) {
  if (!o.IsObject()) throw std::invalid_argument(where + ": not an object");
  auto it = o.FindMember(key);
  if (it == o.MemberEnd()) Bad(where, key, "present");
  return it->value;
}

std::string GetStr(const rapidjson::Value& o, const std::string& where, const char* key) {
  const auto& v = Field(o, where, key);
  if (!v.IsString()) Bad(where, key, "a string");
  return {v.GetString(), v.GetStringLength()};
}

uint32_t GetU32(const rapidjson::Value& o, const std::string& where, const char* key) {
  const auto& v = Field(o, where, key);
  if (!v.IsUint()) Bad(where, key, "an unsigned 32-bit integer");
  return v.GetUint();
}

uint8_t GetU8(const rapidjson::Value& o, const std::string& where, const char* key) {
  const uint32_t v = GetU32(o, where, key);
  if (v > 255) Bad(where, key, "an integer from 0 to 255");
  return static_cast<uint8_t>(v);
}

const rapidjson::Value& GetArr(const rapidjson::Value& o, const std::string& where, const char* key) {
  const auto& v = Field(o, where, key);
  if (!v.IsArray()) Bad(where, key, "an array");
  return v;
}

std::vector<std::string> GetStrList(const rapidjson::Value& o, const std::string& where,
                                    const char* key) {
  std::vector<std::string> out;
  for (const auto& v : GetArr(o, where, key).GetArray()) {
    if (!v.IsString()) Bad(where, key, "an array of strings");
    out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

std::vector<inject::Route> GetRoutes(const rapidjson::Value& o, const std::string& where,
                                     const char* key) {
  std::vector<inject::Route> out;
  const std::string here = where + "." + key;
  for (const auto& v : GetArr(o, where, key).GetArray()) {
    inject::Route r;
    r.destination = GetStr(v, here, "destination");
    r.gateway = GetStr(v, here, "gateway");
    r.source = GetStr(v, here, "source");
    const auto& table = Field(v, here, "table");
    if (!table.IsInt()) Bad(here, "table", "an integer");
    r.table = table.GetInt();
    r.metric = GetU32(v, here, "metric");
    // Absent in checkpoints written before scope and protocol were kept.
    if (v.HasMember("scope")) r.scope = GetU8(v, here, "scope");
    if (v.HasMember("protocol")) r.protocol = GetU8(v, here, "protocol");
    out.push_back(std::move(r));
  }
  return out;
}

int32_t GetI32(const rapidjson::Value& o, const std::string& where, const char* key) {
  const auto& v = Field(o, where, key);
  if (!v.IsInt()) Bad(where, key, "an integer");
  return v.GetInt();
}

// Rules and neighbours are absent in checkpoints written before they were
// kept: an absent list is empty, a present one is read strictly.
std::vector<inject::Rule> GetRules(const rapidjson::Value& o, const std::string& where) {
  std::vector<inject::Rule> out;
  if (!o.IsObject() || !o.HasMember("rules")) return out;
  const std::string here = where + ".rules";
  for (const auto& v : GetArr(o, where, "rules").GetArray()) {
    inject::Rule r;
    r.priority = GetU32(v, here, "priority");
    r.source = GetStr(v, here, "source");
    r.destination = GetStr(v, here, "destination");
    r.table = GetI32(v, here, "table");
    r.family = GetI32(v, here, "family");
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<inject::Neighbor> GetNeighbors(const rapidjson::Value& o, const std::string& where) {
  std::vector<inject::Neighbor> out;
  if (!o.IsObject() || !o.HasMember("neighbors")) return out;
  const std::string here = where + ".neighbors";
  for (const auto& v : GetArr(o, where, "neighbors").GetArray())
    out.push_back({GetStr(v, here, "destination"), GetStr(v, here, "lladdr")});
  return out;
}

std::map<std::string, bool> GetFlagMap(const rapidjson::Value& o, const std::string& where, const char* key) {
  const auto& v = Field(o, where, key);
  if (!v.IsObject()) Bad(where, key, "an object");
  std::map<std::string, bool> out;
  for (const auto& m : v.GetObject()) {
    if (!m.value.IsBool()) Bad(where + "." + key, m.name.GetString(), "a boolean");
    out.emplace(std::string(m.name.GetString(), m.name.GetStringLength()), m.value.GetBool());
  }
  return out;
}

// Absent (older checkpoints, nothing changed): all unset.
inject::LinkSettings GetLinkSettings(const rapidjson::Value& o, const std::string& where) {
  inject::LinkSettings s;
  if (!o.IsObject() || !o.HasMember("settings")) return s;
  const auto& v = o["settings"];
  const std::string here = where + ".settings";
  if (!v.IsObject()) Bad(where, "settings", "an object");
  if (v.HasMember("mac")) s.mac = GetStr(v, here, "mac");
  auto u32 = [&](const char* key, std::optional<uint32_t>& into) {
    if (v.HasMember(key)) into = GetU32(v, here, key);
  };
  u32("gsoMaxSize", s.gso_max_size);
  u32("groMaxSize", s.gro_max_size);
  u32("gsoIPv4MaxSize", s.gso_ipv4_max_size);
  u32("groIPv4MaxSize", s.gro_ipv4_max_size);
  if (v.HasMember("arpIgnore")) s.arp_ignore = GetI32(v, here, "arpIgnore");
  if (v.HasMember("arpAnnounce")) s.arp_announce = GetI32(v, here, "arpAnnounce");
  if (v.HasMember("forwarding")) {
    if (!v["forwarding"].IsBool()) Bad(here, "forwarding", "a boolean");
    s.forwarding = v["forwarding"].GetBool();
  }
  if (v.HasMember("ethtoolFeatures")) s.ethtool_features = GetFlagMap(v, here, "ethtoolFeatures");
  if (v.HasMember("ethtoolPrivateFlags")) s.ethtool_private_flags = GetFlagMap(v, here, "ethtoolPrivateFlags");
  return s;
}

ClaimPlan ReadPlan(const rapidjson::Value& o, const std::string& where) {
  ClaimPlan p;
  p.claim_uid = GetStr(o, where, "claimUID");
  const std::string here = where + "[" + p.claim_uid + "]";
  p.claim_namespace = GetStr(o, here, "namespace");
  p.claim_name = GetStr(o, here, "name");
  p.pod_uids = GetStrList(o, here, "podUIDs");
  for (const auto& d : GetArr(o, here, "devices").GetArray()) {
    const std::string w = here + ".devices";
    p.devices.push_back({GetStr(d, w, "request"), GetStr(d, w, "pool"), GetStr(d, w, "device")});
    if (d.HasMember("adminAccess")) {  // absent: not adminAccess (plans written before it)
      if (!d["adminAccess"].IsBool()) Bad(w, "adminAccess", "a boolean");
      p.devices.back().admin_access = d["adminAccess"].GetBool();
    }
    if (d.HasMember("shareID")) p.devices.back().share_id = GetStr(d, w, "shareID");  // absent: not a share
  }
  for (const auto& n : GetArr(o, here, "deviceNodes").GetArray()) {
    const std::string w = here + ".deviceNodes";
    inject::DeviceNode node{GetStr(n, w, "containerPath"), GetStr(n, w, "hostPath"),
                            GetU32(n, w, "major"), GetU32(n, w, "minor"), GetStr(n, w, "permissions")};
    if (n.HasMember("fileMode")) node.file_mode = GetU32(n, w, "fileMode");  // absent: the default
    p.device_nodes.push_back(std::move(node));
  }
  const auto& env = Field(o, here, "env");
  if (!env.IsObject()) Bad(here, "env", "an object");
  for (const auto& m : env.GetObject()) {
    if (!m.value.IsString()) Bad(here + ".env", m.name.GetString(), "a string");
    p.env.emplace(std::string(m.name.GetString(), m.name.GetStringLength()),
                  std::string(m.value.GetString(), m.value.GetStringLength()));
  }
  for (const auto& m : GetArr(o, here, "mounts").GetArray()) {
    const std::string w = here + ".mounts";
    p.mounts.push_back({GetStr(m, w, "hostPath"), GetStr(m, w, "containerPath"),
                        GetStrList(m, w, "options")});
  }
  for (const auto& n : GetArr(o, here, "netdevs").GetArray()) {
    const std::string w = here + ".netdevs";
    inject::NetdevPlan np;
    np.device_name = GetStr(n, w, "device");
    np.host_if_name = GetStr(n, w, "hostIfName");
    np.pod_if_name = GetStr(n, w, "podIfName");
    if (n.IsObject() && n.HasMember("mtu")) np.mtu = GetU32(n, w, "mtu");
    np.addresses = GetStrList(n, w, "addresses");
    np.routes = GetRoutes(n, w, "routes");
    np.rules = GetRules(n, w);
    np.neighbors = GetNeighbors(n, w);
    np.settings = GetLinkSettings(n, w);
    if (n.HasMember("vrfName")) {
      np.vrf_name = GetStr(n, w, "vrfName");
      np.vrf_table = GetU32(n, w, "vrfTable");
    }
    if (n.HasMember("disableEbpfPrograms")) {
      if (!n["disableEbpfPrograms"].IsBool()) Bad(w, "disableEbpfPrograms", "a boolean");
      np.disable_ebpf_programs = n["disableEbpfPrograms"].GetBool();
    }
    if (n.HasMember("childType")) {
      np.child_type = GetStr(n, w, "childType");
      np.child_mode = GetStr(n, w, "childMode");
      const bool ipvlan = np.child_type == "ipvlan", macvlan = np.child_type == "macvlan";
      if (!ipvlan && !macvlan) Bad(w, "childType", "\"ipvlan\" or \"macvlan\"");
      const auto& m = np.child_mode;
      if (ipvlan && m != "l2" && m != "l3" && m != "l3s") Bad(w, "childMode", "\"l2\", \"l3\" or \"l3s\"");
      if (macvlan && m != "bridge" && m != "private" && m != "vepa")
        Bad(w, "childMode", "\"bridge\", \"private\" or \"vepa\"");
    }
    if (n.HasMember("dhcpLease")) {
      const auto& lease = n["dhcpLease"];
      const std::string lw = w + ".dhcpLease";
      np.dhcp_lease = inject::DhcpLeaseRecord{GetStr(lease, lw, "address"), GetStr(lease, lw, "serverID"),
                                              GetStr(lease, lw, "serverMAC"), GetStr(lease, lw, "clientMAC")};
      if (lease.HasMember("clientID")) np.dhcp_lease->client_id = GetStr(lease, lw, "clientID");
    }
    np.rdma_device = GetStr(n, w, "rdmaDevice");
    const auto& exclusive = Field(n, w, "rdmaExclusive");
    if (!exclusive.IsBool()) Bad(w, "rdmaExclusive", "a boolean");
    np.rdma_exclusive = exclusive.GetBool();
    const auto& hs = Field(n, w, "hostState");
    const std::string hw = w + ".hostState";
    np.host_state.if_name = GetStr(hs, hw, "ifName");
    if (hs.IsObject() && hs.HasMember("mac")) np.host_state.mac = GetStr(hs, hw, "mac");
    if (hs.IsObject() && hs.HasMember("permanentMac")) np.host_state.permanent_mac = GetStr(hs, hw, "permanentMac");
    np.host_state.mtu = GetU32(hs, hw, "mtu");
    np.host_state.addresses = GetStrList(hs, hw, "addresses");
    np.host_state.routes = GetRoutes(hs, hw, "routes");
    np.host_state.rules = GetRules(hs, hw);
    np.host_state.neighbors = GetNeighbors(hs, hw);
    if (hs.HasMember("up")) {
      if (!hs["up"].IsBool()) Bad(hw, "up", "a boolean");
      np.host_state.up = hs["up"].GetBool();
    }
    np.host_state.settings = GetLinkSettings(hs, hw);
    p.netdevs.push_back(std::move(np));
  }
  p.cdi_device_ids = GetStrList(o, here, "cdiDeviceIDs");
  if (o.HasMember("profiles")) {
    const std::string w = here + ".profiles";
    for (const auto& r : GetArr(o, here, "profiles").GetArray())
      p.profiles.push_back({GetStr(r, w, "device"), GetStr(r, w, "profile"), GetStr(r, w, "config"),
                            GetStr(r, w, "macAddress"), GetStr(r, w, "pciAddress")});
  }
  if (o.HasMember("publishedAttributes")) {
    const auto& published = o["publishedAttributes"];
    if (!published.IsObject()) Bad(here, "publishedAttributes", "an object");
    for (const auto& entry : published.GetObject()) {
      if (!entry.value.IsObject()) Bad(here + ".publishedAttributes", entry.name.GetString(), "an object");
      rapidjson::StringBuffer text;
      rapidjson::Writer<rapidjson::StringBuffer> writer(text);
      entry.value.Accept(writer);
      p.published_attributes.emplace(entry.name.GetString(), text.GetString());
    }
  }
  return p;
}

}  // namespace

std::string PlansToJson(const std::vector<ClaimPlan>& plans) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartArray();
  for (const auto& p : plans) WritePlan(w, p);
  w.EndArray();
  return {buffer.GetString(), buffer.GetSize()};
}

std::string PlanToJson(const ClaimPlan& plan) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  WritePlan(w, plan);
  return {buffer.GetString(), buffer.GetSize()};
}

std::vector<ClaimPlan> PlansFromJson(const rapidjson::Value& array) {
  if (!array.IsArray()) throw std::invalid_argument("claims: not an array");
  std::vector<ClaimPlan> plans;
  for (const auto& item : array.GetArray()) plans.push_back(ReadPlan(item, "claims"));
  return plans;
}

}  // namespace dranet::state
