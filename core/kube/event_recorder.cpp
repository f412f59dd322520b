// core/kube/event_recorder.cpp — core/v1 Event creation.
#include "kube/event_recorder.h"

#include <chrono>
#include <cstdio>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "kube/claim_status.h"  // NowRfc3339

namespace dranet::kube {
namespace {

// Event messages are capped by the API server; keep ours well inside.
constexpr std::size_t kMaxMessageBytes = 1024;

// An Event lives in its object's namespace. A cluster-scoped object (a Node) has none, and
// Kubernetes records its Events in "default", as client-go's recorder does; the involved
// object keeps its empty namespace.
const std::string& EventNamespace(const InvolvedObject& object) {
  static const std::string kDefaultNamespace = "default";
  return object.namespace_name.empty() ? kDefaultNamespace : object.namespace_name;
}

}  // namespace

std::string EventJson(const InvolvedObject& object, EventType type, const std::string& reason,
                      const std::string& message, const std::string& component,
                      const std::string& host, const std::string& now,
                      const std::string& unique_suffix) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  auto field = [&writer](const char* key, const std::string& value) {
    writer.Key(key);
    writer.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
  };
  writer.StartObject();
  field("apiVersion", "v1");
  field("kind", "Event");
  writer.Key("metadata");
  writer.StartObject();
  field("name", object.name + "." + unique_suffix);
  field("namespace", EventNamespace(object));
  writer.EndObject();
  writer.Key("involvedObject");
  writer.StartObject();
  field("apiVersion", object.api_version);
  field("kind", object.kind);
  field("namespace", object.namespace_name);
  field("name", object.name);
  if (!object.uid.empty()) field("uid", object.uid);
  writer.EndObject();
  field("type", type == EventType::kWarning ? "Warning" : "Normal");
  field("reason", reason);
  field("message", message.size() > kMaxMessageBytes ? message.substr(0, kMaxMessageBytes) : message);
  writer.Key("source");
  writer.StartObject();
  field("component", component);
  field("host", host);
  writer.EndObject();
  field("reportingComponent", component);
  field("reportingInstance", host);
  field("firstTimestamp", now);
  field("lastTimestamp", now);
  writer.Key("count");
  writer.Int(1);
  writer.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

EventRecorder::EventRecorder(ApiClient& client, std::string component, std::string host, Logger& log)
    : client_(client), component_(std::move(component)), host_(std::move(host)), log_(log) {}

bool EventRecorder::Record(const InvolvedObject& object, EventType type, const std::string& reason,
                           const std::string& message, std::stop_token stop) noexcept {
  try {
    // client-go names events <object>.<hex nanoseconds>; unique enough per object.
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, "%llx",
                  static_cast<unsigned long long>(
                      std::chrono::system_clock::now().time_since_epoch().count()));
    client_.Create(NamespacedPath("/api/v1", EventNamespace(object), "events"),
                   EventJson(object, type, reason, message, component_, host_, NowRfc3339(), suffix),
                   stop);
    return true;
  } catch (const std::exception& error) {
    log_.Warning("could not record Event",
                 {{"object", object.kind + " " + object.namespace_name + "/" + object.name},
                  {"reason", reason}, {"error", error.what()}});
    return false;
  }
}

}  // namespace dranet::kube
