// Cloud metadata replayed from a snapshot: recordings are read inside the
// snapshot directory only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "plugins/recorded_metadata.h"

namespace dranet::plugins {
namespace {

namespace fs = std::filesystem;

class RecordedMetadataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "dranet-metadata-XXXXXX").string();
    dir_ = mkdtemp(pattern.data());
    fs::create_directories(dir_ / "snapshot/metadata/azure/metadata");
    fs::create_directories(dir_ / "outside");
    std::ofstream(dir_ / "snapshot/metadata/azure/metadata/instance") << R"({"compute":{}})";
    std::ofstream(dir_ / "outside/secret") << "CANARY-outside-the-root";
  }
  void TearDown() override {
    std::error_code error;
    fs::remove_all(dir_, error);
  }
  HttpResult Get(const std::string& path) {
    return ReplayRecordedMetadata(dir_ / "snapshot", {"GET", "http://169.254.169.254" + path, {"Metadata: true"}, 1000});
  }
  HttpResult Send(const std::string& method, const std::string& path, std::vector<std::string> headers) {
    return ReplayRecordedMetadata(dir_ / "snapshot", {method, "http://169.254.169.254" + path, std::move(headers), 1000});
  }
  fs::path dir_;
};

TEST_F(RecordedMetadataTest, ServesRecordings) {
  auto result = Get("/metadata/instance?api-version=2021-02-01");
  EXPECT_EQ(result.status, 200);
  EXPECT_EQ(result.body, R"({"compute":{}})");
  EXPECT_EQ(Get("/metadata/absent").status, 404);
}

TEST_F(RecordedMetadataTest, LinksOutOfTheSnapshotAreNotServed) {
  fs::path recordings = dir_ / "snapshot/metadata/azure/metadata";
  fs::create_symlink(dir_ / "outside/secret", recordings / "absolute");
  fs::create_symlink("../../../../outside/secret", recordings / "relative");
  fs::create_symlink(dir_ / "outside", recordings / "directory");
  for (const char* path : {"/metadata/absolute", "/metadata/relative", "/metadata/directory/secret"}) {
    auto result = Get(path);
    EXPECT_EQ(result.status, 404) << path;
    EXPECT_EQ(result.body.find("CANARY"), std::string::npos) << path;
  }
}

// AWS IMDSv2 and Alibaba: a token from PUT, then GETs carrying it; OCI: the
// bearer header. Each cloud reads its own folder only.
TEST_F(RecordedMetadataTest, TokenAndBearerServicesAreTold) {
  fs::create_directories(dir_ / "snapshot/metadata/aws/latest/meta-data");
  fs::create_directories(dir_ / "snapshot/metadata/alibaba/latest/meta-data");
  fs::create_directories(dir_ / "snapshot/metadata/oci/opc/v2/host");
  std::ofstream(dir_ / "snapshot/metadata/aws/latest/meta-data/instance-type") << "p4d.24xlarge";
  std::ofstream(dir_ / "snapshot/metadata/alibaba/latest/meta-data/instance-type") << "ecs.gn8is-2x.8xlarge";
  std::ofstream(dir_ / "snapshot/metadata/oci/opc/v2/host/index") << R"({"rackId":"r"})";

  auto aws_token = Send("PUT", "/latest/api/token", {"X-aws-ec2-metadata-token-ttl-seconds: 21600"});
  ASSERT_EQ(aws_token.status, 200);
  auto aws = Send("GET", "/latest/meta-data/instance-type", {"X-aws-ec2-metadata-token: " + aws_token.body});
  EXPECT_EQ(aws.status, 200);
  EXPECT_EQ(aws.body, "p4d.24xlarge");
  EXPECT_EQ(Send("GET", "/latest/meta-data/instance-type", {"X-aws-ec2-metadata-token: forged"}).status, 401);
  EXPECT_EQ(Send("GET", "/latest/meta-data/instance-type", {}).status, 400);

  auto ali_token = Send("PUT", "/latest/api/token", {"X-aliyun-ecs-metadata-token-ttl-seconds: 21600"});
  ASSERT_EQ(ali_token.status, 200);
  auto ali = Send("GET", "/latest/meta-data/instance-type", {"X-aliyun-ecs-metadata-token: " + ali_token.body});
  EXPECT_EQ(ali.body, "ecs.gn8is-2x.8xlarge");

  auto oci = Send("GET", "/opc/v2/host/", {"Authorization: Bearer Oracle"});
  EXPECT_EQ(oci.status, 200);
  EXPECT_EQ(oci.body, R"({"rackId":"r"})");
  EXPECT_EQ(Send("PUT", "/opc/v2/host/", {"Authorization: Bearer Oracle"}).status, 400);
}

}  // namespace
}  // namespace dranet::plugins
