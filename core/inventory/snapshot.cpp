#include "inventory/snapshot.h"

#include <arpa/inet.h>
#include <fnmatch.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <stdexcept>

#include "base/json.h"
#include "base/files.h"
#include "inventory/inventory.h"
#include "inventory/naming.h"
#include "inventory/sysfs_tree.h"

namespace dranet::inventory {
namespace fs = std::filesystem;

namespace {

// netlink.json and the marker are small; anything bigger is not ours.
constexpr std::size_t kMaxSnapshotJsonBytes = 16 * 1024 * 1024;

// `name` in the snapshot directory `root`.
std::optional<rapidjson::Document> ReadJsonFile(const SysfsDirectory& root, const char* name, Logger& log) {
  auto text = root.ReadFile(name, kMaxSnapshotJsonBytes);
  if (!text) return std::nullopt;
  rapidjson::Document document;
  const auto error = ParseJson(document, *text);
  if (!error.empty() || !document.IsObject()) {
    log.Error("snapshot file is not a JSON object; ignoring it",
              {{"file", (root.path() / name).string()}, {"error", error.empty() ? "not an object" : error}});
    return std::nullopt;
  }
  return document;
}

std::string StringMember(const rapidjson::Value& object, const char* key) {
  auto it = object.FindMember(key);
  return it != object.MemberEnd() && it->value.IsString() ? std::string(it->value.GetString()) : std::string();
}

// A netlink.json link entry's BPF program names ("tcFilterNames",
// "tcxProgramNames": arrays of strings). nullopt when the entry has neither
// (snapshots taken before they were recorded): the names are unknown, not
// absent. Non-string items are dropped.
std::optional<BpfProgramNames> ReadBpfProgramNames(const rapidjson::Value& entry) {
  std::optional<BpfProgramNames> names;
  for (const auto& [key, into] : {std::pair{"tcFilterNames", &BpfProgramNames::tc_filters},
                                  std::pair{"tcxProgramNames", &BpfProgramNames::tcx_programs}}) {
    auto member = entry.FindMember(key);
    if (member == entry.MemberEnd() || !member->value.IsArray()) continue;
    if (!names) names.emplace();
    std::set<std::string> unique;
    for (const auto& item : member->value.GetArray()) {
      if (item.IsString()) unique.emplace(item.GetString(), item.GetStringLength());
    }
    (*names).*into = {unique.begin(), unique.end()};
  }
  return names;
}

// `master_out` receives the name of the link this one is enslaved to, if any.
LinkFacts ReadSysfsLink(const SysfsDirectory& dir, const std::string& name, Logger& log, std::string* master_out) {
  LinkFacts link;
  link.name = name;
  auto number = [&](const char* file, bool hex) -> std::optional<uint64_t> {
    auto text = dir.Read(file);
    if (!text) return std::nullopt;
    std::optional<uint64_t> value;
    if (hex) {
      value = ParseHex(*text);
    } else if (auto decimal = ParseDecimal(*text); decimal && *decimal >= 0) {
      value = static_cast<uint64_t>(*decimal);
    }
    if (!value || *value > UINT32_MAX) {
      log.Warning("ignoring malformed sysfs value",
                  {{"file", (dir.path() / file).string()}, {"bytes", text->size()}});
      return std::nullopt;
    }
    return value;
  };
  link.ifindex = static_cast<int>(number("ifindex", false).value_or(0));
  link.flags = static_cast<uint32_t>(number("flags", true).value_or(0));
  link.mtu = static_cast<uint32_t>(number("mtu", false).value_or(0));
  link.arp_type = static_cast<uint16_t>(number("type", false).value_or(0));
  link.parent_index = static_cast<int>(number("iflink", false).value_or(0));
  link.operstate = dir.Read("operstate").value_or("");
  link.mac = dir.Read("address").value_or("");
  link.alias = dir.Read("ifalias").value_or("");
  *master_out = dir.LinkTargetName("master").value_or("");
  return link;
}

// The facts netlink.json records for a link (written by capture from the
// live RTM_GETLINK dump): the same fields ReadSysfsLink reads from sysfs,
// plus what only rtnetlink says (MTU range, GSO/GRO sizes). A member that is
// present but not a number in range is logged and read as absent.
LinkFacts ReadRecordedLink(const rapidjson::Value& entry, const std::string& name, const fs::path& file, Logger& log,
                           std::string* master_out) {
  LinkFacts link;
  link.name = name;
  auto number = [&](const char* key, uint32_t max) -> uint32_t {
    auto it = entry.FindMember(key);
    if (it == entry.MemberEnd()) return 0;
    if (it->value.IsUint() && it->value.GetUint() <= max) return it->value.GetUint();
    log.Warning("ignoring a malformed link fact in netlink.json",
                {{"file", file.string()}, {"ifName", name}, {"member", key}});
    return 0;
  };
  constexpr uint32_t kMaxIndex = INT32_MAX;
  link.ifindex = static_cast<int>(number("ifindex", kMaxIndex));
  link.flags = number("flags", UINT32_MAX);
  link.mtu = number("mtu", UINT32_MAX);
  link.arp_type = static_cast<uint16_t>(number("arpType", UINT16_MAX));
  link.parent_index = static_cast<int>(number("parentIndex", kMaxIndex));
  link.min_mtu = number("minMtu", UINT32_MAX);
  link.max_mtu = number("maxMtu", UINT32_MAX);
  link.gso_max_size = number("gsoMaxSize", UINT32_MAX);
  link.gro_max_size = number("groMaxSize", UINT32_MAX);
  link.gso_ipv4_max_size = number("gsoIpv4MaxSize", UINT32_MAX);
  link.gro_ipv4_max_size = number("groIpv4MaxSize", UINT32_MAX);
  link.operstate = StringMember(entry, "operstate");
  link.mac = StringMember(entry, "mac");
  link.alias = StringMember(entry, "alias");
  *master_out = StringMember(entry, "master");
  return link;
}


// netlink.json spells rtnetlink enums the way iproute2 does where a name is
// common; any other value is written as a number. The reader accepts both.
struct NamedValue {
  uint32_t value;
  const char* name;
};
constexpr NamedValue kScopeNames[] = {
    {RT_SCOPE_UNIVERSE, "universe"}, {RT_SCOPE_LINK, "link"}, {RT_SCOPE_HOST, "host"}};
constexpr NamedValue kTableNames[] = {
    {RT_TABLE_MAIN, "main"}, {RT_TABLE_DEFAULT, "default"}, {RT_TABLE_LOCAL, "local"}};
constexpr NamedValue kProtocolNames[] = {
    {RTPROT_KERNEL, "kernel"}, {RTPROT_BOOT, "boot"}, {RTPROT_STATIC, "static"}, {RTPROT_DHCP, "dhcp"}};
constexpr NamedValue kRouteTypeNames[] = {
    {RTN_UNSPEC, "unspec"},       {RTN_UNICAST, "unicast"},         {RTN_LOCAL, "local"},
    {RTN_BROADCAST, "broadcast"}, {RTN_ANYCAST, "anycast"},         {RTN_MULTICAST, "multicast"},
    {RTN_BLACKHOLE, "blackhole"}, {RTN_UNREACHABLE, "unreachable"}, {RTN_PROHIBIT, "prohibit"},
    {RTN_THROW, "throw"},         {RTN_NAT, "nat"},                 {RTN_XRESOLVE, "xresolve"}};
constexpr NamedValue kRuleActionNames[] = {
    {FR_ACT_TO_TBL, "lookup"},       {FR_ACT_GOTO, "goto"},               {FR_ACT_NOP, "nop"},
    {FR_ACT_BLACKHOLE, "blackhole"}, {FR_ACT_UNREACHABLE, "unreachable"}, {FR_ACT_PROHIBIT, "prohibit"}};

const char* FamilyName(int family) { return family == AF_INET6 ? "inet6" : "inet"; }

bool IsIp(int family, const std::string& text) {
  unsigned char bytes[16];
  return inet_pton(family, text.c_str(), bytes) == 1;
}

// "ip/prefixlen" in `family`, prefixlen within the address size.
bool IsCidr(int family, const std::string& text) {
  auto slash = text.find('/');
  if (slash == std::string::npos || !IsIp(family, text.substr(0, slash))) return false;
  auto length = ParseDecimal(std::string_view(text).substr(slash + 1));
  return length && *length >= 0 && *length <= (family == AF_INET ? 32 : 128);
}

// Reads netlink.json's routes, rules and neighbours into `facts`, whose
// links are already filled in. Entries that cannot be understood, or that
// name an interface the snapshot does not have, are dropped with a warning.
class NetlinkJsonReader {
 public:
  NetlinkJsonReader(const fs::path& file, NetlinkFacts& facts, Logger& log) : file_(file), facts_(facts), log_(log) {
    for (const auto& link : facts.links) index_by_name_[link.name] = link.ifindex;
  }

