#pragma once
// core/nri/ttrpc_frame.h — ttRPC message framing (containerd/ttrpc protocol 1.2).
//
// Hand-written because no C++ ttRPC implementation exists; it is small on
// purpose: a 10-byte big-endian header (data length u32, stream id u32,
// message type u8, flags u8) followed by a protobuf ttrpc.Request or
// ttrpc.Response. See containerd/ttrpc PROTOCOL.md.
//
// TtrpcStreamDecoder turns one logical byte stream (a multiplexer connection)
// into whole messages: reads may split headers and payloads anywhere. A
// message whose declared length exceeds kTtrpcMaxMessageBytes is skipped
// without buffering and reported with `oversized` set, so the receiver can
// answer RESOURCE_EXHAUSTED as the Go implementation does. Not thread-safe:
// one decoder per connection, fed by one reader thread.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dranet::nri {

inline constexpr std::size_t kTtrpcHeaderBytes = 10;
inline constexpr std::uint32_t kTtrpcMaxMessageBytes = 4u << 20;  // 4 MiB of data

enum class TtrpcType : std::uint8_t { kRequest = 1, kResponse = 2, kData = 3 };

// gRPC status codes used on the wire.
enum class RpcCode : std::int32_t {
  kOk = 0,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kFailedPrecondition = 9,
  kResourceExhausted = 8,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
};

struct TtrpcHeader {
  std::uint32_t length = 0;     // data bytes after the header
  std::uint32_t stream_id = 0;  // odd for client-initiated streams
  std::uint8_t type = 0;        // TtrpcType
  std::uint8_t flags = 0;
};

// Encodes header + data into one buffer (what one mux write carries).
std::string EncodeTtrpcMessage(std::uint32_t stream_id, TtrpcType type, std::uint8_t flags,
                               std::string_view data);

// Reads a header from exactly kTtrpcHeaderBytes bytes.
TtrpcHeader DecodeTtrpcHeader(std::span<const std::uint8_t, kTtrpcHeaderBytes> bytes);

struct TtrpcMessage {
  TtrpcHeader header;
  std::string data;        // empty when oversized
  bool oversized = false;  // length > max: data was skipped
};

class TtrpcStreamDecoder {
 public:
  explicit TtrpcStreamDecoder(std::uint32_t max_message_bytes = kTtrpcMaxMessageBytes)
      : max_(max_message_bytes) {}

  // Appends bytes and returns every message completed by them, in order.
  std::vector<TtrpcMessage> Feed(std::string_view bytes);

  // Bytes buffered towards the next message (for tests).
  std::size_t pending_bytes() const { return header_fill_ + data_.size(); }
  // Bytes that bring a new decoder to this one's state when fed to it (a
  // connection handed to another process): the partial header, or the
  // header and the data so far (an oversized message's skipped part as
  // zeros).
  std::string Replay() const;

 private:
  std::uint32_t max_;
  std::uint8_t header_[kTtrpcHeaderBytes] = {};
  std::size_t header_fill_ = 0;
  bool have_header_ = false;
  TtrpcHeader current_{};
  std::string data_;
  std::uint32_t skip_left_ = 0;  // bytes still to discard of an oversized message
};

// Moves bytes from the front of `bytes` into `header` (of `size` bytes, `fill`
// already there) until it is full; true when full. Shared by both decoders.
bool FillHeader(std::uint8_t* header, std::size_t size, std::size_t& fill, std::string_view& bytes);

// Big-endian helpers shared by the mux and ttRPC codecs.
void PutBigEndian32(std::string& out, std::uint32_t v);
std::uint32_t GetBigEndian32(const std::uint8_t* p);

}  // namespace dranet::nri
