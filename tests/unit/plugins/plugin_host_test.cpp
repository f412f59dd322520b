// The plugin host against real plugin files: one well-behaved fake and one
// fake per way a plugin can be broken. Every broken plugin is skipped and
// reported with its reason; the host keeps working.
#include "plugins/plugin_host.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <gtest/gtest.h>
#include <sstream>
#include <thread>

#include "plugins/device_abi.h"

namespace fs = std::filesystem;
using dranet::plugins::PluginHost;
using dranet::plugins::PluginHostOptions;
using dranet::plugins::PluginOutcome;
using dranet::plugins::PluginReport;

namespace {

class PluginHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dranet-plugin-host-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Install(const std::string& variant, const fs::path& into = {}) {
    fs::path target = into.empty() ? dir_ : into;
    std::string file = "dranet-plugin-" + variant + ".so";
    fs::copy_file(fs::path(DRANET_FAKE_PLUGIN_DIR) / file, target / file, fs::copy_options::overwrite_existing);
  }

  PluginHostOptions Options() {
    PluginHostOptions o;
    o.plugin_dirs = {dir_};
    o.host_root = dir_;  // no sysfs: plugins see an empty node
    o.require_root_owned = geteuid() == 0;
    o.init_deadline = std::chrono::milliseconds(2000);
    o.call_deadline = std::chrono::milliseconds(2000);
    o.http = [](const dranet::plugins::HttpRequest& request) -> dranet::plugins::HttpResult {
      throw std::runtime_error("no network in tests: " + request.url);
    };
    return o;
  }

  static const PluginReport& Find(const PluginHost& host, const std::string& name) {
    for (const auto& r : host.reports())
      if (r.name == name) return r;
    static PluginReport none;
    ADD_FAILURE() << "no report for " << name;
    return none;
  }

  static dranet::inventory::Device Nic(const std::string& name, const std::string& ifname = "") {
    dranet::inventory::Device d;
    d.name = name;
    d.if_name = ifname;
    d.attributes["dra.net/ifName"] = ifname;
    return d;
  }

  fs::path dir_;
  std::ostringstream log_;
  dranet::Logger logger_{log_};
};

TEST_F(PluginHostTest, WellBehavedPluginUsesEveryCapability) {
  Install("fake");
  auto opts = Options();
  opts.config["fake"]["greeting"] = "bonjour";
  PluginHost host(opts, logger_);
  ASSERT_EQ(host.loaded_count(), 1u);
  const auto& r = Find(host, "fake");
  EXPECT_EQ(r.outcome, PluginOutcome::kLoaded);
  EXPECT_EQ(r.version, "0.1.0");
  EXPECT_EQ(r.capabilities, static_cast<uint32_t>(DRANET_CAP_ALL | DRANET_CAP_PROFILES));

  std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1"), Nic("pci-0000-01-00-0")};
  host.Annotate(devices);
  EXPECT_EQ(std::get<std::string>(devices[0].attributes.at("fake.dra.net/hello")), "bonjour");
  EXPECT_EQ(std::get<bool>(devices[0].attributes.at("fake.dra.net/linkFile")), false);
  EXPECT_EQ(std::get<std::string>(devices[1].attributes.at("fake.dra.net/hello")), "bonjour");
  EXPECT_EQ(devices[1].attributes.count("fake.dra.net/linkFile"), 0u);

  auto discovered = host.Discover();
  ASSERT_EQ(discovered.size(), 1u);
  EXPECT_EQ(discovered[0].name, "fake-0");
  EXPECT_EQ(std::get<bool>(discovered[0].attributes.at("fake.dra.net/discovered")), true);

  auto edits = host.Inject({"ns", "claim", "uid-1"}, devices);
  EXPECT_TRUE(edits.errors.empty());
  EXPECT_EQ(edits.env.at("FAKE_DEVICES"), "eth1,pci-0000-01-00-0");
  ASSERT_EQ(edits.dev_nodes.size(), 1u);
  EXPECT_EQ(edits.dev_nodes[0].path, "/dev/fake0");
  EXPECT_EQ(edits.dev_nodes[0].plugin, "fake");

  EXPECT_NE(log_.str().find("\"plugin loaded\""), std::string::npos);
  EXPECT_NE(log_.str().find("fake plugin initialised with greeting bonjour"), std::string::npos)
      << "plugin log lines go through the host logger";
}

TEST_F(PluginHostTest, PluginSeesTheSysfsRoot) {
  Install("fake");
  fs::create_directories(dir_ / "sys/class/net/eth1");
  PluginHost host(Options(), logger_);
  std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1")};
  host.Annotate(devices);
  EXPECT_EQ(std::get<bool>(devices[0].attributes.at("fake.dra.net/linkFile")), true);
}

