#include "nri/ttrpc_frame.h"

#include <algorithm>

namespace dranet::nri {

void PutBigEndian32(std::string& out, std::uint32_t v) {
  out.push_back(static_cast<char>((v >> 24) & 0xff));
  out.push_back(static_cast<char>((v >> 16) & 0xff));
  out.push_back(static_cast<char>((v >> 8) & 0xff));
  out.push_back(static_cast<char>(v & 0xff));
}

std::uint32_t GetBigEndian32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

bool FillHeader(std::uint8_t* header, std::size_t size, std::size_t& fill, std::string_view& bytes) {
  const auto n = std::min(size - fill, bytes.size());
  std::copy_n(bytes.data(), n, header + fill);
  fill += n;
  bytes.remove_prefix(n);
  return fill == size;
}

std::string EncodeTtrpcMessage(std::uint32_t stream_id, TtrpcType type, std::uint8_t flags,
                               std::string_view data) {
  std::string out;
  out.reserve(kTtrpcHeaderBytes + data.size());
  PutBigEndian32(out, static_cast<std::uint32_t>(data.size()));
  PutBigEndian32(out, stream_id);
  out.push_back(static_cast<char>(type));
  out.push_back(static_cast<char>(flags));
  out.append(data);
  return out;
}

TtrpcHeader DecodeTtrpcHeader(std::span<const std::uint8_t, kTtrpcHeaderBytes> bytes) {
  TtrpcHeader h;
  h.length = GetBigEndian32(bytes.data());
  h.stream_id = GetBigEndian32(bytes.data() + 4);
  h.type = bytes[8];
  h.flags = bytes[9];
  return h;
}

std::string TtrpcStreamDecoder::Replay() const {
  if (skip_left_ > 0) {
    std::string out(reinterpret_cast<const char*>(header_), kTtrpcHeaderBytes);
    out.append(current_.length - skip_left_, '\0');
    return out;
  }
  if (!have_header_) return std::string(reinterpret_cast<const char*>(header_), header_fill_);
  return std::string(reinterpret_cast<const char*>(header_), kTtrpcHeaderBytes) + data_;
}

std::vector<TtrpcMessage> TtrpcStreamDecoder::Feed(std::string_view bytes) {
  std::vector<TtrpcMessage> done;
  while (!bytes.empty()) {
    if (skip_left_ > 0) {
      const auto n = std::min<std::size_t>(skip_left_, bytes.size());
      skip_left_ -= static_cast<std::uint32_t>(n);
      bytes.remove_prefix(n);
      if (skip_left_ == 0) done.push_back(TtrpcMessage{current_, {}, true});
      continue;
    }
    if (!have_header_) {
      if (!FillHeader(header_, kTtrpcHeaderBytes, header_fill_, bytes)) break;
      current_ = DecodeTtrpcHeader(std::span<const std::uint8_t, kTtrpcHeaderBytes>(header_));
      header_fill_ = 0;
      if (current_.length > max_) {
        skip_left_ = current_.length;
        continue;
      }
      have_header_ = true;
      data_.clear();
      data_.reserve(current_.length);
    }
    const auto n = std::min<std::size_t>(current_.length - data_.size(), bytes.size());
    data_.append(bytes.data(), n);
    bytes.remove_prefix(n);
    if (data_.size() == current_.length) {
      done.push_back(TtrpcMessage{current_, std::move(data_), false});
      data_.clear();
      have_header_ = false;
    }
  }
  return done;
}

}  // namespace dranet::nri
