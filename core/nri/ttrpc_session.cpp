#include "nri/ttrpc_session.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <system_error>
#include <utility>

#include "nri/proto/ttrpc.pb.h"

namespace dranet::nri {

TtrpcSession::TtrpcSession(UniqueFd socket, Roles roles, RpcHandler handler,
                           const std::string& thread_name, Resumption resumed)
    : fd_(std::move(socket)),
      wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      roles_(roles),
      handler_(std::move(handler)),
      replay_(std::move(resumed.replay)),
      mux_([this](std::uint32_t conn, std::string_view bytes) {
        if (conn == roles_.serve_conn) {
          for (const auto& m : serve_decoder_.Feed(bytes)) OnServeMessage(m);
        } else if (conn == roles_.call_conn) {
          for (const auto& m : call_decoder_.Feed(bytes)) OnCallMessage(m);
        }  // other connection ids are dropped, as the Go multiplexer does
      }),
      last_served_stream_(resumed.last_served_stream),
      next_stream_(resumed.next_stream) {
  if (!wake_.valid()) throw std::system_error(errno, std::generic_category(), "eventfd");
  reader_ = std::thread([this] { ReadLoop(); });
  pthread_setname_np(reader_.native_handle(), thread_name.substr(0, 15).c_str());
}

TtrpcSession::~TtrpcSession() {
  Close("session destroyed");
  if (reader_.joinable()) reader_.join();
}

void TtrpcSession::Close(const std::string& reason) {
  std::lock_guard lock(mu_);
  if (closed_) return;
  closed_ = true;
  close_reason_ = reason;
  ::shutdown(fd_.get(), SHUT_RDWR);  // wakes the reader; the fd is closed after join
  cv_.notify_all();
}

bool TtrpcSession::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

std::string TtrpcSession::close_reason() const {
  std::lock_guard lock(mu_);
  return close_reason_;
}

bool TtrpcSession::WaitClosed(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return closed_; });
}

void TtrpcSession::Send(std::uint32_t conn, const std::string& ttrpc_message) {
  std::lock_guard lock(write_mu_);
  SendLocked(conn, ttrpc_message);
}

void TtrpcSession::SendLocked(std::uint32_t conn, const std::string& ttrpc_message) {
  const std::string frames = EncodeMuxFrames(conn, ttrpc_message);
  std::size_t off = 0;
  while (off < frames.size()) {
    const ssize_t n = ::send(fd_.get(), frames.data() + off, frames.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Close(std::string("write failed: ") + std::strerror(errno));
      return;
    }
    off += static_cast<std::size_t>(n);
  }
}

RpcResult TtrpcSession::Call(std::string_view service, std::string_view method,
                             std::string payload, std::chrono::milliseconds timeout) {
  ::ttrpc::Request request;
  request.set_service(std::string(service));
  request.set_method(std::string(method));
  request.set_payload(std::move(payload));
  request.set_timeout_nano(std::chrono::nanoseconds(timeout).count());
  const std::string body = request.SerializeAsString();
  std::uint32_t stream;
  {
    // Stream ids must reach the peer in increasing order: allocate and
    // send under the write lock.
    std::lock_guard write_lock(write_mu_);
    {
      std::lock_guard lock(mu_);
      if (closed_) return {{RpcCode::kUnavailable, "connection closed: " + close_reason_}, {}};
      stream = next_stream_;
      next_stream_ += 2;
      pending_[stream] = Pending{};
    }
    SendLocked(roles_.call_conn, EncodeTtrpcMessage(stream, TtrpcType::kRequest, 0, body));
  }

  std::unique_lock lock(mu_);
  const bool finished = cv_.wait_for(lock, timeout, [&] { return pending_[stream].done || closed_; });
  Pending entry = std::move(pending_[stream]);
  pending_.erase(stream);
  if (entry.done) return std::move(entry.result);
  if (!finished) {
    return {{RpcCode::kDeadlineExceeded,
             std::string(method) + " got no answer within " + std::to_string(timeout.count()) + " ms"},
            {}};
  }
  return {{RpcCode::kUnavailable, "connection closed: " + close_reason_}, {}};
}

void TtrpcSession::Reply(std::uint32_t stream_id, const RpcResult& result) {
  ::ttrpc::Response response;
  if (!result.status.ok()) {
    response.mutable_status()->set_code(static_cast<std::int32_t>(result.status.code));
    response.mutable_status()->set_message(result.status.message);
  } else {
    response.set_payload(result.payload);
  }
  Send(roles_.serve_conn,
       EncodeTtrpcMessage(stream_id, TtrpcType::kResponse, 0, response.SerializeAsString()));
}