// The ABI has no list kind: a device's list attribute (numaNode under DRAListTypeAttributes)
// is left out of what plugins see, nothing breaks, and the device keeps it.
TEST_F(PluginHostTest, ListAttributesAreNotShownToPluginsAndKept) {
  auto nic = Nic("eth1", "eth1");
  nic.numa_node = 1;
  nic.attributes["resource.kubernetes.io/numaNode"] = dranet::inventory::IntList{1, 0, 2};
  dranet::plugins::DeviceAbi abi(nic);
  ASSERT_EQ(abi.get()->n_attrs, 1u);
  EXPECT_STREQ(abi.get()->attrs[0].name, "dra.net/ifName");
  EXPECT_EQ(abi.get()->numa_node, 1);

  Install("fake");
  PluginHost host(Options(), logger_);
  std::vector<dranet::inventory::Device> devices{nic};
  host.Annotate(devices);
  EXPECT_EQ(devices[0].attributes.count("fake.dra.net/hello"), 1u) << log_.str();
  EXPECT_EQ(devices[0].attributes.at("resource.kubernetes.io/numaNode"),
            dranet::inventory::AttributeValue(dranet::inventory::IntList{1, 0, 2}));
}

TEST_F(PluginHostTest, BrokenPluginsAreReportedAndTheGoodOneStillWorks) {
  for (const char* v : {"fake", "fake-error", "fake-badabi", "fake-throws", "fake-garbage",
                        "fake-notapplicable", "noentry"})
    Install(v);
  std::ofstream(dir_ / "dranet-plugin-corrupt.so") << "this is not an ELF file";
  std::ofstream(dir_ / "README.txt") << "not a plugin";
  PluginHost host(Options(), logger_);
  EXPECT_EQ(host.loaded_count(), 1u);
  EXPECT_EQ(Find(host, "fake").outcome, PluginOutcome::kLoaded);

  const auto& error = Find(host, "fake-error");
  EXPECT_EQ(error.outcome, PluginOutcome::kFailed);
  EXPECT_NE(error.reason.find("init failed: DRANET_ERR_IO (-5), sys_errno 5 (Input/output error): simulated init "
                              "failure reading /fake/file"),
            std::string::npos)
      << error.reason;

  const auto& badabi = Find(host, "fake-badabi");
  EXPECT_EQ(badabi.outcome, PluginOutcome::kRejected);
  EXPECT_NE(badabi.reason.find("plugin ABI 2.0 does not match host ABI 1.4"), std::string::npos) << badabi.reason;

  const auto& throws = Find(host, "fake-throws");
  EXPECT_EQ(throws.outcome, PluginOutcome::kFailed);
  EXPECT_NE(throws.reason.find("init exploded"), std::string::npos) << throws.reason;

  const auto& garbage = Find(host, "fake-garbage");
  EXPECT_EQ(garbage.outcome, PluginOutcome::kRejected);
  EXPECT_NE(garbage.reason.find("struct_size"), std::string::npos) << garbage.reason;

  const auto& na = Find(host, "fake-notapplicable");
  EXPECT_EQ(na.outcome, PluginOutcome::kNotApplicable);
  EXPECT_EQ(na.reason, "not on a fake cloud");

  const auto& noentry = Find(host, "noentry");
  EXPECT_EQ(noentry.outcome, PluginOutcome::kRejected);
  EXPECT_NE(noentry.reason.find("missing entry symbol dranet_plugin_entry_v1"), std::string::npos);

  const auto& corrupt = Find(host, "corrupt");
  EXPECT_EQ(corrupt.outcome, PluginOutcome::kRejected);
  EXPECT_NE(corrupt.reason.find("cannot load"), std::string::npos) << corrupt.reason;

  EXPECT_EQ(host.reports().size(), 8u) << "one report per .so file, none for README.txt";
  std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1")};
  host.Annotate(devices);
  EXPECT_EQ(devices[0].attributes.count("fake.dra.net/hello"), 1u);
}

TEST_F(PluginHostTest, ThrowingAnnotateIsContained) {
  Install("fake-throws");
  Install("fake");
  auto opts = Options();
  opts.config["fake-throws"]["throw-in"] = "annotate";
  PluginHost host(opts, logger_);
  ASSERT_EQ(host.loaded_count(), 2u);
  std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1")};
  host.Annotate(devices);
  EXPECT_EQ(devices[0].attributes.count("fake.dra.net/hello"), 1u) << "the other plugin still ran";
  EXPECT_NE(log_.str().find("plugin threw: annotate exploded"), std::string::npos) << log_.str();
}

TEST_F(PluginHostTest, SlowInitIsAbandonedAtTheDeadline) {
  Install("fake-slow");
  Install("fake");
  auto opts = Options();
  opts.init_deadline = std::chrono::milliseconds(100);
  opts.config["fake-slow"]["init-delay-ms"] = "3000";
  PluginHost host(opts, logger_);
  const auto& slow = Find(host, "fake-slow");
  EXPECT_EQ(slow.outcome, PluginOutcome::kFailed);
  EXPECT_NE(slow.reason.find("init did not return within 100 ms"), std::string::npos) << slow.reason;
  EXPECT_EQ(Find(host, "fake").outcome, PluginOutcome::kLoaded);
}

