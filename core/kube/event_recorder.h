#pragma once
// core/kube/event_recorder.h — Kubernetes Events for failures a user must see.
//
// A failed prepare, a rejected claim config or a device that vanished is reported on the
// object the user looks at (the ResourceClaim or the Pod) as a core/v1 Event, so that
// `kubectl describe` shows it. Recording never throws: an Event that cannot be written is
// logged and dropped, it must not turn into a second failure.
//
// Thread-safety: Record() may be called concurrently.
#include <stop_token>
#include <string>

#include "base/log.h"
#include "kube/api_client.h"

namespace dranet::kube {

// The object an Event is about (core/v1 ObjectReference).
struct InvolvedObject {
  std::string api_version;  // "resource.k8s.io/v1", "v1"
  std::string kind;         // "ResourceClaim", "Pod", "Node"
  std::string namespace_name;  // empty for a cluster-scoped object: its Events go to "default"
  std::string name;
  std::string uid;
};

enum class EventType { kNormal, kWarning };

// The Event object, as JSON. `unique_suffix` makes the name unique (the apiserver has no
// generateName for Events in practice); `now` is RFC 3339.
std::string EventJson(const InvolvedObject& object, EventType type, const std::string& reason,
                      const std::string& message, const std::string& component,
                      const std::string& host, const std::string& now,
                      const std::string& unique_suffix);

class EventRecorder {
 public:
  // `component` is the reporting controller ("dra.net"), `host` the node name.
  EventRecorder(ApiClient& client, std::string component, std::string host, Logger& log);
  // Creates the Event; returns false (and logs) when that fails.
  bool Record(const InvolvedObject& object, EventType type, const std::string& reason,
              const std::string& message, std::stop_token stop = {}) noexcept;

 private:
  ApiClient& client_;
  std::string component_;
  std::string host_;
  Logger& log_;
};

}  // namespace dranet::kube