void TtrpcSession::OnServeMessage(const TtrpcMessage& message) {
  const auto& h = message.header;
  if (h.type != static_cast<std::uint8_t>(TtrpcType::kRequest)) {
    Close("protocol error: message type " + std::to_string(h.type) + " on the served connection");
    return;
  }
  if (h.stream_id % 2 == 0 || h.stream_id <= last_served_stream_) {
    Close("protocol error: stream id " + std::to_string(h.stream_id) + " reused or not odd");
    return;
  }
  last_served_stream_ = h.stream_id;
  if (message.oversized) {
    Reply(h.stream_id, {{RpcCode::kResourceExhausted,
                         "message length " + std::to_string(h.length) + " exceeds maximum message size " +
                             std::to_string(kTtrpcMaxMessageBytes)},
                        {}});
    return;
  }
  ::ttrpc::Request request;
  if (!request.ParseFromString(message.data)) {
    Reply(h.stream_id, {{RpcCode::kInvalidArgument, "malformed ttrpc request"}, {}});
    return;
  }
  RpcRequest in{request.service(), request.method(), request.payload(), request.timeout_nano()};
  RpcResult out;
  try {
    out = handler_(in);
  } catch (const std::exception& e) {
    out = {{RpcCode::kInternal, e.what()}, {}};
  }
  Reply(h.stream_id, out);
}

void TtrpcSession::OnCallMessage(const TtrpcMessage& message) {
  const auto& h = message.header;
  if (h.type != static_cast<std::uint8_t>(TtrpcType::kResponse)) {
    Close("protocol error: message type " + std::to_string(h.type) + " on the calling connection");
    return;
  }
  RpcResult result;
  if (message.oversized) {
    result.status = {RpcCode::kResourceExhausted, "response exceeds maximum message size"};
  } else {
    ::ttrpc::Response response;
    if (!response.ParseFromString(message.data)) {
      result.status = {RpcCode::kInternal, "malformed ttrpc response"};
    } else if (response.has_status() && response.status().code() != 0) {
      result.status = {static_cast<RpcCode>(response.status().code()), response.status().message()};
    } else {
      result.payload = response.payload();
    }
  }
  std::lock_guard lock(mu_);
  auto it = pending_.find(h.stream_id);
  if (it == pending_.end()) return;  // the caller gave up (deadline)
  it->second.done = true;
  it->second.result = std::move(result);
  cv_.notify_all();
}

std::optional<TtrpcSession::Detached> TtrpcSession::Detach() {
  {
    std::lock_guard lock(mu_);
    if (closed_) return std::nullopt;
    detaching_ = true;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t woken = ::write(wake_.get(), &one, sizeof(one));
  if (reader_.joinable()) reader_.join();
  std::lock_guard write_lock(write_mu_);
  std::lock_guard lock(mu_);
  if (closed_) return std::nullopt;  // the peer closed, or an error, before the reader stopped
  Detached out;
  // Each connection's partial message as a frame of its own, then the
  // frame being read: fed in this order they rebuild both decoders.
  for (const auto& [conn, pending] : {std::pair{roles_.serve_conn, serve_decoder_.Replay()},
                                      std::pair{roles_.call_conn, call_decoder_.Replay()}})
    if (!pending.empty()) out.state.replay += EncodeMuxFrames(conn, pending);
  out.state.replay += mux_.Replay();
  out.state.next_stream = next_stream_;
  out.state.last_served_stream = last_served_stream_;
  out.socket = std::move(fd_);
  closed_ = true;
  close_reason_ = "handed over";
  cv_.notify_all();
  return out;
}

void TtrpcSession::ReadLoop() {
  try {
    if (!replay_.empty()) mux_.Feed(std::exchange(replay_, {}));
  } catch (const MuxProtocolError& e) {
    Close(std::string("protocol error: ") + e.what());
    return;
  }
  std::string buf(64 * 1024, '\0');
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (closed_ || detaching_) return;
    }
    pollfd fds[2] = {{fd_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      Close(std::string("poll failed: ") + std::strerror(errno));
      break;
    }
    if (fds[1].revents & POLLIN) continue;  // Detach(): seen at the top
    const ssize_t n = ::read(fd_.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Close(n == 0 ? "peer closed the connection" : std::string("read failed: ") + std::strerror(errno));
      break;
    }
    try {
      mux_.Feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
    } catch (const MuxProtocolError& e) {
      Close(std::string("protocol error: ") + e.what());
      break;
    }
  }
}

RpcResult Unimplemented(const RpcRequest& request) {
  return {{RpcCode::kUnimplemented, "method " + request.method + " not implemented by service " +
                                        request.service},
          {}};
}

}  // namespace dranet::nri