// Loading runs plugin code (static constructors inside dlopen, then the
// entry): it is bounded like init, and no further file is loaded while the
// dynamic loader may still be held.
TEST_F(PluginHostTest, SlowLoadingIsAbandonedAtTheDeadline) {
  Install("fake-slowload");  // its constructor blocks 2 s; it sorts before fake
  Install("fake");
  auto opts = Options();
  opts.init_deadline = std::chrono::milliseconds(100);
  PluginHost host(opts, logger_);
  const auto& slow = Find(host, "fake-slowload");
  EXPECT_EQ(slow.outcome, PluginOutcome::kFailed);
  EXPECT_EQ(slow.reason,
            "loading (the library's static constructors and its entry) did not finish within 100 ms; abandoned");
  const auto& fake = Find(host, "fake");
  EXPECT_EQ(fake.outcome, PluginOutcome::kFailed);
  EXPECT_NE(fake.reason.find("not loaded: the loading of " + (dir_ / "dranet-plugin-fake-slowload.so").string() +
                             " never finished"),
            std::string::npos)
      << fake.reason;
}

// The annotate deadline is per device: a plugin taking 30 ms a device
// annotates 12 devices (360 ms) under a 150 ms deadline.
TEST_F(PluginHostTest, AnnotateDeadlineIsPerDevice) {
  Install("fake-slow");
  auto opts = Options();
  opts.call_deadline = std::chrono::milliseconds(150);
  opts.config["fake-slow"]["init-delay-ms"] = "0";
  opts.config["fake-slow"]["annotate-delay-ms"] = "30";
  PluginHost host(opts, logger_);
  ASSERT_EQ(host.loaded_count(), 1u) << log_.str();
  std::vector<dranet::inventory::Device> devices;
  for (int i = 0; i < 12; ++i) devices.push_back(Nic("nic" + std::to_string(i)));
  host.Annotate(devices);
  for (const auto& d : devices) EXPECT_EQ(d.attributes.count("fake-slow.dra.net/hello"), 1u) << d.name;
  EXPECT_EQ(Find(host, "fake-slow").outcome, PluginOutcome::kLoaded) << Find(host, "fake-slow").reason;
}

// A plugin whose call misses its deadline is disabled (and claims it
// should inject for fail), and used again once the late call has come back
// and its back-off has passed.
TEST_F(PluginHostTest, ADisabledPluginIsRetriedAfterItsBackoff) {
  Install("fake-slow");
  const fs::path gate = dir_ / "annotate-gate";
  auto opts = Options();
  opts.call_deadline = std::chrono::milliseconds(100);
  opts.retry_backoff = std::chrono::milliseconds(1);
  opts.max_retry_backoff = std::chrono::milliseconds(1);
  opts.config["fake-slow"]["init-delay-ms"] = "0";
  opts.config["fake-slow"]["annotate-gate"] = gate.string();
  PluginHost host(opts, logger_);
  ASSERT_EQ(host.loaded_count(), 1u) << log_.str();
  std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1")};
  host.Annotate(devices);
  EXPECT_EQ(devices[0].attributes.count("fake-slow.dra.net/hello"), 0u);
  EXPECT_EQ(Find(host, "fake-slow").outcome, PluginOutcome::kFailed);
  EXPECT_EQ(Find(host, "fake-slow").reason,
            "annotate of device eth1 missed its deadline of 100 ms; disabled, retried 1 ms after the call comes back");
  // While the call is out, the plugin is not called, and a claim it would
  // inject into fails instead of going without its edits.
  auto edits = host.Inject({"ns", "c", "u"}, {Nic("eth1", "eth1")});
  ASSERT_EQ(edits.errors.size(), 1u);
  EXPECT_NE(edits.errors[0].find("plugin fake-slow is disabled"), std::string::npos) << edits.errors[0];
  std::ofstream(gate).put('\n');
  // The late call comes back on its own; then the next pass uses the plugin.
  bool annotated = false;
  for (int i = 0; i < 500 && !annotated; ++i) {
    std::vector<dranet::inventory::Device> again{Nic("eth1", "eth1")};
    host.Annotate(again);
    annotated = again[0].attributes.count("fake-slow.dra.net/hello") == 1;
    if (!annotated) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(annotated) << log_.str();
  EXPECT_EQ(Find(host, "fake-slow").outcome, PluginOutcome::kLoaded);
  EXPECT_NE(log_.str().find("plugin re-enabled after its back-off"), std::string::npos);
  EXPECT_TRUE(host.Inject({"ns", "c", "u"}, {Nic("eth1", "eth1")}).errors.empty());
}

// Every miss without a successful call between doubles the back-off, up to
// its cap (each Disable logs its retryAfterMs): 20, 40, 80, then 100 twice.
TEST_F(PluginHostTest, TheBackoffDoublesAfterEachMissUpToItsCap) {
  Install("fake-slow");
  auto opts = Options();
  opts.call_deadline = std::chrono::milliseconds(30);
  opts.retry_backoff = std::chrono::milliseconds(20);
  opts.max_retry_backoff = std::chrono::milliseconds(100);
  opts.config["fake-slow"]["init-delay-ms"] = "0";
  opts.config["fake-slow"]["annotate-delay-ms"] = "60";  // every call misses, then comes back on its own
  PluginHost host(opts, logger_);
  ASSERT_EQ(host.loaded_count(), 1u) << log_.str();
  auto backoffs = [&] {
    std::vector<long> found;
    const std::regex field("retryAfterMs\\D{1,4}(\\d+)");
    const std::string text = log_.str();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), field); it != std::sregex_iterator(); ++it)
      found.push_back(std::stol((*it)[1]));
    return found;
  };
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (backoffs().size() < 5 && std::chrono::steady_clock::now() < until) {
    std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1")};
    host.Annotate(devices);  // a no-op while the plugin is disabled or its late call is out
    EXPECT_EQ(devices[0].attributes.count("fake-slow.dra.net/hello"), 0u) << "a call came back in time";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto found = backoffs();
  ASSERT_GE(found.size(), 5u) << log_.str();
  EXPECT_EQ(std::vector<long>(found.begin(), found.begin() + 5), (std::vector<long>{20, 40, 80, 100, 100})) << log_.str();
}

