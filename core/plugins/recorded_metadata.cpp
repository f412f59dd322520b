#include "plugins/recorded_metadata.h"

#include <algorithm>
#include <cctype>

#include "base/files.h"

namespace dranet::plugins {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool HasHeader(const std::vector<std::string>& headers, const std::string& name, const std::string& value) {
  for (const auto& h : headers) {
    auto colon = h.find(':');
    if (colon == std::string::npos) continue;
    std::string n = Lower(h.substr(0, colon));
    std::string v = h.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    if (n == Lower(name) && Lower(v) == Lower(value)) return true;
  }
  return false;
}

bool HasHeaderNamed(const std::vector<std::string>& headers, const std::string& name) {
  for (const auto& h : headers) {
    auto colon = h.find(':');
    if (colon != std::string::npos && Lower(h.substr(0, colon)) == Lower(name)) return true;
  }
  return false;
}

}  // namespace

HttpResult ReplayRecordedMetadata(const std::filesystem::path& snapshot_root, const HttpRequest& request) {
  const auto& headers = request.headers;
  if (request.method == "PUT") {
    // The session-token step of AWS IMDSv2 and of Alibaba's service.
    if (HasHeaderNamed(headers, "X-aws-ec2-metadata-token-ttl-seconds")) return {200, kRecordedAwsToken};
    if (HasHeaderNamed(headers, "X-aliyun-ecs-metadata-token-ttl-seconds")) return {200, kRecordedAlibabaToken};
    return {400, "PUT without a token TTL header"};
  }
  std::string cloud;
  if (HasHeader(headers, "Metadata", "true")) cloud = "azure";
  else if (HasHeader(headers, "Metadata-Flavor", "Google")) cloud = "gce";
  else if (HasHeader(headers, "X-aws-ec2-metadata-token", kRecordedAwsToken)) cloud = "aws";
  else if (HasHeader(headers, "Authorization", "Bearer Oracle")) cloud = "oci";
  else if (HasHeader(headers, "X-aliyun-ecs-metadata-token", kRecordedAlibabaToken)) cloud = "alibaba";
  else if (HasHeaderNamed(headers, "X-aws-ec2-metadata-token") || HasHeaderNamed(headers, "X-aliyun-ecs-metadata-token"))
    return {401, "token not issued by this service"};
  else return {400, "missing metadata header"};
  const std::string& url = request.url;
  auto scheme = url.find("://");
  auto path_start = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  std::string path = path_start == std::string::npos ? "/" : url.substr(path_start);
  if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
  if (path.find("..") != std::string::npos) return {400, "bad path"};
  if (path.empty() || path.back() == '/') path += "index";
  // Opened inside the snapshot: a recording that is a link cannot serve a
  // file from outside it.
  std::string file = "metadata/" + cloud + path;
  auto body = ReadFdCapped(RootDirectory(snapshot_root).Open(file.c_str(), kReadOpenFlags), 1 << 20);
  if (!body) return {404, "not recorded: " + path};
  return {200, std::move(*body)};
}

HttpFunction RecordedMetadataGetter(std::filesystem::path snapshot_root) {
  return [root = std::move(snapshot_root)](const HttpRequest& request) { return ReplayRecordedMetadata(root, request); };
}

}  // namespace dranet::plugins
