#include "inject/cdi_spec.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "base/files.h"
#include "inject/pod_netns_applier.h"

namespace dranet::inject {
namespace {

// CDI device names: [A-Za-z0-9][A-Za-z0-9_.:-]*
bool ValidCdiName(const std::string& name) {
  if (name.empty() || !std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':' || c == '-';
  });
}

}  // namespace

std::string CdiSpecPath(const std::string& claim_uid, const std::string& cdi_dir) {
  return (std::filesystem::path(cdi_dir) / ("dra.net_rdma-" + claim_uid + ".json")).string();
}

std::string RenderCdiSpec(const ClaimPlan& plan) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("cdiVersion");
  w.String(kCdiVersion);
  w.Key("kind");
  w.String(kCdiKind);
  w.Key("devices");
  w.StartArray();
  w.StartObject();
  w.Key("name");
  w.String(plan.claim_uid.c_str());
  w.Key("containerEdits");
  w.StartObject();
  w.Key("deviceNodes");
  w.StartArray();
  for (const auto& node : plan.device_nodes) {
    w.StartObject();
    w.Key("path");
    w.String(node.container_path.c_str());
    if (!node.host_path.empty() && node.host_path != node.container_path) {
      w.Key("hostPath");
      w.String(node.host_path.c_str());
    }
    w.Key("type");
    w.String("c");
    w.Key("major");
    w.Int64(node.major);
    w.Key("minor");
    w.Int64(node.minor);
    w.Key("fileMode");
    w.Uint(node.file_mode);
    w.Key("permissions");
    w.String(node.permissions.c_str());
    w.Key("uid");
    w.Uint(0);
    w.Key("gid");
    w.Uint(0);
    w.EndObject();
  }
  w.EndArray();
  w.Key("env");
  w.StartArray();
  for (const auto& [key, value] : plan.env) w.String((key + "=" + value).c_str());
  w.EndArray();
  w.EndObject();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

std::vector<std::string> WriteCdiSpec(const ClaimPlan& plan, const std::string& cdi_dir) {
  if (plan.device_nodes.empty() && plan.env.empty()) return {};
  if (!ValidCdiName(plan.claim_uid)) {
    throw InjectError("claim " + plan.claim_namespace + "/" + plan.claim_name + ": UID \"" +
                      plan.claim_uid + "\" is not a valid CDI device name");
  }
  std::error_code ec;
  std::filesystem::create_directories(cdi_dir, ec);
  if (ec) throw std::system_error(ec, "creating CDI directory " + cdi_dir);
  WriteFileAtomic(CdiSpecPath(plan.claim_uid, cdi_dir), RenderCdiSpec(plan));
  return {std::string(kCdiKind) + "=" + plan.claim_uid};
}

void RemoveCdiSpec(const std::string& claim_uid, const std::string& cdi_dir) {
  const auto path = CdiSpecPath(claim_uid, cdi_dir);
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec) throw std::system_error(ec, "removing CDI spec " + path);
}

}  // namespace dranet::inject
