// The fake metadata service over real loopback HTTP, through the host's
// libcurl client: file layout, required headers, faults, request counts.
#include "fake_metadata_server.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "plugins/host_services.h"

namespace fs = std::filesystem;
using dranet::fakes::FakeMetadataServer;
using dranet::fakes::MetadataFault;
using dranet::plugins::CurlHttpGet;

namespace {

class FakeMetadataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("dranet-fake-metadata-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    Write("metadata/instance", R"({"compute":{"vmSize":"Standard_X","tags":{"a":"b"}},"network":{}})");
    Write("computeMetadata/v1/instance/machine-type", "projects/1/machineTypes/a4-highgpu-8g");
    Write("computeMetadata/v1/instance/network-interfaces/index", "[]");
    Write("computeMetadata/v1/instance/network-interfaces/index@recursive=true%26alt=json", R"([{"mac":"x"}])");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& body) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << body;
  }
  fs::path root_;
};

const std::vector<std::string> kAzure{"Metadata: true"};
const std::vector<std::string> kGoogle{"Metadata-Flavor: Google"};

TEST_F(FakeMetadataTest, ServesFilesQueryVariantsAndJsonMembers) {
  FakeMetadataServer server(root_);
  auto r = CurlHttpGet(server.url() + "/metadata/instance?api-version=2025-11-11&format=json", kAzure, 2000);
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("Standard_X"), std::string::npos);
  r = CurlHttpGet(server.url() + "/metadata/instance/compute/vmSize?api-version=1&format=text", kAzure, 2000);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "Standard_X");
  r = CurlHttpGet(server.url() + "/metadata/instance/compute?api-version=1", kAzure, 2000);
  EXPECT_EQ(r.body, R"({"vmSize":"Standard_X","tags":{"a":"b"}})");
  r = CurlHttpGet(server.url() + "/computeMetadata/v1/instance/network-interfaces/?recursive=true&alt=json", kGoogle, 2000);
  EXPECT_EQ(r.body, R"([{"mac":"x"}])");
  r = CurlHttpGet(server.url() + "/computeMetadata/v1/instance/network-interfaces/", kGoogle, 2000);
  EXPECT_EQ(r.body, "[]");
  r = CurlHttpGet(server.url() + "/computeMetadata/v1/instance/missing", kGoogle, 2000);
  EXPECT_EQ(r.status, 404);
  r = CurlHttpGet(server.url() + "/computeMetadata/v1/../../etc/passwd", kGoogle, 2000);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(server.Hits(), 7u);
  EXPECT_EQ(server.Hits("network-interfaces"), 2u);
}

TEST_F(FakeMetadataTest, RequiresTheMetadataHeaderLikeTheRealServices) {
  FakeMetadataServer server(root_);
  auto r = CurlHttpGet(server.url() + "/metadata/instance?api-version=2025-11-11", {}, 2000);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("Required metadata header not specified"), std::string::npos);
  r = CurlHttpGet(server.url() + "/metadata/instance", kAzure, 2000);
  EXPECT_EQ(r.status, 400) << "api-version is mandatory";
  r = CurlHttpGet(server.url() + "/metadata/instance?api-version=1", {"Metadata: true", "X-Forwarded-For: 1.2.3.4"}, 2000);
  EXPECT_EQ(r.status, 400);
  r = CurlHttpGet(server.url() + "/computeMetadata/v1/instance/machine-type", {}, 2000);
  EXPECT_EQ(r.status, 403);
  r = CurlHttpGet(server.url() + "/computeMetadata/v1/instance/machine-type", kGoogle, 2000);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "projects/1/machineTypes/a4-highgpu-8g");
}

TEST_F(FakeMetadataTest, InjectsFaults) {
  FakeMetadataServer server(root_);
  MetadataFault status;
  status.status = 500;
  status.times = 1;
  server.InjectFault(status);
  EXPECT_EQ(CurlHttpGet(server.url() + "/computeMetadata/v1/instance/machine-type", kGoogle, 2000).status, 500);
  EXPECT_EQ(CurlHttpGet(server.url() + "/computeMetadata/v1/instance/machine-type", kGoogle, 2000).status, 200)
      << "a fault with times=1 applies once";

  MetadataFault drop;
  drop.action = MetadataFault::Action::kDrop;
  server.InjectFault(drop);
  EXPECT_THROW(CurlHttpGet(server.url() + "/computeMetadata/v1/instance/machine-type", kGoogle, 2000), std::runtime_error);
  server.ClearFaults();

  MetadataFault garbage;
  garbage.action = MetadataFault::Action::kGarbage;
  garbage.path_contains = "machine-type";
  server.InjectFault(garbage);
  auto r = CurlHttpGet(server.url() + "/computeMetadata/v1/instance/machine-type", kGoogle, 2000);
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("not json"), std::string::npos);
  server.ClearFaults();

  MetadataFault slow;
  slow.action = MetadataFault::Action::kServe;
  slow.delay = std::chrono::milliseconds(5000);
  server.InjectFault(slow);
  EXPECT_THROW(CurlHttpGet(server.url() + "/computeMetadata/v1/instance/machine-type", kGoogle, 100),
               dranet::plugins::HttpTimeout);
  EXPECT_EQ(server.Hits("machine-type"), 5u);
}

}  // namespace
