// --profile-provider=cloud: profiles resolved by plugins (ABI 1.2), through
// the real plugin host and real plugin files (the fake plugin's profiles).
#include "kubelet/plugin_profile_provider.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "plugins/plugin_host.h"

namespace dranet::kubelet {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class PluginProfileProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dranet-plugin-profiles-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<plugins::PluginHost> Host(const std::vector<std::string>& plugins) {
    for (const auto& name : plugins)
      fs::copy_file(fs::path(DRANET_FAKE_PLUGIN_DIR) / ("dranet-plugin-" + name + ".so"),
                    dir_ / ("dranet-plugin-" + name + ".so"));
    plugins::PluginHostOptions options;
    options.plugin_dirs = {dir_};
    options.host_root = dir_;
    options.require_root_owned = false;
    options.config["fake"]["profile-config"] = R"({"interface":{"mtu":4000}})";
    options.http = [](const plugins::HttpRequest& request) -> plugins::HttpResult {
      throw std::runtime_error("no network in tests: " + request.url);
    };
    return std::make_unique<plugins::PluginHost>(options, logger_);
  }

  static inventory::Device Nic() {
    inventory::Device d;
    d.name = "pci-0000-8a-00-0";
    d.pci_address = "0000:8a:00.0";
    d.if_name = "eth3";
    return d;
  }

  static std::string ErrorOf(ProfileProvider& provider, const ProfileDevice& id, const std::string& config) {
    try {
      provider.GetProfileConfig(id, "uid-1", config);
    } catch (const ProfileError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
  std::ostringstream log_;
  Logger logger_{log_};
};

TEST_F(PluginProfileProviderTest, PluginAnswersTheProfileWithTheWholeDevice) {
  auto host = Host({"fake"});
  auto provider = MakePluginProfileProvider(*host);
  const auto nic = Nic();
  const ProfileDevice id{nic.name, "0a:1b:2c:3d:4e:5f", nic.pci_address, &nic};
  EXPECT_EQ(provider->GetProfileConfig(id, "uid-1", R"({"profile":"fake-profile","interface":{"mtu":1500}})"),
            R"({"interface":{"mtu":4000}})");
  EXPECT_EQ(provider->GetProfileConfig(id, "uid-1", R"({"profile":"fake-device"})"),
            R"({"interface":{"name":"pci-0000-8a-00-0"},"x-pci":"0000:8a:00.0","x-if":"eth3"})");
  EXPECT_EQ(provider->Describe(), "the cloud plugins (fake)");
}

// At release the device may sit in a pod: the plugin gets the identifiers
// prepare recorded, including the MAC as dra.net/mac.
TEST_F(PluginProfileProviderTest, ReleaseReachesThePluginWithTheRecordedIdentifiers) {
  auto host = Host({"fake"});
  auto provider = MakePluginProfileProvider(*host);
  provider->ReleaseProfileConfig({"pci-0000-8a-00-0", "0a:1b:2c:3d:4e:5f", "0000:8a:00.0"}, "uid-9",
                                 R"({"profile":"fake-profile"})");
  EXPECT_THAT(log_.str(), HasSubstr("fake released profile fake-profile of pci-0000-8a-00-0 (pci 0000:8a:00.0) for "
                                    "claim uid-9"));
  EXPECT_THAT(
      [&] {
        try {
          provider->ReleaseProfileConfig({"pci-0000-8a-00-0", "", "0000:8a:00.0"}, "uid-9", R"({"profile":"fake-fail"})");
        } catch (const ProfileError& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("plugin fake: release_profile failed: DRANET_ERR_IO (-5), sys_errno 111 (Connection refused): simulated IPAM outage releasing pci-0000-8a-00-0"));
}

TEST_F(PluginProfileProviderTest, UnknownProfileFailsNamingThePluginsAsked) {
  auto host = Host({"fake", "fake-routes"});
  auto provider = MakePluginProfileProvider(*host);
  const auto nic = Nic();
  EXPECT_EQ(ErrorOf(*provider, {nic.name, "", nic.pci_address, &nic}, R"({"profile":"gold"})"),
            "no plugin knows this profile for device pci-0000-8a-00-0 (asked: fake-routes, fake)");  // load order: file names
  EXPECT_THAT(ErrorOf(*provider, {nic.name, "", nic.pci_address, &nic}, R"({"profile":"fake-fail"})"),
              HasSubstr("plugin fake-routes: get_profile failed: DRANET_ERR_IO (-5), sys_errno 111 (Connection refused): simulated IPAM outage"));
}

TEST_F(PluginProfileProviderTest, NoProfilePluginSaysHowToGetOne) {
  auto host = Host({"fake-abi10"});
  auto provider = MakePluginProfileProvider(*host);
  const auto nic = Nic();
  EXPECT_THAT(ErrorOf(*provider, {nic.name, "", "", &nic}, R"({"profile":"gold"})"),
              HasSubstr("no loaded plugin provides profiles (--profile-provider=cloud)"));
}

}  // namespace
}  // namespace dranet::kubelet
