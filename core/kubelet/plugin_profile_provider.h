#pragma once
// core/kubelet/plugin_profile_provider.h — --profile-provider=cloud: the
// plugins with DRANET_CAP_PROFILES (plugin ABI 1.2) resolve profiles.
//
// GetProfileConfig asks those plugins in load order; the first that knows
// the profile answers, and a profile no plugin knows fails the claim with
// the list of plugins asked. ReleaseProfileConfig goes to every profile
// plugin: the plugin that answered is not recorded, and each one answers
// success for what it never gave.
#include <memory>
#include <string>

#include "kubelet/profile_provider.h"

namespace dranet::plugins {
class PluginHost;
}

namespace dranet::kubelet {

// `host` must outlive the provider.
std::shared_ptr<ProfileProvider> MakePluginProfileProvider(plugins::PluginHost& host);

}  // namespace dranet::kubelet
