#pragma once
// core/inject/ethtool_feature_names.h — turning the names a claim's
// ethtool.features and ethtool.privateFlags use into names the netdev has.
//
// ethtool.features takes what `ethtool -K` takes: kernel feature names
// ("tx-tcp-segmentation") and ethtool's legacy names, short ("tso") or long
// ("tcp-segmentation-offload"). A legacy name stands for every kernel feature
// its pattern matches that the netdev can change ("tso" is
// tx-tcp-segmentation, tx-tcp6-segmentation, tx-tcp-ecn-segmentation, ...),
// as in ethtool's own table (common.c, off_flag_def) and DRANET.
// Prepare resolves the names against the netdev on the host, so that a name
// the netdev cannot change fails the claim while kubelet can still report it,
// and the pod hook only sends kernel names.
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>

namespace dranet::inject {

// One row of ethtool's legacy feature table.
struct LegacyEthtoolFeature {
  std::string_view short_name;      // "tso"
  std::string_view long_name;       // "tcp-segmentation-offload"
  std::string_view kernel_pattern;  // fnmatch(3) pattern: "tx-tcp*-segmentation"
};

// The legacy table, in ethtool's order.
std::span<const LegacyEthtoolFeature> LegacyEthtoolFeatures();

// The kernel features that `requested` (a claim's ethtool.features) sets on
// netdev `if_name`, whose changeable features are `changeable`
// (ETHTOOL_A_FEATURES_HW): a changeable kernel name stays as it is, a legacy
// name becomes every changeable feature it matches. Throws InjectError naming
// the interface and every name that matches no changeable feature (with the
// list of those it has), or two names that ask one feature for opposite
// values ("tso": false beside "tx-tcp-segmentation": true).
std::map<std::string, bool> ResolveFeatureNames(const std::map<std::string, bool>& requested,
                                                const std::set<std::string>& changeable, const std::string& if_name);

// `requested` without the names that stand only for features netdev
// `if_name` cannot change (ethtool's "[fixed]": in `known`, not in
// `changeable`) and that are all `active` as requested already: `ethtool -K`
// accepts those, and DRANET's manifests ask for them ("lro": false on a
// veth). A fixed feature asked for the other value stays, for
// ResolveFeatureNames to refuse.
std::map<std::string, bool> WithoutFixedAtTheirValue(const std::map<std::string, bool>& requested,
                                                     const std::set<std::string>& known,
                                                     const std::set<std::string>& changeable,
                                                     const std::set<std::string>& active);

// Checks that every name in `requested` (a claim's ethtool.privateFlags) is a
// private flag of netdev `if_name`, whose flags are `available`. Throws
// InjectError naming the interface, the unknown names and the flags it has.
void CheckPrivateFlagNames(const std::map<std::string, bool>& requested, const std::map<std::string, bool>& available,
                           const std::string& if_name);

}  // namespace dranet::inject
