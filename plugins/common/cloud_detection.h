// plugins/common/cloud_detection.h — how a cloud plugin decides, at init
// and without the network, whether the node is on its cloud.
//
// 1. Configuration "detect=skip" (dranetd sets it for the plugin that
//    --cloud-provider-hint names): no detection, the plugin runs.
// 2. DMI (/sys/class/dmi/id, the markers cloud-init uses too): the plugin's
//    own test says yes, or the plugin is not applicable.
// 3. No DMI at all (a kernel or platform without SMBIOS): undecided. The
//    plugin loads and its first metadata read, with the short
//    probe-timeout-ms deadline, is the one probe: if it fails the plugin
//    stays off for the process lifetime (no retries), if it answers the
//    cloud is confirmed.
// So a bare-metal node with DMI costs each cloud plugin a few file reads
// and no request; only a node without DMI costs one probe per cloud
// plugin loaded, once.
//
// CloudMetadata<T> puts that gate together with the metadata client
// (metadata_client.h): endpoint and deadlines from configuration, the value
// read once and kept, a failure logged once per backoff.
//
// Header-only, C++17; depends on the SDK's C++ helper and RapidJSON.
#ifndef DRANET_PLUGINS_COMMON_CLOUD_DETECTION_H
#define DRANET_PLUGINS_COMMON_CLOUD_DETECTION_H

#include <dranet/plugin.hpp>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "metadata_client.h"

namespace dranet::plugins::common {

// The configuration keys every cloud plugin declares for detection.
#define DRANET_CLOUD_DETECTION_KEYS                                                                     \
  {sizeof(dranet_config_key_t), "detect", "dmi",                                                        \
   "dmi: decide from DMI (one metadata probe only when the node has no DMI); skip: run without "        \
   "detecting (set by dranetd --cloud-provider-hint)"},                                                 \
  {                                                                                                     \
    sizeof(dranet_config_key_t), "probe-timeout-ms", "300",                                             \
        "deadline of the one metadata probe on a node without DMI, in ms"                               \
  }

class CloudGate {
 public:
  // `cloud` names the cloud in log lines ("AWS"); `dmi_says_yes` is the
  // plugin's own DMI test, `dmi_summary` what it read. Throws
  // sdk::NotApplicable when DMI is readable and says another machine, and
  // sdk::Error for a bad "detect" value.
  CloudGate(const sdk::Host& host, std::string cloud, bool dmi_says_yes, const std::string& dmi_summary)
      : host_(host), cloud_(std::move(cloud)) {
    const std::string detect = host.Config("detect", "dmi");
    if (detect == "skip") {
      host.Info("cloud detection skipped (detect=skip, --cloud-provider-hint): running as " + cloud_);
      return;
    }
    if (detect != "dmi")
      throw sdk::Error(DRANET_ERR_INVALID_ARG, "configuration detect=\"" + detect + "\": expected dmi or skip");
    if (dmi_says_yes) return;
    struct stat st {};
    const std::string dmi_dir = host.sysfs_root() + "/class/dmi/id";
    if (::stat(dmi_dir.c_str(), &st) == 0)
      throw sdk::NotApplicable("not " + cloud_ + " (DMI " + dmi_summary + ")");
    probing_ = true;
    host.Info("no DMI (" + dmi_dir + " is missing): the first " + cloud_ +
              " metadata read decides, with the probe deadline, once");
  }

  // True once that read failed: the plugin does nothing more.
  bool off() const { return off_; }

  // The deadline for the next metadata request: the probe's while probing.
  uint32_t Deadline(uint32_t normal_ms, uint32_t probe_ms) const {
    return probing_ && probe_ms < normal_ms ? probe_ms : normal_ms;
  }

  // After a metadata read: a failure while probing turns the plugin off
  // (returns true: the caller logs nothing more); a success confirms.
  bool Settle(bool ok, const std::string& why = "") {
    if (!probing_) return false;
    probing_ = false;
    if (ok) {
      host_.Info("no DMI, but the " + cloud_ + " metadata service answered: running as " + cloud_);
      return false;
    }
    off_ = true;
    host_.Info("not " + cloud_ + ": no DMI and the metadata probe failed (" + why +
               "); this plugin stays off until dranetd restarts");
    return true;
  }

 private:
  sdk::Host host_;
  std::string cloud_;
  bool probing_ = false;
  bool off_ = false;
};

// A cloud plugin's metadata: CloudGate + LazyMetadata<T> + the endpoint and
// deadlines its configuration names.
template <typename T>
class CloudMetadata {
 public:
  struct Names {
    const char* cloud;             // in detection lines: "AWS", "an Azure VM"
    const char* service;           // in failure lines: "AWS IMDS", "GCE metadata"
    const char* endpoint_key;      // "imds-endpoint"
    const char* endpoint_default;  // "http://169.254.169.254"
    const char* timeout_key;       // "imds-timeout-ms"
  };

  // Reads the configuration (retry-backoff-ms and probe-timeout-ms too) and
  // runs the CloudGate: throws as CloudGate does, or sdk::Error for a bad value.
  CloudMetadata(const sdk::Host& host, const Names& names, bool dmi_says_yes, const std::string& dmi_summary)
      : host_(host),
        service_(names.service),
        endpoint_(ConfigEndpoint(host, names.endpoint_key, names.endpoint_default)),
        timeout_ms_(NonZero(ConfigMs(host, names.timeout_key, 1000), 1000)),
        probe_ms_(NonZero(ConfigMs(host, "probe-timeout-ms", 300), 300)),
        gate_(host, names.cloud, dmi_says_yes, dmi_summary),
        value_(std::chrono::milliseconds(ConfigMs(host, "retry-backoff-ms", 5000)), std::chrono::minutes(5)) {}

  const std::string& endpoint() const { return endpoint_; }
  // The deadline of the next request: the probe's while the gate probes.
  uint32_t deadline() const { return gate_.Deadline(timeout_ms_, probe_ms_); }
  // Off for good: no DMI and the probe failed.
  bool off() const { return gate_.off(); }

  // The kept value, or fetch()'s (which throws on failure), or nullptr.
  // A failure is one warning "<service> unavailable, <consequence>: <why>
  // (retry in N ms)" (*reported set), or, while probing, turns the plugin
  // off. `on_success` runs once, after the gate is settled.
  template <typename Fetch, typename OnSuccess>
  const T* Get(Fetch&& fetch, const std::string& consequence, OnSuccess&& on_success, bool* reported = nullptr) {
    if (gate_.off()) return nullptr;
    return value_.Get(
        fetch,
        [&](const std::string& why, std::chrono::milliseconds retry_in) {
          if (gate_.Settle(false, why)) return;
          host_.Warn(service_ + " unavailable, " + consequence + ": " + why + " (retry in " +
                     std::to_string(retry_in.count()) + " ms)");
          if (reported != nullptr) *reported = true;
        },
        [&](const T& value) {
          gate_.Settle(true);
          on_success(value);
        });
  }

 private:
  static uint32_t NonZero(uint32_t value, uint32_t fallback) { return value == 0 ? fallback : value; }

  sdk::Host host_;
  std::string service_, endpoint_;
  uint32_t timeout_ms_, probe_ms_;
  CloudGate gate_;
  LazyMetadata<T> value_;
};

}  // namespace dranet::plugins::common

#endif  // DRANET_PLUGINS_COMMON_CLOUD_DETECTION_H
