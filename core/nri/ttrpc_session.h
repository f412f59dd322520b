#pragma once
// core/nri/ttrpc_session.h — one NRI trunk: a unix socket carrying the
// multiplexer, with a ttRPC server on one connection and a ttRPC client on
// the other. The plugin serves connection 1 and calls on connection 2; the
// runtime (tests/fakes/nri-runtime) the other way round.
//
// Hand-written (no C++ ttRPC exists). All RPCs are unary. One reader thread
// per session reads the socket, answers incoming requests by calling the
// handler inline, and completes outgoing calls. Hence a handler must never
// Call() on its own session (it would wait for a response only it can read).
// Call() and Close() are thread-safe.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "nri/mux_frame.h"
#include "nri/ttrpc_frame.h"
#include "nri/unix_socket.h"

namespace dranet::nri {

struct RpcStatus {
  RpcCode code = RpcCode::kOk;
  std::string message;
  bool ok() const { return code == RpcCode::kOk; }
};

struct RpcRequest {
  std::string service;  // "nri.pkg.api.v1alpha1.Plugin"
  std::string method;   // "Configure"
  std::string payload;  // encoded request message
  std::int64_t timeout_nano = 0;
};

struct RpcResult {
  RpcStatus status;
  std::string payload;  // encoded response message (when ok)
};

// Answers one request. Exceptions become INTERNAL errors.
using RpcHandler = std::function<RpcResult(const RpcRequest&)>;

// Where a session stood when another process gave it up
// (TtrpcSession::Detach()): a session resumed from it goes on as if it had
// read everything itself.
struct TtrpcResumption {
  std::string replay;                    // bytes read but not yet whole messages, fed first
  std::uint32_t next_stream = 1;         // the next call's stream id
  std::uint32_t last_served_stream = 0;  // the last request answered
};

class TtrpcSession {
 public:
  struct Roles {
    std::uint32_t serve_conn;  // connection whose requests we answer
    std::uint32_t call_conn;   // connection we send requests on
  };
  static constexpr Roles kPluginRoles{kPluginServiceConn, kRuntimeServiceConn};
  static constexpr Roles kRuntimeRoles{kRuntimeServiceConn, kPluginServiceConn};

  using Resumption = TtrpcResumption;
  struct Detached {
    UniqueFd socket;
    Resumption state;
  };

  // Takes the connected socket and starts the reader thread (named
  // `thread_name`, at most 15 characters); `resumed` when the socket comes
  // from another process's Detach().
  TtrpcSession(UniqueFd socket, Roles roles, RpcHandler handler, const std::string& thread_name,
               Resumption resumed = {});
  ~TtrpcSession();  // closes and joins the reader
  TtrpcSession(const TtrpcSession&) = delete;
  TtrpcSession& operator=(const TtrpcSession&) = delete;

  // A unary call; DEADLINE_EXCEEDED after `timeout`, UNAVAILABLE when the
  // session is or becomes closed. Never throws for peer behaviour.
  RpcResult Call(std::string_view service, std::string_view method, std::string payload,
                 std::chrono::milliseconds timeout);

  // Shuts the socket down (idempotent); pending calls fail with UNAVAILABLE.
  void Close(const std::string& reason);
  // True once closed, waiting at most `timeout`.
  bool WaitClosed(std::chrono::milliseconds timeout);
  bool closed() const;
  std::string close_reason() const;

  // Stops reading once what was read is handled (every whole request in it
  // answered) and gives up the socket, still open, with the state another
  // session resumes from; the peer sees nothing. The session is closed
  // afterwards ("handed over"). nullopt when it was closed already, or
  // closes meanwhile. Not from a handler (it waits for the reader).
  std::optional<Detached> Detach();

 private:
  struct Pending {
    bool done = false;
    RpcResult result;
  };

  void ReadLoop();
  void OnServeMessage(const TtrpcMessage& message);
  void OnCallMessage(const TtrpcMessage& message);
  void Send(std::uint32_t conn, const std::string& ttrpc_message);
  void SendLocked(std::uint32_t conn, const std::string& ttrpc_message);  // holds write_mu_
  void Reply(std::uint32_t stream_id, const RpcResult& result);

  UniqueFd fd_;
  UniqueFd wake_;  // eventfd: Detach() wakes the reader's poll
  Roles roles_;
  RpcHandler handler_;
  std::string replay_;  // fed by the reader before it reads
  TtrpcStreamDecoder serve_decoder_;
  TtrpcStreamDecoder call_decoder_;
  MuxDecoder mux_;
  std::uint32_t last_served_stream_ = 0;
  bool detaching_ = false;  // under mu_

  std::mutex write_mu_;  // one whole message per write
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  std::string close_reason_;
  std::uint32_t next_stream_ = 1;
  std::map<std::uint32_t, Pending> pending_;
  std::thread reader_;
};

// The reply for an unknown service or method, worded like ttRPC's.
RpcResult Unimplemented(const RpcRequest& request);

}  // namespace dranet::nri
