#pragma once
// core/daemon/handover.h — passing the node's live connections from one
// dranetd to the next: a DaemonSet rollout with surge runs the old and the
// new pod side by side for a while, and the runtime must never see the
// driver's NRI plugin go away (a pod started in that gap runs without its
// devices) nor two of them at once (both would move the same netdev and
// inject the same device nodes: the runtime fails the pod).
//
// The holder (the instance that runs the node: the NRI connection and the
// status port) listens on <state-dir>/handover.sock. A successor that starts
// while it runs connects and says hello; the holder gives it the status
// port's listening socket at once, so the successor answers the kubelet's
// probes and can become Ready (the holder stops accepting there: both pods
// share the host's network), and keeps the connection. When the holder is
// stopped (SIGTERM: the rollout deletes it once the successor is Ready), it
// answers every NRI request it has read, hands over the NRI connection, still
// open, with what it knew (HandOverNri) and exits; the successor resumes it
// and becomes the holder. One successor at a time; a second is turned away.
// A successor that finds nobody listening starts on its own; a holder whose
// successor goes away before the NRI hand-over takes the status port back.
//
// Messages, either way: u32 JSON length and u32 blob length (big endian),
// the JSON object, the blob; file descriptors travel with the first byte
// (SCM_RIGHTS).
//   successor -> holder  {"type":"hello","pid":N}
//   holder -> successor  {"type":"status","listener":bool}  + the status port's socket
//   holder -> successor  {"type":"nri","connected":bool,"nextStream":N,"lastServedStream":N,
//                         "pods":{"<pod uid>":"<netns path>"}}  + the NRI socket, blob: ttRPC replay
//   successor -> holder  {"type":"ack"}
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/unique_fd.h"
#include "nri/nri_plugin.h"

namespace dranet::daemon {

inline constexpr char kHandoverSocketName[] = "handover.sock";

// One message of the hand-over protocol.
struct HandoverMessage {
  std::string json;
  std::string blob;
  std::vector<UniqueFd> fds;
};
// Sends `json`, `blob` and `fds` (borrowed) on a connected unix socket.
// Throws std::system_error.
void SendHandoverMessage(int socket, const std::string& json, const std::string& blob, const std::vector<int>& fds);
// Receives one message, waiting at most `timeout` for each part; nullopt when
// the peer closed or went silent. Throws std::runtime_error for a malformed
// one (too long, or more than 4 file descriptors).
std::optional<HandoverMessage> ReceiveHandoverMessage(int socket, std::chrono::milliseconds timeout);

class HandoverServer {
 public:
  struct Hooks {
    // At a successor's hello: the status port's listening socket, which this
    // instance no longer accepts on (invalid: none to give).
    std::function<UniqueFd()> give_status_listener;
    // The successor went away before the NRI hand-over: take the port back.
    std::function<void()> successor_gone;
  };

  HandoverServer(std::filesystem::path socket_path, Hooks hooks, Logger& log);
  ~HandoverServer();  // Stop()
  HandoverServer(const HandoverServer&) = delete;
  HandoverServer& operator=(const HandoverServer&) = delete;

  // Listens (replacing the file) and starts the thread ("handover") that
  // greets successors. Throws std::system_error.
  void Start();
  bool has_successor() const;
  // Stops greeting, sends `nri` (nullopt: no live connection; the successor
  // connects by itself) to the successor and waits up to `timeout` for its
  // ack. False when there is none or the message did not get through.
  bool HandOverNri(std::optional<nri::NriHandover> nri, std::chrono::milliseconds timeout);
  // Closes everything; removes the socket file unless another made it anew.
  void Stop();

 private:
  void Run();
  void Greet(UniqueFd conn);
  void StopThread();
  // Closes the listening socket and removes its file unless another
  // instance made it anew (under mu_).
  void CloseListener();

  std::filesystem::path path_;
  Hooks hooks_;
  Logger& log_;
  UniqueFd listener_;
  ino_t inode_ = 0;
  UniqueFd wake_;  // eventfd: StopThread()
  mutable std::mutex mu_;
  UniqueFd successor_;
  bool stopping_ = false;
  std::thread thread_;
};

class HandoverClient {
 public:
  // Connects to a holder at `socket_path` and says hello; nullptr when none
  // answers (no file, refused, or no greeting within `timeout`).
  static std::unique_ptr<HandoverClient> Connect(const std::filesystem::path& socket_path, Logger& log,
                                                 std::chrono::milliseconds timeout);
  ~HandoverClient();

  // The status port's socket the holder gave (invalid when it had none);
  // once.
  UniqueFd TakeStatusListener() { return std::move(status_listener_); }
  // Blocks until the holder hands over its NRI connection (acknowledged
  // here). nullopt when it had no live one, went away without it, or
  // Cancel(): then this instance connects by itself.
  std::optional<nri::NriHandover> WaitForNri();
  // From another thread: WaitForNri returns nullopt.
  void Cancel();

 private:
  HandoverClient(UniqueFd conn, Logger& log);
  UniqueFd conn_;
  UniqueFd cancel_;  // eventfd
  UniqueFd status_listener_;
  Logger& log_;
};

}  // namespace dranet::daemon
