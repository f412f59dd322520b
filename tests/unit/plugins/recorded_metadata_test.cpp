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
    return ReplayRecordedMetadata(dir_ / "snapshot", "http://169.254.169.254" + path, {"Metadata: true"});
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

}  // namespace
}  // namespace dranet::plugins
