#include "inject/ethtool_feature_names.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <vector>

#include "inject/pod_netns_applier.h"

namespace dranet::inject {
namespace {

constexpr std::array<LegacyEthtoolFeature, 12> kLegacyFeatures{{
    {"rx", "rx-checksumming", "rx-checksum"},
    {"tx", "tx-checksumming", "tx-checksum-*"},
    {"sg", "scatter-gather", "tx-scatter-gather*"},
    {"tso", "tcp-segmentation-offload", "tx-tcp*-segmentation"},
    {"ufo", "udp-fragmentation-offload", "tx-udp-fragmentation"},
    {"gso", "generic-segmentation-offload", "tx-generic-segmentation"},
    {"gro", "generic-receive-offload", "rx-gro"},
    {"lro", "large-receive-offload", "rx-lro"},
    {"rxvlan", "rx-vlan-offload", "rx-vlan-hw-parse"},
    {"txvlan", "tx-vlan-offload", "tx-vlan-hw-insert"},
    {"ntuple", "ntuple-filters", "rx-ntuple-filter"},
    {"rxhash", "receive-hashing", "rx-hashing"},
}};

const LegacyEthtoolFeature* FindLegacy(const std::string& name) {
  for (const auto& row : kLegacyFeatures) {
    if (row.short_name == name || row.long_name == name) return &row;
  }
  return nullptr;
}

// The changeable kernel features `name` stands for (none when it stands for
// nothing the netdev can change).
std::vector<std::string> KernelFeaturesOf(const std::string& name, const std::set<std::string>& changeable) {
  if (changeable.contains(name)) return {name};
  std::vector<std::string> matches;
  if (const auto* legacy = FindLegacy(name)) {
    const std::string pattern(legacy->kernel_pattern);
    for (const auto& feature : changeable) {
      if (::fnmatch(pattern.c_str(), feature.c_str(), 0) == 0) matches.push_back(feature);
    }
  }
  return matches;
}

template <typename Names>
std::string QuotedList(const Names& names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ", ";
    out += '"' + std::string(name) + '"';
  }
  return out;
}

std::string ListOrNone(const std::vector<std::string>& names) { return names.empty() ? "none" : QuotedList(names); }

}  // namespace

std::span<const LegacyEthtoolFeature> LegacyEthtoolFeatures() { return kLegacyFeatures; }

std::map<std::string, bool> ResolveFeatureNames(const std::map<std::string, bool>& requested,
                                                const std::set<std::string>& changeable, const std::string& if_name) {
  std::map<std::string, bool> resolved;
  std::map<std::string, std::string> asked_by;  // kernel feature -> the requested name that set it
  std::vector<std::string> unknown;
  for (const auto& [name, on] : requested) {
    const auto features = KernelFeaturesOf(name, changeable);
    if (features.empty()) unknown.push_back(name);
    for (const auto& feature : features) {
      const auto [it, inserted] = resolved.emplace(feature, on);
      if (!inserted && it->second != on) {
        throw InjectError("ethtool.features on " + if_name + ": \"" + asked_by[feature] + "\" and \"" + name +
                          "\" ask for opposite values of " + feature);
      }
      asked_by.emplace(feature, name);
    }
  }
  if (!unknown.empty()) {
    throw InjectError("ethtool.features on " + if_name + ": " + QuotedList(unknown) +
                      (unknown.size() == 1 ? " is not a feature " : " are not features ") + if_name +
                      " can change (it can change: " +
                      ListOrNone(std::vector<std::string>(changeable.begin(), changeable.end())) + ")");
  }
  return resolved;
}

std::map<std::string, bool> WithoutFixedAtTheirValue(const std::map<std::string, bool>& requested,
                                                     const std::set<std::string>& known,
                                                     const std::set<std::string>& changeable,
                                                     const std::set<std::string>& active) {
  std::set<std::string> fixed;
  std::set_difference(known.begin(), known.end(), changeable.begin(), changeable.end(),
                      std::inserter(fixed, fixed.end()));
  std::map<std::string, bool> out;
  for (const auto& [name, on] : requested) {
    if (!KernelFeaturesOf(name, changeable).empty()) {
      out.emplace(name, on);
      continue;
    }
    const auto features = KernelFeaturesOf(name, fixed);
    const bool already = !features.empty() && std::all_of(features.begin(), features.end(), [&](const std::string& f) {
      return active.contains(f) == on;
    });
    if (!already) out.emplace(name, on);
  }
  return out;
}

void CheckPrivateFlagNames(const std::map<std::string, bool>& requested, const std::map<std::string, bool>& available,
                           const std::string& if_name) {
  std::vector<std::string> unknown;
  for (const auto& [name, on] : requested) {
    if (!available.contains(name)) unknown.push_back(name);
  }
  if (unknown.empty()) return;
  std::vector<std::string> flags;
  for (const auto& [name, on] : available) flags.push_back(name);
  throw InjectError("ethtool.privateFlags on " + if_name + ": " + QuotedList(unknown) +
                    (unknown.size() == 1 ? " is not a private flag of " : " are not private flags of ") + if_name +
                    " (it has: " + ListOrNone(flags) + ")");
}

}  // namespace dranet::inject
