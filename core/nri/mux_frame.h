#pragma once
// core/nri/mux_frame.h — the NRI connection multiplexer (containerd/nri
// pkg/net/multiplex), which carries two ttRPC connections over one socket.
//
// Hand-written because the multiplexer only exists in Go. Frame: 8-byte
// big-endian header (connection id u32, payload length u32) then the payload.
// Connection 1 carries the Plugin service (runtime calls plugin), connection
// 2 the Runtime service (plugin calls runtime). See containerd/nri pkg/net/multiplex.
//
// Sending follows the Go peers exactly, because a Go reader fails on a frame
// larger than its 4096-byte read buffer unless it is the first frame of a
// message: a message of at most 4096 bytes goes in one frame; a longer one
// as a 4096-byte frame followed by the rest, cut at kMuxMaxPayload. Bytes of
// two ttRPC messages never share a frame.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dranet::nri {

inline constexpr std::size_t kMuxHeaderBytes = 8;
inline constexpr std::uint32_t kPluginServiceConn = 1;
inline constexpr std::uint32_t kRuntimeServiceConn = 2;
// 10-byte ttRPC header + 4 MiB ttRPC message limit.
inline constexpr std::uint32_t kMuxMaxPayload = 10 + (4u << 20);
// The read buffer size of the Go ttRPC reader on the other side.
inline constexpr std::size_t kMuxFirstFrameBytes = 4096;

// Raised for a frame no peer may send (too long); the trunk must be closed.
class MuxProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Frames `message` (one whole ttRPC message) for `conn_id`, following the
// sending rule above. The result is written to the socket in one go.
std::string EncodeMuxFrames(std::uint32_t conn_id, std::string_view message);

// Reassembles frames from the socket byte stream and hands each payload to
// the sink with its connection id. Frame boundaries mean nothing to the
// receiver; the sink appends to that connection's byte stream. Not
// thread-safe (one reader thread).
class MuxDecoder {
 public:
  using Sink = std::function<void(std::uint32_t conn_id, std::string_view payload)>;
  explicit MuxDecoder(Sink sink) : sink_(std::move(sink)) {}

  // Throws MuxProtocolError for a frame longer than kMuxMaxPayload.
  void Feed(std::string_view bytes);
  // Bytes that bring a new decoder to this one's state when fed to it: the
  // partial header, or a header for the rest of the frame being read.
  std::string Replay() const;

 private:
  Sink sink_;
  std::uint8_t header_[kMuxHeaderBytes] = {};
  std::size_t header_fill_ = 0;
  bool in_payload_ = false;
  std::uint32_t conn_ = 0;
  std::uint32_t left_ = 0;
};

}  // namespace dranet::nri