TEST_F(PluginHostTest, InvalidAttributesAreRejectedOneByOne) {
  Install("fake");
  auto opts = Options();
  opts.config["fake"]["bad-attributes"] = "true";
  PluginHost host(opts, logger_);
  std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1")};
  host.Annotate(devices);
  // The plugin itself fails annotate if the host accepted any invalid one.
  EXPECT_EQ(devices[0].attributes.count("fake.dra.net/hello"), 1u);
  EXPECT_EQ(std::get<std::string>(devices[0].attributes.at("dra.net/ifName")), "eth1") << "core domain untouched";
  EXPECT_EQ(devices[0].attributes.count("fake.dra.net/tooLong"), 0u);
  const std::string log = log_.str();
  EXPECT_NE(log.find("value longer than 64 bytes"), std::string::npos);
  EXPECT_NE(log.find("domain dra.net is reserved for the core"), std::string::npos);
  EXPECT_NE(log.find("must be a C identifier"), std::string::npos);
  EXPECT_EQ(log.find("plugin annotate failed"), std::string::npos) << log;
}

// ABI 1.3: attribute domains are owned. fake-intruder loads first (its file
// name sorts before fake's) and writes fake's attribute, an undeclared
// domain and its declared one: only its own and its declared domain are
// published, fake keeps its value, and the reports say who published what
// and what was rejected, and why.
TEST_F(PluginHostTest, AnotherPluginsDomainIsRefusedWhateverTheLoadOrder) {
  Install("fake-intruder");
  Install("fake");
  PluginHost host(Options(), logger_);
  ASSERT_EQ(host.loaded_count(), 2u) << log_.str();
  std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1"), Nic("ib0")};
  host.Annotate(devices);
  for (const auto& d : devices) {
    EXPECT_EQ(std::get<std::string>(d.attributes.at("fake.dra.net/hello")), "hello") << d.name;
    EXPECT_EQ(d.attributes.count("gce.dra.net/machineType"), 0u) << d.name;
    EXPECT_EQ(std::get<bool>(d.attributes.at("intruder.example.com/owned")), true) << d.name;
    EXPECT_EQ(d.attributes.count("fake-intruder.dra.net/hello"), 1u) << d.name;
  }
  const auto& intruder = Find(host, "fake-intruder");
  EXPECT_EQ(intruder.attribute_domains,
            (std::vector<std::string>{"fake-intruder.dra.net", "intruder.example.com"}));
  ASSERT_EQ(intruder.refused_domains.size(), 1u);
  EXPECT_EQ(intruder.refused_domains[0], "declared domain fake.dra.net belongs to plugin fake");
  EXPECT_EQ(intruder.annotated.published,
            (std::map<std::string, std::size_t>{{"fake-intruder.dra.net/hello", 2},
                                                {"fake-intruder.dra.net/linkFile", 1},
                                                {"intruder.example.com/owned", 2}}));
  EXPECT_EQ(intruder.annotated.rejected,
            (std::map<std::string, std::size_t>{
                {"attribute \"fake.dra.net/hello\": domain fake.dra.net belongs to plugin fake", 2},
                {"attribute \"gce.dra.net/machineType\": domain gce.dra.net is not plugin fake-intruder's (its own "
                 "is fake-intruder.dra.net; declare others in attribute_domains)",
                 2}}));
  const auto& fake = Find(host, "fake");
  EXPECT_EQ(fake.attribute_domains, std::vector<std::string>{"fake.dra.net"});
  EXPECT_EQ(fake.annotated.published.at("fake.dra.net/hello"), 2u);
  EXPECT_TRUE(fake.annotated.rejected.empty());
  EXPECT_EQ(log_.str().find("first value kept"), std::string::npos) << "no conflict left to load order";
  // A second pass counts afresh.
  host.Annotate(devices);
  EXPECT_EQ(Find(host, "fake").annotated.published.at("fake.dra.net/hello"), 2u);
}