  void Read(const rapidjson::Value& document) {
    for (const auto& entry : Array(document, "routes")) ReadRoute(entry);
    for (const auto& entry : Array(document, "rules")) ReadRule(entry);
    for (const auto& entry : Array(document, "neighbors")) ReadNeighbor(entry);
  }

 private:
  static std::span<const rapidjson::Value> Array(const rapidjson::Value& object, const char* key) {
    auto it = object.FindMember(key);
    if (it == object.MemberEnd() || !it->value.IsArray()) return {};
    auto array = it->value.GetArray();
    return {array.Begin(), array.End()};
  }

  void Drop(const char* what, const std::string& why) {
    log_.Warning("ignoring a netlink.json entry", {{"file", file_.string()}, {"entry", what}, {"reason", why}});
  }

  // An enum member: a name from `names`, a number up to `max`, or `fallback`
  // when absent; nullopt (after a warning) otherwise.
  std::optional<uint32_t> Named(const rapidjson::Value& entry, const char* key, std::span<const NamedValue> names,
                                uint32_t fallback, uint32_t max, const char* what) {
    auto it = entry.FindMember(key);
    if (it == entry.MemberEnd()) return fallback;
    if (it->value.IsUint() && it->value.GetUint() <= max) return it->value.GetUint();
    if (it->value.IsString()) {
      for (const auto& named : names) {
        if (it->value.GetString() == std::string_view(named.name)) return named.value;
      }
    }
    Drop(what, std::string("bad \"") + key + "\"");
    return std::nullopt;
  }

