#pragma once
// core/kubelet/webhook_profile_provider.h — the profile provider behind
// `--profile-provider=webhook --webhook-url=<url>`: DRANET's webhook
// protocol, spoken over HTTP with libcurl.
//
//   GET  <url>/health                -> 200 {"cloudProvider":bool,"profileProvider":bool}
//   POST <url>/GetProfileConfig      {"device":{"mac_address","pci_address","name"},
//                                     "claim_uid":"...","config":{NetworkConfig}}
//                                    -> 200 with a NetworkConfig object
//   POST <url>/ReleaseProfileConfig  the same request -> 200
//
// Any other status fails the call with the status and the body the webhook
// answered (400 invalid config, 404 unknown profile, 409 conflict, 500
// temporary failure). `mac_address` and `pci_address` are left out when
// empty, as DRANET does.
//
// <url> is http://host:port[/base], https://host:port[/base] (verified
// against the system CA bundle), or unix:///path/to.sock (HTTP over a unix
// socket, "Host: localhost"). The webhook is reached directly: proxy
// environment variables do not apply to it.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "kubelet/profile_provider.h"

namespace dranet::kubelet {

struct WebhookProfileProviderOptions {
  // Limit on each request, connecting included (DRANET: 10 s).
  std::chrono::milliseconds call_timeout{10'000};
  // Connect keeps probing /health for this long while the webhook is
  // unreachable or answers a status other than 200 (DRANET: 5 s); the first
  // probe may take the whole call_timeout, later ones what is left, ...
  std::chrono::milliseconds health_retry_window{5'000};
  // ... waiting this long between probes (DRANET: 1 s).
  std::chrono::milliseconds health_retry_interval{1'000};
  // Larger answers fail the call. A NetworkConfig is at most
  // kMaxConfigBytes (network_config.h), which its parser enforces; this cap
  // only bounds what a misbehaving webhook can make dranetd buffer.
  std::size_t max_response_bytes = 64 * 1024;
};

// Checks `url`, then probes <url>/health until it answers 200 or the retry
// window ends, and returns a provider for it. Throws ProfileError naming the
// URL when the URL is malformed, the webhook stays unreachable (with the
// last failure), its health answer is not the capabilities object, or it
// says "profileProvider": false.
std::unique_ptr<ProfileProvider> ConnectWebhookProfileProvider(const std::string& url,
                                                               const WebhookProfileProviderOptions& options = {});

}  // namespace dranet::kubelet