// Plugins built for ABI < 1.3 could not declare domains: they may still
// write a domain nobody owns, but when two of them disagree on one
// attribute it is dropped for both instead of the first file winning.
TEST_F(PluginHostTest, LegacyPluginsDisagreeingInAnUnownedDomainLoseTheAttribute) {
  Install("fake-abi10");
  {
    PluginHost alone(Options(), logger_);
    std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1")};
    alone.Annotate(devices);
    EXPECT_EQ(std::get<std::string>(devices[0].attributes.at("shared.example.com/writer")), "fake-abi10")
        << "a legacy plugin alone may write a domain nobody owns";
  }
  Install("fake-legacy");
  PluginHost host(Options(), logger_);
  ASSERT_EQ(host.loaded_count(), 2u) << log_.str();
  std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1")};
  host.Annotate(devices);
  EXPECT_EQ(devices[0].attributes.count("shared.example.com/writer"), 0u);
  EXPECT_EQ(devices[0].attributes.count("fake-abi10.dra.net/hello"), 1u);
  EXPECT_EQ(devices[0].attributes.count("fake-legacy.dra.net/hello"), 1u);
  const std::string why = "attribute \"shared.example.com/writer\": fake-abi10 and fake-legacy set different values "
                          "in a domain nobody owns; dropped";
  for (const char* name : {"fake-abi10", "fake-legacy"}) {
    const auto& r = Find(host, name);
    EXPECT_EQ(r.annotated.published.count("shared.example.com/writer"), 0u) << name;
    EXPECT_EQ(r.annotated.rejected.count(why), 1u) << name;
  }
}

// ABI 1.3: an entry that refuses the host can say why, and the host names
// both versions.
TEST_F(PluginHostTest, AnEntryRefusingTheHostSaysWhichHostItNeeds) {
  Install("fake-needsnewer");
  PluginHost host(Options(), logger_);
  const auto& r = Find(host, "fake-needsnewer");
  EXPECT_EQ(r.outcome, PluginOutcome::kRejected);
  EXPECT_EQ(r.reason, "plugin fake-needsnewer 0.1.0 (built for ABI 1.4) refused host ABI 1.4: it needs host ABI "
                      "1.99 or newer");
}

TEST_F(PluginHostTest, AllowAndDenyLists) {
  Install("fake");
  Install("fake-error");
  auto opts = Options();
  opts.deny = {"fake-error"};
  {
    PluginHost host(opts, logger_);
    EXPECT_EQ(Find(host, "fake-error").outcome, PluginOutcome::kSkipped);
    EXPECT_EQ(Find(host, "fake-error").reason, "on the deny list");
    EXPECT_EQ(Find(host, "fake").outcome, PluginOutcome::kLoaded);
  }
  opts.deny.clear();
  opts.allow = {"fake-error"};
  PluginHost host(opts, logger_);
  EXPECT_EQ(Find(host, "fake").outcome, PluginOutcome::kSkipped);
  EXPECT_EQ(Find(host, "fake").reason, "not on the allow list");
}

TEST_F(PluginHostTest, DuplicateNameAcrossDirectoriesIsRejected) {
  Install("fake");
  fs::path second = dir_ / "second";
  fs::create_directories(second);
  Install("fake", second);
  auto opts = Options();
  opts.plugin_dirs = {dir_, second};
  PluginHost host(opts, logger_);
  ASSERT_EQ(host.reports().size(), 2u);
  EXPECT_EQ(host.reports()[0].outcome, PluginOutcome::kLoaded);
  EXPECT_EQ(host.reports()[1].outcome, PluginOutcome::kRejected);
  EXPECT_NE(host.reports()[1].reason.find("duplicate plugin name"), std::string::npos);
}

TEST_F(PluginHostTest, EnvConflictBetweenPluginsIsAnError) {
  Install("fake");
  Install("fake-conflict");
  PluginHost host(Options(), logger_);
  ASSERT_EQ(host.loaded_count(), 2u);
  auto edits = host.Inject({"ns", "c", "u"}, {Nic("eth1", "eth1")});
  ASSERT_EQ(edits.errors.size(), 1u);
  // Files load in name order: dranet-plugin-fake-conflict.so sorts first.
  EXPECT_NE(edits.errors[0].find("env FAKE_DEVICES: plugin fake-conflict sets \"conflicting-value\" but plugin fake sets \"eth1\""),
            std::string::npos)
      << edits.errors[0];
}

TEST_F(PluginHostTest, MissingDirectoryIsOneClearReport) {
  auto opts = Options();
  opts.plugin_dirs = {dir_ / "does-not-exist"};
  PluginHost host(opts, logger_);
  ASSERT_EQ(host.reports().size(), 1u);
  EXPECT_EQ(host.reports()[0].outcome, PluginOutcome::kRejected);
  EXPECT_NE(host.reports()[0].reason.find("does not exist"), std::string::npos);
  std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1")};
  host.Annotate(devices);  // nothing loaded, nothing breaks
  EXPECT_EQ(devices[0].attributes.size(), 1u);
}

TEST_F(PluginHostTest, UnsafeDirectoriesAreRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "ownership checks need root";
  Install("fake");
  fs::permissions(dir_, fs::perms::others_write, fs::perm_options::add);
  {
    PluginHost host(Options(), logger_);
    ASSERT_EQ(host.reports().size(), 1u);
    EXPECT_NE(host.reports()[0].reason.find("world-writable"), std::string::npos);
  }
  fs::permissions(dir_, fs::perms::others_write, fs::perm_options::remove);
  ASSERT_EQ(chown(dir_.c_str(), 65534, 65534), 0);
  {
    PluginHost host(Options(), logger_);
    ASSERT_EQ(host.reports().size(), 1u);
    EXPECT_NE(host.reports()[0].reason.find("is not owned by root"), std::string::npos);
  }
  ASSERT_EQ(chown(dir_.c_str(), 0, 0), 0);
  ASSERT_EQ(chown((dir_ / "dranet-plugin-fake.so").c_str(), 65534, 65534), 0);
  PluginHost host(Options(), logger_);
  EXPECT_EQ(host.reports()[0].outcome, PluginOutcome::kRejected);
  EXPECT_EQ(host.reports()[0].reason, "file is not owned by root");
}