  std::optional<int> Family(const rapidjson::Value& entry, const char* what) {
    std::string family = StringMember(entry, "family");
    if (family == "inet") return AF_INET;
    if (family == "inet6") return AF_INET6;
    Drop(what, "\"family\" is neither inet nor inet6");
    return std::nullopt;
  }

  // ifindex of a link of the snapshot, or 0 (after a warning) when unknown.
  int Interface(const std::string& name, const char* what) {
    auto it = index_by_name_.find(name);
    if (it != index_by_name_.end()) return it->second;
    Drop(what, "interface \"" + name + "\" is not a link of the snapshot");
    return 0;
  }

  // A gateway of either family: IPv4 routes may have an IPv6 next hop (RTA_VIA).
  bool ValidGateway(const std::string& gateway) {
    return gateway.empty() || IsIp(AF_INET, gateway) || IsIp(AF_INET6, gateway);
  }

  void ReadRoute(const rapidjson::Value& entry) {
    if (!entry.IsObject()) return Drop("route", "not an object");
    auto family = Family(entry, "route");
    if (!family) return;
    RouteFacts route;
    route.family = *family;
    std::string destination = StringMember(entry, "destination");
    route.destination = destination == "default" ? (route.family == AF_INET ? "0.0.0.0/0" : "::/0") : destination;
    if (!IsCidr(route.family, route.destination)) return Drop("route", "bad \"destination\" " + destination);
    route.source = StringMember(entry, "source");
    if (!route.source.empty() && !IsIp(route.family, route.source)) return Drop("route", "bad \"source\"");
    auto scope = Named(entry, "scope", kScopeNames, RT_SCOPE_UNIVERSE, UINT8_MAX, "route");
    auto table = Named(entry, "table", kTableNames, RT_TABLE_MAIN, UINT32_MAX, "route");
    auto protocol = Named(entry, "protocol", kProtocolNames, RTPROT_UNSPEC, UINT8_MAX, "route");
    auto type = Named(entry, "type", kRouteTypeNames, RTN_UNICAST, UINT8_MAX, "route");
    if (!scope || !table || !protocol || !type) return;
    route.scope = static_cast<uint8_t>(*scope);
    route.table = *table;
    route.protocol = static_cast<uint8_t>(*protocol);
    route.type = static_cast<uint8_t>(*type);
    auto metric = entry.FindMember("metric");
    if (metric != entry.MemberEnd()) {
      if (!metric->value.IsUint()) return Drop("route", "bad \"metric\"");
      route.metric = metric->value.GetUint();
    }

    bool had_nexthops = false;
    auto add_nexthop = [&](const std::string& name, const std::string& gateway, uint32_t weight) {
      had_nexthops = true;
      RouteNexthop hop;
      if (!name.empty() && (hop.ifindex = Interface(name, "route next hop")) == 0) return;
      if (!ValidGateway(gateway)) return Drop("route next hop", "bad \"gateway\" " + gateway);
      hop.gateway = gateway;
      hop.weight = static_cast<uint8_t>(std::clamp<uint32_t>(weight, 1, UINT8_MAX));
      route.nexthops.push_back(std::move(hop));
    };
    if (auto interfaces = entry.FindMember("interfaces"); interfaces != entry.MemberEnd()) {
      // formatVersion 1: a main-table default route; several interfaces
      // make it a multipath route.
      for (const auto& name : Array(entry, "interfaces")) {
        if (name.IsString()) add_nexthop(name.GetString(), "", 1);
      }
    } else if (auto nexthops = entry.FindMember("nexthops"); nexthops != entry.MemberEnd()) {
      for (const auto& hop : Array(entry, "nexthops")) {
        if (!hop.IsObject()) continue;
        auto weight = hop.FindMember("weight");
        add_nexthop(StringMember(hop, "interface"), StringMember(hop, "gateway"),
                    weight != hop.MemberEnd() && weight->value.IsUint() ? weight->value.GetUint() : 1);
      }
    } else if (entry.HasMember("interface") || entry.HasMember("gateway")) {
      add_nexthop(StringMember(entry, "interface"), StringMember(entry, "gateway"), 1);
    }
    // A route whose every next hop was dropped would read as a blackhole.
    if (had_nexthops && route.nexthops.empty()) return;
    facts_.routes.push_back(std::move(route));
  }

