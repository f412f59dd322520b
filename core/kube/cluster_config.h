#pragma once
// core/kube/cluster_config.h — where the API server is and how we authenticate to it.
//
// Two sources, as client-go has them (rest.InClusterConfig, tools/clientcmd):
//  - in-cluster: KUBERNETES_SERVICE_HOST/PORT plus the projected service-account volume
//    (token, ca.crt, namespace). The token file is named, not read here: the API client
//    re-reads it every minute and after a 401, because kubelet rotates it.
//  - kubeconfig (yaml-cpp): current-context (or a named one) → cluster + user. Relative file
//    paths are resolved against the kubeconfig's directory, as kubectl does.
// Errors throw std::runtime_error naming the file or variable and what is wrong.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace dranet::kube {

struct ClusterConfig {
  std::string server;  // "https://10.0.0.1:443"
  // Trust: a CA bundle file or PEM bytes; insecure skips verification (tests, dev clusters).
  std::string ca_file;
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;
  // Client certificate auth: files or PEM bytes.
  std::string client_cert_file;
  std::string client_cert_pem;
  std::string client_key_file;
  std::string client_key_pem;
  // Bearer auth: a fixed token, or a file re-read on rotation (takes precedence when set).
  std::string token;
  std::string token_file;
  std::string namespace_name;  // the pod's namespace (in-cluster) or the context's
};

// Service-account file locations; overridable so tests and snapshots use their own.
struct InClusterPaths {
  std::filesystem::path token = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::filesystem::path ca = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::filesystem::path namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
};

// Reads an environment variable; injectable for tests. Default: std::getenv.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> ProcessEnv(const std::string& name);

// In-cluster configuration. Throws when KUBERNETES_SERVICE_HOST/PORT are unset or the token
// file cannot be read (the pod has no service account).
ClusterConfig LoadInClusterConfig(const InClusterPaths& paths = {},
                                  const EnvLookup& env = ProcessEnv);

// Kubeconfig configuration from `path`, using `context` or else current-context.
ClusterConfig LoadKubeconfig(const std::filesystem::path& path, std::string_view context = {});

// Decodes standard base64 (kubeconfig *-data fields). Throws std::invalid_argument.
std::string DecodeBase64(std::string_view text);

}  // namespace dranet::kube