TEST_F(PluginHostTest, FileNameMustMatchDescriptorName) {
  fs::copy_file(fs::path(DRANET_FAKE_PLUGIN_DIR) / "dranet-plugin-fake.so", dir_ / "dranet-plugin-renamed.so");
  PluginHost host(Options(), logger_);
  ASSERT_EQ(host.reports().size(), 1u);
  EXPECT_EQ(host.reports()[0].outcome, PluginOutcome::kRejected);
  EXPECT_NE(host.reports()[0].reason.find("requires the file name dranet-plugin-fake.so"), std::string::npos);
}

TEST_F(PluginHostTest, RepeatedLoadAndUnloadCycles) {
  Install("fake");
  for (int i = 0; i < 5; ++i) {
    PluginHost host(Options(), logger_);
    ASSERT_EQ(host.loaded_count(), 1u) << "cycle " << i;
    std::vector<dranet::inventory::Device> devices{Nic("eth1", "eth1")};
    host.Annotate(devices);
    EXPECT_EQ(devices[0].attributes.count("fake.dra.net/hello"), 1u);
  }
}

// ABI 1.1: a plugin's routes and rules land in the edits, recorded with
// the plugin's name, for request devices that have a netdev.
TEST_F(PluginHostTest, RoutesAndRulesFromAPluginReachTheEdits) {
  Install("fake-routes");
  PluginHost host(Options(), logger_);
  ASSERT_EQ(host.loaded_count(), 1u) << log_.str();
  EXPECT_EQ(Find(host, "fake-routes").abi_version, DRANET_ABI_CURRENT);
  // The IB-only device (no netdev) gets nothing; eth1 is request device 1.
  auto edits = host.Inject({"ns", "c", "u"}, {Nic("pci-0000-01-00-0"), Nic("eth1", "eth1")});
  EXPECT_TRUE(edits.errors.empty()) << edits.errors[0];
  EXPECT_EQ(edits.env.at("FAKE_ROUTE_STATUS"), "0,0");
  ASSERT_EQ(edits.routes.size(), 1u);
  const auto& r = edits.routes[0];
  EXPECT_EQ(r.device, "eth1");
  EXPECT_EQ(r.destination, "0.0.0.0/0");
  EXPECT_EQ(r.gateway, "192.0.2.1");
  EXPECT_EQ(r.source, "");
  EXPECT_EQ(r.table, 101u);
  EXPECT_EQ(r.metric, 0u);
  EXPECT_EQ(r.scope, 0u);
  EXPECT_EQ(r.plugin, "fake-routes");
  ASSERT_EQ(edits.rules.size(), 1u);
  EXPECT_EQ(edits.rules[0].device, "eth1");
  EXPECT_EQ(edits.rules[0].source, "192.0.2.0/24");
  EXPECT_EQ(edits.rules[0].destination, "");
  EXPECT_EQ(edits.rules[0].table, 101u);
  EXPECT_EQ(edits.rules[0].priority, 0u);
  EXPECT_EQ(edits.rules[0].plugin, "fake-routes");
}

TEST_F(PluginHostTest, ValidRoutesOfBothFamiliesAndLinkScopeAreKept) {
  Install("fake-routes");
  auto opts = Options();
  opts.config["fake-routes"]["routes"] =
      "eth1|::/0|fe80::1234:5678:9abc||101|50|0;"
      "eth1|10.1.0.0/16|||0|0|253;"
      "eth1|0.0.0.0/0|10.1.0.1|10.1.0.5|0|0|0";
  opts.config["fake-routes"]["rules"] = "eth1|fd00:1::5/128||101|32000;eth1||10.9.0.0/16|101|";
  PluginHost host(opts, logger_);
  auto edits = host.Inject({"ns", "c", "u"}, {Nic("eth1", "eth1")});
  EXPECT_TRUE(edits.errors.empty()) << edits.errors[0];
  EXPECT_EQ(edits.env.at("FAKE_ROUTE_STATUS"), "0,0,0,0,0");
  ASSERT_EQ(edits.routes.size(), 3u);
  EXPECT_EQ(edits.routes[0].destination, "::/0");
  EXPECT_EQ(edits.routes[0].gateway, "fe80::1234:5678:9abc");
  EXPECT_EQ(edits.routes[0].metric, 50u);
  EXPECT_EQ(edits.routes[1].scope, 253u);
  EXPECT_EQ(edits.routes[1].gateway, "");
  EXPECT_EQ(edits.routes[2].source, "10.1.0.5");
  ASSERT_EQ(edits.rules.size(), 2u);
  EXPECT_EQ(edits.rules[0].source, "fd00:1::5/128");
  EXPECT_EQ(edits.rules[0].priority, 32000u);
  EXPECT_EQ(edits.rules[1].destination, "10.9.0.0/16");
}