  void ReadRule(const rapidjson::Value& entry) {
    if (!entry.IsObject()) return Drop("rule", "not an object");
    auto family = Family(entry, "rule");
    if (!family) return;
    RuleFacts rule;
    rule.family = *family;
    rule.source = StringMember(entry, "source");
    rule.destination = StringMember(entry, "destination");
    if ((!rule.source.empty() && !IsCidr(rule.family, rule.source)) ||
        (!rule.destination.empty() && !IsCidr(rule.family, rule.destination))) {
      return Drop("rule", "bad \"source\" or \"destination\"");
    }
    auto priority = Named(entry, "priority", {}, 0, UINT32_MAX, "rule");
    auto table = Named(entry, "table", kTableNames, 0, UINT32_MAX, "rule");
    auto action = Named(entry, "action", kRuleActionNames, FR_ACT_TO_TBL, UINT8_MAX, "rule");
    if (!priority || !table || !action) return;
    rule.priority = *priority;
    rule.table = *table;
    rule.action = static_cast<uint8_t>(*action);
    auto other = entry.FindMember("otherSelectors");
    rule.other_selectors = other != entry.MemberEnd() && other->value.IsBool() && other->value.GetBool();
    facts_.rules.push_back(std::move(rule));
  }

  void ReadNeighbor(const rapidjson::Value& entry) {
    if (!entry.IsObject()) return Drop("neighbor", "not an object");
    NeighborFacts neighbor;
    neighbor.destination = StringMember(entry, "destination");
    neighbor.family = IsIp(AF_INET, neighbor.destination) ? AF_INET : AF_INET6;
    if (!IsIp(neighbor.family, neighbor.destination)) return Drop("neighbor", "bad \"destination\"");
    neighbor.lladdr = StringMember(entry, "lladdr");
    std::transform(neighbor.lladdr.begin(), neighbor.lladdr.end(), neighbor.lladdr.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    neighbor.ifindex = Interface(StringMember(entry, "interface"), "neighbor");
    if (neighbor.ifindex == 0) return;
    facts_.neighbors.push_back(std::move(neighbor));
  }

  fs::path file_;
  NetlinkFacts& facts_;
  Logger& log_;
  std::map<std::string, int> index_by_name_;
};

}  // namespace

bool IsSnapshot(const fs::path& host_root) {
  return SysfsDirectory::OpenRoot(host_root).FileType(kSnapshotMarkerFile) == S_IFREG;
}

std::optional<SnapshotInfo> ReadSnapshotInfo(const fs::path& host_root, Logger& log) {
  auto document = ReadJsonFile(SysfsDirectory::OpenRoot(host_root), kSnapshotMarkerFile, log);
  if (!document) return std::nullopt;
  SnapshotInfo info;
  auto version = document->FindMember("formatVersion");
  if (version != document->MemberEnd() && version->value.IsInt()) info.format_version = version->value.GetInt();
  info.node_name = StringMember(*document, "nodeName");
  info.source = StringMember(*document, "source");
  info.description = StringMember(*document, "description");
  return info;
}

void RequireUsableSnapshotNetlink(const fs::path& host_root) {
  const fs::path file = host_root / kSnapshotNetlinkFile;
  auto root = SysfsDirectory::OpenRoot(host_root);
  // A link counts as present even when what it points at does not: a
  // netlink.json that exists but cannot be read is refused, not skipped.
  if (!root.FileType(kSnapshotNetlinkFile, /*follow_link=*/false)) return;
  std::ostringstream reason;
  Logger quiet(reason);
  if (!ReadJsonFile(root, kSnapshotNetlinkFile, quiet))
    throw std::runtime_error("snapshot file " + file.string() +
                             " is unusable; refusing to discover without its routes: " + reason.str());
}

NetlinkFacts ReadSnapshotNetlinkFacts(const fs::path& host_root, Logger& log) {
  HostPaths paths(host_root);
  auto root = SysfsDirectory::OpenRoot(paths.root);
  fs::path netlink_file = paths.root / kSnapshotNetlinkFile;
  auto document = ReadJsonFile(root, kSnapshotNetlinkFile, log);
  std::map<std::string, const rapidjson::Value*> entry_by_name;
  if (!document) {
    log.Warning("snapshot has no usable netlink.json; link kinds, addresses and routes are unknown",
                {{"file", netlink_file.string()}});
  } else if (auto links = document->FindMember("links"); links != document->MemberEnd() && links->value.IsArray()) {
    for (const auto& entry : links->value.GetArray()) {
      if (entry.IsObject()) entry_by_name.emplace(StringMember(entry, "name"), &entry);
    }
  }

  // The links are the snapshot's class/net entries. Their facts come from
  // the recorded dump where netlink.json has them (one file, as a live node
  // reads one dump), else from each netdev's sysfs files.
  NetlinkFacts facts;
  std::map<std::string, std::string> master_by_name;
  // Netdev directories are opened from sys/: their class/net links climb
  // to sys/devices/, which keeps the walk below the directory it starts in.
  SysfsDirectory sysfs(root, "sys");
  for (const auto& name : sysfs.List("class/net")) {
    auto found = entry_by_name.find(name);
    const rapidjson::Value* entry = found == entry_by_name.end() ? nullptr : found->second;
    std::string master;
    if (entry && entry->HasMember("ifindex")) {
      facts.links.push_back(ReadRecordedLink(*entry, name, netlink_file, log, &master));
    } else {
      facts.links.push_back(ReadSysfsLink(SysfsDirectory(sysfs, "class/net/" + name), name, log, &master));
    }
    if (!master.empty()) master_by_name[name] = master;
    if (!entry) continue;
    LinkFacts& link = facts.links.back();
    link.kind = StringMember(*entry, "kind");
    link.bpf_programs = ReadBpfProgramNames(*entry);
    auto addresses = entry->FindMember("addresses");
    if (addresses == entry->MemberEnd() || !addresses->value.IsArray()) continue;
    for (const auto& address : addresses->value.GetArray()) {
      if (address.IsString()) link.addresses.emplace_back(address.GetString());
    }
  }
  std::map<std::string, const LinkFacts*> by_name;
  for (const auto& link : facts.links) by_name[link.name] = &link;
  for (auto& link : facts.links) {
    auto master = master_by_name.find(link.name);
    if (master == master_by_name.end()) continue;
    if (auto it = by_name.find(master->second); it != by_name.end()) link.master_index = it->second->ifindex;
  }
  std::sort(facts.links.begin(), facts.links.end(),
            [](const LinkFacts& a, const LinkFacts& b) { return std::pair(a.ifindex, a.name) < std::pair(b.ifindex, b.name); });
  if (document) {
    auto version = document->FindMember("formatVersion");
    if (version != document->MemberEnd() && version->value.IsInt() &&
        version->value.GetInt() > kSnapshotFormatVersion) {
      log.Warning("netlink.json is newer than this build; reading the fields it knows",
                  {{"file", netlink_file.string()}, {"format_version", version->value.GetInt()},
                   {"supported", kSnapshotFormatVersion}});
    }
    // formatVersion 1 files carry only main-table default routes; their
    // entries are recognised by shape, so both versions go through one reader.
    NetlinkJsonReader(netlink_file, facts, log).Read(*document);
  }
  return facts;
}
// ---------------------------------------------------------------------------
// Capture

namespace {

// Files worth recording, per kind of sysfs directory.
constexpr const char* kPciFiles[] = {"uevent", "class", "vendor", "device", "subsystem_vendor", "subsystem_device",
                                     "numa_node", "revision", "local_cpulist", "sriov_totalvfs", "sriov_numvfs",
                                     "current_link_speed", "current_link_width", "max_link_speed",
                                     "max_link_width"};
constexpr const char* kNetdevFiles[] = {"address", "addr_len", "mtu", "operstate", "type", "ifalias", "ifindex",
                                        "iflink", "flags", "dev_port", "phys_port_name", "carrier", "speed"};
constexpr const char* kRdmaFiles[] = {"node_guid", "node_type", "sys_image_guid", "hca_type", "fw_ver"};
constexpr const char* kRdmaPortFiles[] = {"link_layer", "state", "phys_state", "rate", "lid"};
constexpr const char* kDmiFiles[] = {"sys_vendor", "product_name", "product_version", "chassis_asset_tag",
                                     "chassis_vendor", "board_vendor", "board_name", "bios_vendor"};

// Copies pieces of one host root into a snapshot directory. Paths passed
// around are relative to the roots and already free of symlinks, so writes
// never create a real directory where the source had a link. The source is
// read like discovery reads it: nothing outside its root is opened, and a
// link leading out is clamped at the root as discovery sees it.
class SnapshotWriter {
 public:
  SnapshotWriter(const fs::path& source_root, const fs::path& out_root, Logger& log)
      : source_(HostPaths(source_root).root), root_(SysfsDirectory::OpenRoot(source_)), out_(out_root), log_(log) {}

