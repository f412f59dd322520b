#include "kube/cluster_config.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dranet::kube {
namespace {

using ::testing::HasSubstr;

class ClusterConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kube-config-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path Write(const std::string& name, const std::string& text) {
    auto path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

constexpr const char* kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: prod-cluster
  cluster:
    server: https://prod.example:6443
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t
- name: dev-cluster
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority: certs/ca.pem
    insecure-skip-tls-verify: true
users:
- name: dev-user
  user:
    client-certificate: certs/client.pem
    client-key: /abs/client.key
- name: prod-user
  user:
    token: abc.def
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: dranet
- name: prod
  context:
    cluster: prod-cluster
    user: prod-user
)";

TEST_F(ClusterConfigTest, KubeconfigCurrentContext) {
  auto path = Write("config", kKubeconfig);
  ClusterConfig config = LoadKubeconfig(path);
  EXPECT_EQ(config.server, "https://127.0.0.1:6443");
  EXPECT_EQ(config.ca_file, (dir_ / "certs/ca.pem").string());
  EXPECT_TRUE(config.insecure_skip_tls_verify);
  EXPECT_EQ(config.client_cert_file, (dir_ / "certs/client.pem").string());
  EXPECT_EQ(config.client_key_file, "/abs/client.key");
  EXPECT_EQ(config.namespace_name, "dranet");
  EXPECT_TRUE(config.token.empty());
}

TEST_F(ClusterConfigTest, KubeconfigNamedContextWithDataAndToken) {
  auto path = Write("config", kKubeconfig);
  ClusterConfig config = LoadKubeconfig(path, "prod");
  EXPECT_EQ(config.server, "https://prod.example:6443");
  EXPECT_EQ(config.ca_pem, "-----BEGIN CERTIFICATE-----");
  EXPECT_EQ(config.token, "abc.def");
  EXPECT_FALSE(config.insecure_skip_tls_verify);
}

TEST_F(ClusterConfigTest, KubeconfigErrorsNameTheFileAndTheProblem) {
  auto path = Write("config", kKubeconfig);
  try {
    LoadKubeconfig(path, "staging");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_THAT(error.what(), HasSubstr(path.string()));
    EXPECT_THAT(error.what(), HasSubstr("staging"));
  }
  auto exec = Write("exec", R"(current-context: c
clusters: [{name: k, cluster: {server: "https://x"}}]
users: [{name: u, user: {exec: {command: gke-gcloud-auth-plugin}}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  EXPECT_THROW(LoadKubeconfig(exec), std::runtime_error);
  EXPECT_THROW(LoadKubeconfig(Write("bad", "clusters: [")), std::runtime_error);
  EXPECT_THROW(LoadKubeconfig(dir_ / "missing"), std::runtime_error);
}

TEST_F(ClusterConfigTest, InClusterFromEnvironmentAndServiceAccountFiles) {
  InClusterPaths paths{Write("token", "tok\n"), dir_ / "ca.crt", Write("namespace", "kube-system\n")};
  std::map<std::string, std::string> env = {{"KUBERNETES_SERVICE_HOST", "fd00::1"},
                                            {"KUBERNETES_SERVICE_PORT", "443"}};
  auto lookup = [&env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional(it->second);
  };
  ClusterConfig config = LoadInClusterConfig(paths, lookup);
  EXPECT_EQ(config.server, "https://[fd00::1]:443");
  EXPECT_EQ(config.token_file, paths.token.string());
  EXPECT_EQ(config.ca_file, paths.ca.string());
  EXPECT_EQ(config.namespace_name, "kube-system");

  env["KUBERNETES_SERVICE_HOST"] = "10.0.0.1";
  EXPECT_EQ(LoadInClusterConfig(paths, lookup).server, "https://10.0.0.1:443");
  env.erase("KUBERNETES_SERVICE_PORT");
  EXPECT_THROW(LoadInClusterConfig(paths, lookup), std::runtime_error);
  env["KUBERNETES_SERVICE_PORT"] = "443";
  paths.token = dir_ / "no-token";
  EXPECT_THROW(LoadInClusterConfig(paths, lookup), std::runtime_error);
}

TEST(Base64, Decodes) {
  EXPECT_EQ(DecodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(DecodeBase64("aGVs\nbG8h"), "hello!");
  EXPECT_EQ(DecodeBase64(""), "");
  EXPECT_THROW(DecodeBase64("a*b"), std::invalid_argument);
}

}  // namespace
}  // namespace dranet::kube
