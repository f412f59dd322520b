#include "inject/cdi_spec.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "inject/pod_netns_applier.h"

namespace dranet::inject {
namespace {

ClaimPlan Gb300() {
  ClaimPlan p;
  p.claim_uid = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
  p.claim_namespace = "ml";
  p.claim_name = "train-0";
  p.device_nodes = {{"/dev/infiniband/uverbs0", "/dev/infiniband/uverbs0", 231, 192},
                    {"/dev/infiniband/umad0", "/dev/infiniband/umad0", 231, 0},
                    {"/dev/infiniband/rdma_cm", "/dev/infiniband/rdma_cm", 10, 58}};
  p.env = {{"NCCL_IB_HCA", "=mlx5_0"}};
  return p;
}

class CdiSpecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dranet-cdi-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    dir_ += "/cdi";  // created on demand
  }
  void TearDown() override { std::filesystem::remove_all(std::filesystem::path(dir_).parent_path()); }
  std::string dir_;
};

TEST_F(CdiSpecTest, WritesASpecAndReturnsQualifiedIds) {
  const auto plan = Gb300();
  const auto ids = WriteCdiSpec(plan, dir_);
  ASSERT_EQ(ids, std::vector<std::string>{"dra.net/rdma=" + plan.claim_uid});
  const auto path = CdiSpecPath(plan.claim_uid, dir_);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document doc;
  ASSERT_FALSE(doc.Parse(text.str().c_str()).HasParseError());
  EXPECT_STREQ(doc["cdiVersion"].GetString(), "0.5.0");
  EXPECT_STREQ(doc["kind"].GetString(), "dra.net/rdma");
  ASSERT_EQ(doc["devices"].Size(), 1u);
  const auto& dev = doc["devices"][0];
  EXPECT_EQ(std::string(dev["name"].GetString()), plan.claim_uid);
  const auto& nodes = dev["containerEdits"]["deviceNodes"];
  ASSERT_EQ(nodes.Size(), 3u);
  EXPECT_STREQ(nodes[0]["path"].GetString(), "/dev/infiniband/uverbs0");
  EXPECT_STREQ(nodes[0]["type"].GetString(), "c");
  EXPECT_EQ(nodes[0]["major"].GetInt(), 231);
  EXPECT_EQ(nodes[0]["minor"].GetInt(), 192);
  EXPECT_EQ(nodes[0]["fileMode"].GetInt(), 0666);
  EXPECT_STREQ(nodes[0]["permissions"].GetString(), "rw");
  EXPECT_FALSE(nodes[0].HasMember("hostPath"));  // same as path
  EXPECT_EQ(nodes[2]["major"].GetInt(), 10);
  ASSERT_EQ(dev["containerEdits"]["env"].Size(), 1u);
  EXPECT_STREQ(dev["containerEdits"]["env"][0].GetString(), "NCCL_IB_HCA==mlx5_0");

  // Idempotent rewrite, then removal (twice is fine).
  EXPECT_EQ(WriteCdiSpec(plan, dir_), ids);
  RemoveCdiSpec(plan.claim_uid, dir_);
  EXPECT_FALSE(std::filesystem::exists(path));
  RemoveCdiSpec(plan.claim_uid, dir_);
  // No temp files left behind.
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(CdiSpecTest, NothingToInjectWritesNothing) {
  ClaimPlan plan;
  plan.claim_uid = "abc";
  EXPECT_TRUE(WriteCdiSpec(plan, dir_).empty());
  EXPECT_FALSE(std::filesystem::exists(CdiSpecPath("abc", dir_)));
}

TEST_F(CdiSpecTest, RejectsAUidThatIsNotACdiName) {
  auto plan = Gb300();
  plan.claim_uid = "../evil";
  EXPECT_THROW(WriteCdiSpec(plan, dir_), InjectError);
  EXPECT_FALSE(std::filesystem::exists(dir_) && !std::filesystem::is_empty(dir_));
}

}  // namespace
}  // namespace dranet::inject