  // Recreates the symlink `relative` as a relative link inside the snapshot
  // and returns where it points (relative to the root), or nullopt.
  std::optional<fs::path> CopyLink(const fs::path& relative) {
    auto resolved = root_.ResolveLink(relative.string());
    if (!resolved) return std::nullopt;
    fs::path target = resolved->lexically_relative(source_);
    // A link to the root itself is no device; ResolveLink() never leaves the
    // root, the ".." test only guards that promise.
    if (target.empty() || target == "." || *target.begin() == "..") {
      ++skipped_;
      return std::nullopt;
    }
    std::error_code error;
    fs::create_directories(out_ / relative.parent_path(), error);
    fs::create_symlink(target.lexically_relative(relative.parent_path()), out_ / relative, error);
    if (error && error != std::errc::file_exists) {
      ++skipped_;
      return std::nullopt;
    }
    // Make the target exist so the link does not dangle, unless the target is
    // itself a link (class/net/eth0 as a "master"): that one is copied as a
    // link on its own, and a directory here would shadow it.
    if (root_.FileType(target.c_str(), /*follow_link=*/false) == S_IFDIR) fs::create_directories(out_ / target, error);
    return target;
  }

  void CopyFile(const fs::path& relative) {
    auto content = root_.ReadFile(relative.c_str(), kMaxSysfsAttributeBytes);
    if (!content) return;  // absent or unreadable (e.g. unset GID entries): not part of the node's facts
    std::error_code error;
    fs::create_directories(out_ / relative.parent_path(), error);
    // A plain write: a snapshot is a fresh directory, not state that must
    // survive a crash, and thousands of fsyncs would make capture slow.
    std::ofstream out(out_ / relative, std::ios::binary | std::ios::trunc);
    out << *content << '\n';
    if (!out) throw std::runtime_error("cannot write snapshot file " + (out_ / relative).string());
    ++copied_;
  }

