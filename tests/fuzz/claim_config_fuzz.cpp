// claim_config_fuzz: DRANET's opaque claim configuration
// (core/kubelet/network_config.h) on arbitrary bytes.
//
// byte 0 = 0: the rest is one config for ParseNetworkConfig.
// otherwise: the rest is split (FuzzedDataProvider) into up to 3 configs
//            for MergeNetworkConfigs.
// Checked: only ConfigError is thrown; a config that parses also merges on
// its own and merged with itself, to a config that sets the same fields.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "kubelet/network_config.h"

namespace {

using namespace dranet;

void ParseOne(const std::string& json) {
  kubelet::NetworkConfig config;
  try {
    config = kubelet::ParseNetworkConfig(json);
  } catch (const kubelet::ConfigError& e) {
    fuzz::Check(e.what()[0] != '\0', "ConfigError without a message");
    return;
  }
  (void)kubelet::FieldsNotForRdmaOnly(config);
  kubelet::NetworkConfig alone, twice;
  try {
    alone = kubelet::MergeNetworkConfigs({json}, {"config 0"});
    twice = kubelet::MergeNetworkConfigs({json, json}, {"config 0", "config 1"});
  } catch (const kubelet::ConfigError& e) {
    fuzz::Fail(std::string("a config that parses does not merge: ") + e.what());
  }
  fuzz::Check(alone.set_fields == config.set_fields, "merging one config changes its fields");
  fuzz::Check(twice.set_fields == config.set_fields, "merging a config with itself changes its fields");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] == 0) {
    ParseOne(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
    return 0;
  }
  FuzzedDataProvider fdp(data + 1, size - 1);
  std::vector<std::string> configs, labels;
  for (std::size_t n = 1 + data[0] % 3; n > 0 && fdp.remaining_bytes() > 0; --n) {
    configs.push_back(n == 1 ? fdp.ConsumeRemainingBytesAsString() : fdp.ConsumeRandomLengthString(4096));
    labels.push_back("config " + std::to_string(labels.size()));
  }
  try {
    kubelet::NetworkConfig merged = kubelet::MergeNetworkConfigs(configs, labels);
    (void)kubelet::FieldsNotForRdmaOnly(merged);
  } catch (const kubelet::ConfigError&) {
  }
  return 0;
}