TEST_F(PluginHostTest, InvalidRoutesAndRulesAreRejectedOneByOne) {
  Install("fake-routes");
  auto opts = Options();
  opts.config["fake-routes"]["routes"] =
      "not-in-claim|0.0.0.0/0|10.0.0.1||100|0|0;"  // invalid device
      "pci-0000-01-00-0|0.0.0.0/0|10.0.0.1||100|0|0;"  // device without a netdev
      "eth1|10.0.0/33|10.0.0.1||100|0|0;"  // invalid CIDR
      "eth1|::/0|10.0.0.1||100|0|0;"  // family mismatch
      "eth1|0.0.0.0/0|10.0.0.1|fd00::1|100|0|0;"  // source of the other family
      "eth1|10.0.0.5/24|10.0.0.1||100|0|0;"  // host bits set
      "eth1|0.0.0.0/0|||100|0|0;"  // no gateway, scope universe
      "eth1|10.0.0.0/24|10.0.0.1||100|0|253;"  // link scope with a gateway
      "eth1|0.0.0.0/0|10.0.0.1||255|0|0;"  // local table
      "eth1|0.0.0.0/0|10.0.0.1||100|0|200;"  // scope neither universe nor link
      "eth1|0.0.0.0/0|10.0.0.1||100|0|0";  // the valid one
  opts.config["fake-routes"]["rules"] =
      "eth1|10.0.0.0/24|fd00::/64|100|;"  // family mismatch
      "eth1|10.0.0.0/24||0|;"  // no table
      "other|10.0.0.0/24||100|;"  // invalid device
      "eth1|10.0.0.0/24||100|";  // the valid one
  PluginHost host(opts, logger_);
  auto edits = host.Inject({"ns", "c", "u"}, {Nic("eth1", "eth1"), Nic("pci-0000-01-00-0")});
  EXPECT_EQ(edits.env.at("FAKE_ROUTE_STATUS"), "-2,-2,-2,-2,-2,-2,-2,-2,-2,-2,0,-2,-2,-2,0");
  ASSERT_EQ(edits.routes.size(), 1u);
  EXPECT_EQ(edits.routes[0].gateway, "10.0.0.1");
  ASSERT_EQ(edits.rules.size(), 1u);
  EXPECT_EQ(edits.rules[0].source, "10.0.0.0/24");
  std::vector<std::string> want{
      "route \"0.0.0.0/0\" on device \"not-in-claim\": device \"not-in-claim\" is not a device of this request",
      "route \"0.0.0.0/0\" on device \"pci-0000-01-00-0\": device \"pci-0000-01-00-0\" has no netdev",
      "destination \"10.0.0/33\" is not a CIDR",
      "gateway \"10.0.0.1\" is IPv4 but the destination is IPv6",
      "source \"fd00::1\" is IPv6 but the destination is IPv4",
      "destination \"10.0.0.5/24\": host bits set",
      "no gateway: an on-link route needs scope 253 (link)",
      "a link-scope route has no gateway",
      "table 255 (local) belongs to the kernel",
      "scope 200 is neither 0 (universe) nor 253 (link)",
      "rule from \"10.0.0.0/24\" lookup 100 on device \"eth1\": destination \"fd00::/64\" is IPv6 but the source is IPv4",
      "no table to look up",
      "device \"other\" is not a device of this request",
  };
  ASSERT_EQ(edits.errors.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_NE(edits.errors[i].find("plugin fake-routes: "), std::string::npos) << edits.errors[i];
    EXPECT_NE(edits.errors[i].find(want[i]), std::string::npos) << edits.errors[i];
  }
  EXPECT_NE(log_.str().find("plugin edit rejected"), std::string::npos) << "rejections are logged";
  EXPECT_NE(log_.str().find("is not a device of this request"), std::string::npos) << log_.str();
}

// A plugin built for ABI 1.0 (no routes, a 1.0 descriptor) still loads
// and injects on a 1.1 host.
TEST_F(PluginHostTest, Abi10PluginStillLoadsAndInjects) {
  Install("fake-abi10");
  PluginHost host(Options(), logger_);
  ASSERT_EQ(host.loaded_count(), 1u) << log_.str();
  const auto& r = Find(host, "fake-abi10");
  EXPECT_EQ(r.outcome, PluginOutcome::kLoaded);
  EXPECT_EQ(r.abi_version, DRANET_ABI_VERSION(1, 0));
  EXPECT_EQ(r.capabilities, static_cast<uint32_t>(DRANET_CAP_ALL));
  auto edits = host.Inject({"ns", "c", "u"}, {Nic("eth1", "eth1")});
  EXPECT_TRUE(edits.errors.empty());
  EXPECT_EQ(edits.env.at("FAKE_DEVICES"), "eth1");
  ASSERT_EQ(edits.dev_nodes.size(), 1u);
  EXPECT_TRUE(edits.routes.empty());
  EXPECT_TRUE(edits.rules.empty());
}

}  // namespace

using dranet::plugins::ProfileCallFailed;
using dranet::plugins::ProfileQuery;