  template <std::size_t N>
  void CopyFiles(const fs::path& dir, const char* const (&names)[N]) {
    for (const char* name : names) CopyFile(dir / name);
  }

  std::vector<std::string> List(const fs::path& relative) const { return root_.List(relative.string()); }
  std::optional<unsigned> Type(const fs::path& relative) const {
    return root_.FileType(relative.c_str(), /*follow_link=*/false);
  }
  int copied() const { return copied_; }
  int skipped() const { return skipped_; }

 private:
  fs::path source_;
  SysfsDirectory root_;
  fs::path out_;
  Logger& log_;
  int copied_ = 0;
  int skipped_ = 0;
};

// Copies every entry of `list_dir` (a class or bus listing of symlinks) as a
// link, then lets `copy_target` copy what the link points to.
void CopyLinkedEntries(SnapshotWriter& writer, const fs::path& list_dir,
                       const std::function<void(const fs::path& target)>& copy_target) {
  for (const auto& name : writer.List(list_dir)) {
    if (auto target = writer.CopyLink(list_dir / name)) copy_target(*target);
  }
}

void CapturePci(SnapshotWriter& writer) {
  CopyLinkedEntries(writer, "sys/bus/pci/devices", [&](const fs::path& target) {
    writer.CopyFiles(target, kPciFiles);
    writer.CopyLink(target / "driver");
    writer.CopyLink(target / "physfn");
    for (const auto& entry : writer.List(target)) {
      if (entry.rfind("virtfn", 0) == 0) writer.CopyLink(target / entry);
    }
    // Bridges and switch ports above the function: plugins read their ids
    // to classify GPU <-> NIC paths.
    for (fs::path parent = target.parent_path(); !parent.empty() && parent != "sys/devices";
         parent = parent.parent_path()) {
      if (IsPciAddress(parent.filename().string())) writer.CopyFiles(parent, kPciFiles);
    }
  });
}

void CaptureNetdevs(SnapshotWriter& writer) {
  CopyLinkedEntries(writer, "sys/class/net", [&](const fs::path& target) {
    writer.CopyFiles(target, kNetdevFiles);
    writer.CopyLink(target / "device");
    writer.CopyLink(target / "master");
  });
}

void CaptureRdma(SnapshotWriter& writer) {
  CopyLinkedEntries(writer, "sys/class/infiniband", [&](const fs::path& target) {
    writer.CopyFiles(target, kRdmaFiles);
    writer.CopyLink(target / "device");
    for (const auto& port : writer.List(target / "ports")) {
      fs::path port_dir = target / "ports" / port;
      writer.CopyFiles(port_dir, kRdmaPortFiles);
      writer.CopyFile(port_dir / "gid_attrs/ndevs/0");
      writer.CopyFile(port_dir / "gid_attrs/types/0");
    }
  });
  for (const char* char_class : {"sys/class/infiniband_verbs", "sys/class/infiniband_mad"}) {
    for (const auto& name : writer.List(char_class)) {
      fs::path entry = fs::path(char_class) / name;
      if (auto target = writer.CopyLink(entry)) {
        writer.CopyFile(*target / "ibdev");
        writer.CopyFile(*target / "dev");
      } else {
        writer.CopyFile(entry);  // abi_version
      }
    }
  }
  if (auto target = writer.CopyLink("sys/class/misc/rdma_cm")) writer.CopyFile(*target / "dev");
}

void CapturePlatform(SnapshotWriter& writer) {
  if (auto target = writer.CopyLink("sys/class/dmi/id")) writer.CopyFiles(*target, kDmiFiles);
  fs::path nodes = "sys/devices/system/node";
  for (const auto& name : writer.List(nodes)) {
    if (name.rfind("node", 0) != 0) continue;
    writer.CopyFile(nodes / name / "cpulist");
    writer.CopyFile(nodes / name / "distance");  // the list form of numaNode (DRAListTypeAttributes)
  }
}

// At most this many files per glob: a pattern such as "*/*/*" must not
// copy the whole of sysfs.
constexpr int kMaxFilesPerGlob = 20000;

// Copies what parts[i..] names below `dir`: each component is matched
// (fnmatch) against the directory's entries; a link on the way is copied as
// a link and followed, as the kernel's are; the last component's regular
// files are copied.
void CaptureGlob(SnapshotWriter& writer, const std::vector<std::string>& parts, std::size_t i, const fs::path& dir,
                 int& budget) {
  for (const auto& name : writer.List(dir)) {
    if (budget <= 0) return;
    if (fnmatch(parts[i].c_str(), name.c_str(), FNM_PERIOD) != 0) continue;
    fs::path entry = dir / name;
    auto type = writer.Type(entry);
    if (type && *type == S_IFLNK) {
      auto target = writer.CopyLink(entry);
      if (!target) continue;
      entry = *target;
      type = writer.Type(entry);
    }
    if (!type) continue;
    if (i + 1 == parts.size()) {
      if (*type == S_IFREG) {
        writer.CopyFile(entry);
        --budget;
      }
    } else if (*type == S_IFDIR) {
      CaptureGlob(writer, parts, i + 1, entry, budget);
    }
  }
}

void CaptureGlobs(SnapshotWriter& writer, const std::vector<std::string>& globs, Logger& log) {
  for (const auto& glob : globs) {
    if (auto problem = SnapshotGlobProblem(glob); !problem.empty()) {
      log.Warning("snapshot path skipped", {{"path", glob}, {"reason", problem}});
      continue;
    }
    std::vector<std::string> parts;
    for (const auto& part : fs::path(glob)) parts.push_back(part.string());
    int budget = kMaxFilesPerGlob;
    CaptureGlob(writer, parts, 0, "sys", budget);
    if (budget <= 0) log.Warning("snapshot path matched too many files; the rest skipped",
                                 {{"path", glob}, {"maxFiles", kMaxFilesPerGlob}});
  }
}

// A pretty-printed JSON object that starts with the snapshot format version.
class SnapshotJson {
 public:
  SnapshotJson() : json_(buffer_) {
    json_.SetIndent(' ', 2);
    json_.StartObject();
    json_.Key("formatVersion");
    json_.Int(kSnapshotFormatVersion);
  }
  rapidjson::PrettyWriter<rapidjson::StringBuffer>& out() { return json_; }
  std::string Finish() {
    json_.EndObject();
    return std::string(buffer_.GetString()) + "\n";
  }

