#include "nri/mux_frame.h"

#include <algorithm>

#include "nri/ttrpc_frame.h"

namespace dranet::nri {
namespace {

void AppendFrame(std::string& out, std::uint32_t conn_id, std::string_view payload) {
  PutBigEndian32(out, conn_id);
  PutBigEndian32(out, static_cast<std::uint32_t>(payload.size()));
  out.append(payload);
}

}  // namespace

std::string EncodeMuxFrames(std::uint32_t conn_id, std::string_view message) {
  std::string out;
  out.reserve(message.size() + 2 * kMuxHeaderBytes);
  if (message.size() <= kMuxFirstFrameBytes) {
    AppendFrame(out, conn_id, message);
    return out;
  }
  AppendFrame(out, conn_id, message.substr(0, kMuxFirstFrameBytes));
  message.remove_prefix(kMuxFirstFrameBytes);
  while (!message.empty()) {
    const auto n = std::min<std::size_t>(message.size(), kMuxMaxPayload);
    AppendFrame(out, conn_id, message.substr(0, n));
    message.remove_prefix(n);
  }
  return out;
}

std::string MuxDecoder::Replay() const {
  std::string out;
  if (in_payload_) {
    PutBigEndian32(out, conn_);
    PutBigEndian32(out, left_);
  } else {
    out.assign(reinterpret_cast<const char*>(header_), header_fill_);
  }
  return out;
}

void MuxDecoder::Feed(std::string_view bytes) {
  while (!bytes.empty()) {
    if (!in_payload_) {
      if (!FillHeader(header_, kMuxHeaderBytes, header_fill_, bytes)) return;
      header_fill_ = 0;
      conn_ = GetBigEndian32(header_);
      left_ = GetBigEndian32(header_ + 4);
      if (left_ > kMuxMaxPayload) {
        throw MuxProtocolError("multiplexer frame of " + std::to_string(left_) +
                               " bytes exceeds the limit of " + std::to_string(kMuxMaxPayload));
      }
      in_payload_ = left_ > 0;
      continue;
    }
    const auto n = std::min<std::size_t>(left_, bytes.size());
    sink_(conn_, bytes.substr(0, n));
    left_ -= static_cast<std::uint32_t>(n);
    bytes.remove_prefix(n);
    if (left_ == 0) in_payload_ = false;
  }
}

}  // namespace dranet::nri