TEST_F(PluginHostTest, ProfilePluginResolvesItsOwnProfileAndDeclinesOthers) {
  Install("fake");
  auto opts = Options();
  opts.config["fake"]["profile-config"] = R"({"interface":{"mtu":9000}})";
  PluginHost host(opts, logger_);
  ASSERT_EQ(host.ProfilePlugins(), std::vector<std::string>{"fake"});
  auto nic = Nic("pci-0000-8a-00-0", "eth3");
  nic.pci_address = "0000:8a:00.0";

  auto answer = host.GetProfile({"fake-profile", "uid-1", R"({"profile":"fake-profile"})"}, nic);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->plugin, "fake");
  EXPECT_EQ(answer->config_json, R"({"interface":{"mtu":9000}})");
  // The plugin sees the whole device.
  answer = host.GetProfile({"fake-device", "uid-1", "{}"}, nic);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->config_json,
            R"({"interface":{"name":"pci-0000-8a-00-0"},"x-pci":"0000:8a:00.0","x-if":"eth3"})");
  EXPECT_FALSE(host.GetProfile({"someone-elses", "uid-1", "{}"}, nic));

  EXPECT_TRUE(host.ReleaseProfile({"fake-profile", "uid-1", "{}"}, nic).empty());
  EXPECT_NE(log_.str().find("fake released profile fake-profile of pci-0000-8a-00-0 (pci 0000:8a:00.0) for claim uid-1"),
            std::string::npos)
      << log_.str();
  EXPECT_TRUE(host.ReleaseProfile({"someone-elses", "uid-1", "{}"}, nic).empty());
}

// A profile is resolved only by plugins whose match table takes the
// device, but its release reaches every profile plugin: one that resolved
// it may have matched on what the device was then.
TEST_F(PluginHostTest, ReleaseReachesEveryProfilePluginWhateverItsMatchTable) {
  Install("fake-narrow");
  PluginHost host(Options(), logger_);
  ASSERT_EQ(host.ProfilePlugins(), std::vector<std::string>{"fake-narrow"}) << log_.str();
  auto nic = Nic("pci-0000-8a-00-0", "eth3");
  EXPECT_FALSE(host.GetProfile({"fake-device", "uid-1", "{}"}, nic)) << "asked although its table does not take eth3";
  auto ib = Nic("pci-0000-8b-00-0", "ib-narrow0");
  EXPECT_TRUE(host.GetProfile({"fake-device", "uid-1", "{}"}, ib)) << log_.str();
  EXPECT_TRUE(host.ReleaseProfile({"fake-profile", "uid-1", "{}"}, nic).empty());
  EXPECT_NE(log_.str().find("fake-narrow released profile fake-profile of pci-0000-8a-00-0"), std::string::npos)
      << log_.str();
}

TEST_F(PluginHostTest, FailingProfilePluginFailsTheCallNamingIt) {
  Install("fake");
  PluginHost host(Options(), logger_);
  auto nic = Nic("eth1", "eth1");
  try {
    host.GetProfile({"fake-fail", "uid", "{}"}, nic);
    FAIL() << "a failing plugin must fail the call";
  } catch (const ProfileCallFailed& e) {
    EXPECT_STREQ(e.what(), "plugin fake: get_profile failed: DRANET_ERR_IO (-5), sys_errno 111 (Connection refused): simulated IPAM outage for eth1");
  }
  try {
    host.GetProfile({"fake-garbage", "uid", "{}"}, nic);
    FAIL() << "text that is not JSON must not pass as a profile's config";
  } catch (const ProfileCallFailed& e) {
    EXPECT_NE(std::string(e.what()).find("plugin fake: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("is not a NetworkConfig object"), std::string::npos) << e.what();
  }
  auto failures = host.ReleaseProfile({"fake-fail", "uid", "{}"}, nic);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0], "plugin fake: release_profile failed: DRANET_ERR_IO (-5), sys_errno 111 (Connection refused): simulated IPAM outage releasing eth1");
}

TEST_F(PluginHostTest, HungProfilePluginMissesItsDeadlineAndIsDisabled) {
  Install("fake");
  auto opts = Options();
  opts.call_deadline = std::chrono::milliseconds(300);
  PluginHost host(opts, logger_);
  auto nic = Nic("eth1", "eth1");
  EXPECT_THROW(host.GetProfile({"fake-hang", "uid", "{}"}, nic), ProfileCallFailed);
  try {
    host.GetProfile({"fake-profile", "uid", "{}"}, nic);
    FAIL() << "a hung plugin is not asked again";
  } catch (const ProfileCallFailed& e) {
    EXPECT_NE(std::string(e.what()).find("plugin fake is disabled: an earlier call missed its deadline"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(host.ReleaseProfile({"fake-profile", "uid", "{}"}, nic).size(), 1u);
}

TEST_F(PluginHostTest, Abi10PluginOffersNoProfiles) {
  Install("fake-abi10");
  PluginHost host(Options(), logger_);
  ASSERT_EQ(host.loaded_count(), 1u);
  EXPECT_TRUE(host.ProfilePlugins().empty());
  EXPECT_FALSE(host.GetProfile({"fake-profile", "uid", "{}"}, Nic("eth1", "eth1")));
  EXPECT_TRUE(host.ReleaseProfile({"fake-profile", "uid", "{}"}, Nic("eth1", "eth1")).empty());
}