 private:
  rapidjson::StringBuffer buffer_;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> json_;
};

std::string NetlinkJson(const NetlinkFacts& facts) {
  SnapshotJson document;
  auto& json = document.out();
  json.Key("links");
  json.StartArray();
  std::map<int, std::string> name_by_index;
  for (const auto& link : facts.links) name_by_index[link.ifindex] = link.name;
  for (const auto& link : facts.links) {
    json.StartObject();
    json.Key("name");
    json.String(link.name.c_str());
    json.Key("kind");
    json.String(link.kind.c_str());
    // The dump's own facts, so that discovery on the snapshot reads this one
    // file as a node reads one dump (ReadRecordedLink).
    json.Key("ifindex");
    json.Int(link.ifindex);
    for (const auto& [key, value] :
         {std::pair{"flags", link.flags}, std::pair{"mtu", link.mtu}, std::pair{"arpType", uint32_t{link.arp_type}},
          std::pair{"parentIndex", static_cast<uint32_t>(std::max(link.parent_index, 0))},
          std::pair{"minMtu", link.min_mtu}, std::pair{"maxMtu", link.max_mtu},
          std::pair{"gsoMaxSize", link.gso_max_size}, std::pair{"groMaxSize", link.gro_max_size},
          std::pair{"gsoIpv4MaxSize", link.gso_ipv4_max_size}, std::pair{"groIpv4MaxSize", link.gro_ipv4_max_size}}) {
      json.Key(key);
      json.Uint(value);
    }
    for (const auto& [key, value] : {std::pair{"operstate", &link.operstate}, std::pair{"mac", &link.mac},
                                     std::pair{"alias", &link.alias}}) {
      json.Key(key);
      json.String(value->c_str(), static_cast<rapidjson::SizeType>(value->size()));
    }
    if (auto master = name_by_index.find(link.master_index); link.master_index != 0 && master != name_by_index.end()) {
      json.Key("master");
      json.String(master->second.c_str());
    }
    json.Key("addresses");
    json.StartArray();
    for (const auto& address : link.addresses) json.String(address.c_str());
    json.EndArray();
    if (link.bpf_programs) {
      for (const auto& [key, names] : {std::pair{"tcFilterNames", &link.bpf_programs->tc_filters},
                                       std::pair{"tcxProgramNames", &link.bpf_programs->tcx_programs}}) {
        json.Key(key);
        json.StartArray();
        for (const auto& name : *names) json.String(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
        json.EndArray();
      }
    }
    json.EndObject();
  }
  json.EndArray();
  auto named = [&](std::span<const NamedValue> names, uint32_t value) {
    for (const auto& entry : names) {
      if (entry.value == value) return json.String(entry.name);
    }
    return json.Uint(value);
  };
  auto optional_string = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    json.Key(key);
    json.String(value.c_str());
  };
  auto interface = [&](int ifindex) {
    auto it = name_by_index.find(ifindex);
    if (it != name_by_index.end()) optional_string("interface", it->second);
  };
  json.Key("routes");
  json.StartArray();
  for (const auto& route : facts.routes) {
    json.StartObject();
    json.Key("family");
    json.String(FamilyName(route.family));
    json.Key("destination");
    json.String(route.IsDefault() ? "default" : route.destination.c_str());
    // One plain next hop is written flat, as iproute2 prints it.
    bool flat = route.nexthops.size() == 1 && route.nexthops[0].weight == 1;
    if (flat) {
      optional_string("gateway", route.nexthops[0].gateway);
      interface(route.nexthops[0].ifindex);
    } else if (!route.nexthops.empty()) {
      json.Key("nexthops");
      json.StartArray();
      for (const auto& hop : route.nexthops) {
        json.StartObject();
        interface(hop.ifindex);
        optional_string("gateway", hop.gateway);
        json.Key("weight");
        json.Uint(hop.weight);
        json.EndObject();
      }
      json.EndArray();
    }
    optional_string("source", route.source);
    json.Key("scope");
    named(kScopeNames, route.scope);
    json.Key("table");
    named(kTableNames, route.table);
    json.Key("metric");
    json.Uint(route.metric);
    json.Key("protocol");
    named(kProtocolNames, route.protocol);
    json.Key("type");
    named(kRouteTypeNames, route.type);
    json.EndObject();
  }
  json.EndArray();
  json.Key("rules");
  json.StartArray();
  for (const auto& rule : facts.rules) {
    json.StartObject();
    json.Key("family");
    json.String(FamilyName(rule.family));
    json.Key("priority");
    json.Uint(rule.priority);
    optional_string("source", rule.source);
    optional_string("destination", rule.destination);
    json.Key("table");
    named(kTableNames, rule.table);
    json.Key("action");
    named(kRuleActionNames, rule.action);
    if (rule.other_selectors) {
      json.Key("otherSelectors");
      json.Bool(true);
    }
    json.EndObject();
  }
  json.EndArray();
  json.Key("neighbors");
  json.StartArray();
  for (const auto& neighbor : facts.neighbors) {
    auto it = name_by_index.find(neighbor.ifindex);
    if (it == name_by_index.end()) continue;
    json.StartObject();
    json.Key("interface");
    json.String(it->second.c_str());
    json.Key("destination");
    json.String(neighbor.destination.c_str());
    json.Key("lladdr");
    json.String(neighbor.lladdr.c_str());
    json.EndObject();
  }
  json.EndArray();
  return document.Finish();
}

std::string MarkerJson(const CaptureOptions& options) {
  char captured_at[32];
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(captured_at, sizeof(captured_at), "%Y-%m-%dT%H:%M:%SZ", &utc);
  SnapshotJson document;
  auto& json = document.out();
  json.Key("nodeName");
  json.String(options.node_name.c_str());
  json.Key("source");
  json.String("captured");
  json.Key("capturedAt");
  json.String(captured_at);
  json.Key("description");
  json.String(options.description.c_str());
  return document.Finish();
}

}  // namespace

std::string SnapshotGlobProblem(std::string_view glob) {
  if (glob.empty()) return "empty";
  if (glob.size() > 255) return "longer than 255 characters";
  if (glob.front() == '/') return "absolute; give it relative to the sysfs root (class/net/*/speed)";
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = glob.find('/', start);
    const std::string_view part = glob.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (part.empty()) return "an empty path component";
    if (part == "." || part == "..") return "a \".\" or \"..\" component";
    if (end == std::string_view::npos) return "";
    start = end + 1;
  }
}

void CaptureSnapshot(const fs::path& out_dir, const CaptureOptions& options, Logger& log) {
  RequireContainedReads(HostPaths(options.host_root));
  std::error_code error;
  if (fs::exists(out_dir, error) && !fs::is_empty(out_dir, error)) {
    throw std::runtime_error("snapshot directory is not empty: " + out_dir.string() +
                             " (choose a new directory)");
  }
  fs::create_directories(out_dir, error);
  if (error) throw std::runtime_error("cannot create snapshot directory " + out_dir.string() + ": " + error.message());

  SnapshotWriter writer(options.host_root, out_dir, log);
  CapturePci(writer);
  CaptureNetdevs(writer);
  CaptureRdma(writer);
  CapturePlatform(writer);
  CaptureGlobs(writer, options.extra_sysfs_globs, log);
  fs::create_directories(out_dir / kSnapshotMetadataDir, error);

  DiscoveryOptions discovery;
  discovery.host_root = options.host_root;
  WriteFileAtomic(out_dir / kSnapshotNetlinkFile, NetlinkJson(ReadNetlinkFacts(discovery, log)));
  WriteFileAtomic(out_dir / kSnapshotMarkerFile, MarkerJson(options));
  log.Info("node snapshot captured", {{"dir", out_dir.string()},
                                      {"node", options.node_name},
                                      {"files", writer.copied()},
                                      {"skipped_links", writer.skipped()}});
}

}  // namespace dranet::inventory
