#include "nri/nri_plugin.h"

#include <pthread.h>

#include <algorithm>
#include <random>
#include <system_error>

#include "nri/proto/nri.pb.h"
#include "nri/ttrpc_session.h"

namespace dranet::nri {

NriPlugin::NriPlugin(Options options, state::PreparedClaims& claims,
                     inject::PodNetnsApplier& applier, Logger& log)
    : options_(std::move(options)),
      log_(log),
      service_(
          claims, applier, log,
          [this] {
            if (options_.on_state_change) options_.on_state_change();
          },
          [this] {
            {
              std::lock_guard lock(mu_);
              netns_wake_ = true;
            }
            cv_.notify_all();
            if (options_.on_pods_held) options_.on_pods_held();
          }) {
  service_.SetBypassReporter(options_.bypass_reporter);
  service_.SetPodNetworkReporter(options_.network_reporter);
  service_.SetRestoreFailureReporter(options_.restore_failure_reporter);
  service_.SetOperationObserver(options_.observer);
}

NriPlugin::~NriPlugin() { Stop(); }

void NriPlugin::Start() { StartLoop(std::nullopt); }

void NriPlugin::Start(NriHandover handed) { StartLoop(std::move(handed)); }

void NriPlugin::StartLoop(std::optional<NriHandover> handed) {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this, handed = std::make_shared<std::optional<NriHandover>>(std::move(handed))] {
    RunLoop(std::move(*handed));
  });
  pthread_setname_np(thread_.native_handle(), "nri-client");
  netns_thread_ = std::thread([this] { WatchNetns(); });
  pthread_setname_np(netns_thread_.native_handle(), "nri-netns");
}

// Checks kept pod namespaces every netns_check_period while there are any;
// with none (a node whose pods have no netdevs) it sleeps until the service
// says its state changed (a pod attached or adopted) or Stop().
void NriPlugin::WatchNetns() {
  for (;;) {
    const bool holding = service_.HoldsPods();  // the applier's lock, not ours
    {
      std::unique_lock lock(mu_);
      auto woken = [&] { return stopping_ || netns_wake_; };
      if (holding) {
        cv_.wait_for(lock, options_.netns_check_period, woken);
      } else {
        cv_.wait(lock, woken);
      }
      if (stopping_) return;
      netns_wake_ = false;
    }
    service_.ReleaseVanishedPods();
  }
}

void NriPlugin::Stop() {
  std::thread worker, watcher;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (session_) session_->Close("plugin stopping");
    worker = std::move(thread_);
    watcher = std::move(netns_thread_);
  }
  cv_.notify_all();
  if (worker.joinable()) worker.join();
  if (watcher.joinable()) watcher.join();
}

std::optional<NriHandover> NriPlugin::HandOver() {
  std::shared_ptr<TtrpcSession> session;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;  // the loop does not reconnect once the session is gone
    if (ConnectedLocked()) session = session_;
  }
  cv_.notify_all();
  std::optional<TtrpcSession::Detached> detached;
  if (session) detached = session->Detach();  // waits for the request being answered
  Stop();
  if (!detached) return std::nullopt;
  return NriHandover{std::move(detached->socket), std::move(detached->state), service_.KnownPods()};
}

bool NriPlugin::ConnectedLocked() const {
  return registered_ && session_ && !session_->closed() && service_.configured();
}

bool NriPlugin::connected() const {
  std::lock_guard lock(mu_);
  return ConnectedLocked();
}

bool NriPlugin::WaitConnected(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return ConnectedLocked(); });
}

bool NriPlugin::WaitBackoff(std::chrono::milliseconds delay) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, delay, [&] { return stopping_; });
}

bool NriPlugin::Serve(const std::shared_ptr<TtrpcSession>& session) {
  while (!session->WaitClosed(std::chrono::hours(1))) {
  }
  const std::string reason = session->close_reason();
  if (reason == "handed over") {
    log_.Info("NRI connection handed over to the next instance");
    return true;
  }
  log_.Warning("NRI connection closed, reconnecting", {{"reason", reason}});
  return false;
}

void NriPlugin::RunLoop(std::optional<NriHandover> handed) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  auto backoff = options_.initial_backoff;
  bool outage_logged = false;

  if (handed) {
    // Registered and configured by the runtime already: no RegisterPlugin,
    // and the runtime sends neither Configure nor Synchronize again.
    auto session = std::make_shared<TtrpcSession>(
        std::move(handed->socket), TtrpcSession::kPluginRoles,
        [this](const RpcRequest& r) { return service_.Handle(r); }, "nri-conn", std::move(handed->session));
    service_.AdoptHandedOver(handed->pods);
    connections_.fetch_add(1);
    {
      std::lock_guard lock(mu_);
      session_ = session;
      registered_ = !stopping_;
    }
    cv_.notify_all();
    if (options_.on_state_change) options_.on_state_change();
    const bool handed_on = Serve(session);
    {
      std::lock_guard lock(mu_);
      registered_ = false;
      session_.reset();
    }
    session.reset();
    if (options_.on_state_change) options_.on_state_change();
    if (handed_on) return;
  }

  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    std::shared_ptr<TtrpcSession> session;
    try {
      UniqueFd fd = ConnectUnixSocket(options_.socket_path);
      service_.ResetConnection();
      session = std::make_shared<TtrpcSession>(
          std::move(fd), TtrpcSession::kPluginRoles,
          [this](const RpcRequest& r) { return service_.Handle(r); },
          "nri-conn");
    } catch (const std::system_error& e) {
      if (!outage_logged) {
        log_.Warning("NRI runtime not reachable, retrying", {{"socket", options_.socket_path},
                                                            {"error", e.what()}});
        outage_logged = true;
      }
    }
    if (session) {
      {
        std::lock_guard lock(mu_);
        if (stopping_) return;
        session_ = session;
      }
      api::RegisterPluginRequest reg;
      reg.set_plugin_name(options_.plugin_name);
      reg.set_plugin_idx(options_.plugin_index);
      const auto result = session->Call(kRuntimeService, "RegisterPlugin", reg.SerializeAsString(),
                                        options_.registration_timeout);
      if (result.status.ok()) {
        // Logged and counted before anyone waiting for connected() is woken.
        log_.Info("NRI plugin registered", {{"socket", options_.socket_path},
                                            {"plugin", options_.plugin_index + "-" + options_.plugin_name}});
        connections_.fetch_add(1);
        outage_logged = false;
        backoff = options_.initial_backoff;
        {
          std::lock_guard lock(mu_);
          registered_ = true;
        }
        cv_.notify_all();
        if (options_.on_state_change) options_.on_state_change();
        if (Serve(session)) {
          std::lock_guard lock(mu_);
          registered_ = false;
          session_.reset();
          return;  // the thread that handed it over joins this one
        }
      } else {
        log_.Error("NRI plugin registration failed", {{"socket", options_.socket_path},
                                                      {"code", static_cast<int>(result.status.code)},
                                                      {"error", result.status.message}});
        session->Close("registration failed");
      }
      {
        std::lock_guard lock(mu_);
        registered_ = false;
        session_.reset();
      }
      session.reset();  // joins the reader: a running hook finishes first
      if (options_.on_state_change) options_.on_state_change();
    }
    const auto wait = std::chrono::milliseconds(
        static_cast<std::int64_t>(static_cast<double>(backoff.count()) * jitter(rng)));
    if (!WaitBackoff(wait)) return;
    backoff = std::min(options_.max_backoff, backoff * 2);
  }
}

}  // namespace dranet::nri
