// core/kube/cluster_config.cpp — in-cluster and kubeconfig configuration.
#include "kube/cluster_config.h"

#include <cstdlib>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "base/files.h"

namespace dranet::kube {
namespace {

// Finds the entry named `name` in a kubeconfig list (clusters, users, contexts) and returns
// its inner map (cluster/user/context).
YAML::Node NamedEntry(const YAML::Node& root, const char* list, const char* inner,
                      const std::string& name, const std::filesystem::path& file) {
  const YAML::Node entries = root[list];
  if (entries && entries.IsSequence()) {
    for (const auto& entry : entries) {
      if (entry["name"] && entry["name"].as<std::string>() == name) {
        if (!entry[inner]) break;
        return entry[inner];
      }
    }
  }
  throw std::runtime_error("kubeconfig " + file.string() + ": no " + inner + " named \"" + name +
                           "\" in " + list);
}

std::string Scalar(const YAML::Node& node, const char* key) {
  const YAML::Node value = node[key];
  return value && value.IsScalar() ? value.as<std::string>() : std::string();
}

std::string ResolvePath(const std::string& value, const std::filesystem::path& kubeconfig) {
  if (value.empty()) return value;
  std::filesystem::path path(value);
  if (path.is_relative()) path = kubeconfig.parent_path() / path;
  return path.string();
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string DecodeBase64(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int bit_count = 0;
  for (char c : text) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
    int value = Base64Value(c);
    if (value < 0) throw std::invalid_argument("invalid base64 character");
    bits = (bits << 6) | static_cast<uint32_t>(value);
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      out.push_back(static_cast<char>((bits >> bit_count) & 0xFF));
    }
  }
  return out;
}

ClusterConfig LoadInClusterConfig(const InClusterPaths& paths, const EnvLookup& env) {
  auto host = env("KUBERNETES_SERVICE_HOST");
  auto port = env("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty())
    throw std::runtime_error(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be "
        "set (pass --kubeconfig to run outside a cluster)");
  ClusterConfig config;
  // IPv6 service addresses need brackets in a URL.
  bool ipv6 = host->find(':') != std::string::npos;
  config.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  if (!ReadFileCapped(paths.token))
    throw std::runtime_error("service-account token " + paths.token.string() +
                             " cannot be read: is automountServiceAccountToken disabled?");
  config.token_file = paths.token.string();
  config.ca_file = paths.ca.string();
  config.namespace_name = ReadTrimmed(paths.namespace_file).value_or("");
  return config;
}

ClusterConfig LoadKubeconfig(const std::filesystem::path& path, std::string_view context) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& error) {
    throw std::runtime_error("kubeconfig " + path.string() + ": " + error.what());
  }
  std::string context_name(context);
  if (context_name.empty()) context_name = Scalar(root, "current-context");
  if (context_name.empty())
    throw std::runtime_error("kubeconfig " + path.string() +
                             ": no current-context and no context given");
  const YAML::Node context_entry = NamedEntry(root, "contexts", "context", context_name, path);
  const YAML::Node cluster =
      NamedEntry(root, "clusters", "cluster", Scalar(context_entry, "cluster"), path);

  ClusterConfig config;
  config.server = Scalar(cluster, "server");
  if (config.server.empty())
    throw std::runtime_error("kubeconfig " + path.string() + ": cluster \"" +
                             Scalar(context_entry, "cluster") + "\" has no server");
  while (!config.server.empty() && config.server.back() == '/') config.server.pop_back();
  config.namespace_name = Scalar(context_entry, "namespace");
  config.insecure_skip_tls_verify = Scalar(cluster, "insecure-skip-tls-verify") == "true";
  config.ca_file = ResolvePath(Scalar(cluster, "certificate-authority"), path);
  try {
    config.ca_pem = DecodeBase64(Scalar(cluster, "certificate-authority-data"));
    std::string user_name = Scalar(context_entry, "user");
    if (!user_name.empty()) {
      const YAML::Node user = NamedEntry(root, "users", "user", user_name, path);
      config.token = Scalar(user, "token");
      config.token_file = ResolvePath(Scalar(user, "tokenFile"), path);
      config.client_cert_file = ResolvePath(Scalar(user, "client-certificate"), path);
      config.client_cert_pem = DecodeBase64(Scalar(user, "client-certificate-data"));
      config.client_key_file = ResolvePath(Scalar(user, "client-key"), path);
      config.client_key_pem = DecodeBase64(Scalar(user, "client-key-data"));
      if (user["exec"] || user["auth-provider"])
        throw std::runtime_error("kubeconfig " + path.string() + ": user \"" + user_name +
                                 "\" uses exec/auth-provider credentials, which dranet does not "
                                 "run; use a token, tokenFile or client certificate");
    }
  } catch (const std::invalid_argument&) {
    throw std::runtime_error("kubeconfig " + path.string() + ": a *-data field is not base64");
  }
  return config;
}

}  // namespace dranet::kube
