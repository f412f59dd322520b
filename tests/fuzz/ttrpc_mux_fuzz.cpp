// ttrpc_mux_fuzz: the NRI trunk's receive path (core/nri/mux_frame.h,
// ttrpc_frame.h) on arbitrary bytes cut into arbitrary reads.
//
// Input (FuzzedDataProvider): up to 16 read sizes, a message for the
// round-trip check, then the trunk byte stream.
// Checked:
//   * the decoded sequence (connection, ttRPC header, data, oversized) and
//     whether the trunk fails with MuxProtocolError do not depend on how the
//     stream is cut into reads ("reads may split headers and payloads
//     anywhere");
//   * MuxDecoder throws nothing but MuxProtocolError; the ttRPC decoder
//     never buffers more than its limit;
//   * EncodeMuxFrames(EncodeTtrpcMessage(m)) decodes back to exactly m.
// Every decoded request/response is also parsed as a ttrpc.Request/Response.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "fuzz_support.h"
#include "nri/mux_frame.h"
#include "nri/proto/ttrpc.pb.h"
#include "nri/ttrpc_frame.h"

namespace {

using namespace dranet::nri;

// Small, so that the oversized path is reachable with small inputs.
constexpr std::uint32_t kDecoderLimit = 512;

struct Decoded {
  std::uint32_t conn;
  TtrpcMessage message;
  bool operator==(const Decoded& o) const {
    return std::tie(conn, message.header.length, message.header.stream_id, message.header.type,
                    message.header.flags, message.data, message.oversized) ==
           std::tie(o.conn, o.message.header.length, o.message.header.stream_id, o.message.header.type,
                    o.message.header.flags, o.message.data, o.message.oversized);
  }
};

struct Outcome {
  std::vector<Decoded> messages;
  bool protocol_error = false;
};

void ParseEnvelope(const TtrpcMessage& m) {
  if (m.oversized) return;
  if (m.header.type == static_cast<std::uint8_t>(TtrpcType::kRequest)) {
    ttrpc::Request request;
    if (request.ParseFromString(m.data)) (void)request.SerializeAsString();
  } else if (m.header.type == static_cast<std::uint8_t>(TtrpcType::kResponse)) {
    ttrpc::Response response;
    if (response.ParseFromString(m.data)) (void)response.status().message().size();
  }
}

// Feeds `stream` in reads of the given sizes (cycled; a 0 is an empty read
// followed by a 1-byte read). Empty `sizes`: one read.
Outcome Decode(std::string_view stream, const std::vector<std::size_t>& sizes, std::uint32_t limit) {
  Outcome out;
  std::map<std::uint32_t, TtrpcStreamDecoder> per_conn;
  MuxDecoder mux([&](std::uint32_t conn, std::string_view payload) {
    auto [it, _] = per_conn.try_emplace(conn, limit);
    for (auto& m : it->second.Feed(payload)) {
      dranet::fuzz::Check(m.oversized ? m.data.empty() : m.data.size() == m.header.length,
                          "ttRPC message data does not match its header");
      ParseEnvelope(m);
      out.messages.push_back({conn, std::move(m)});
    }
    dranet::fuzz::Check(it->second.pending_bytes() <= kTtrpcHeaderBytes + limit,
                        "ttRPC decoder buffers more than its limit");
  });
  try {
    if (sizes.empty()) {
      mux.Feed(stream);
      return out;
    }
    std::size_t i = 0;
    while (!stream.empty()) {
      std::size_t n = sizes[i++ % sizes.size()];
      if (n == 0) {
        mux.Feed({});
        n = 1;
      }
      n = std::min(n, stream.size());
      mux.Feed(stream.substr(0, n));
      stream.remove_prefix(n);
    }
  } catch (const MuxProtocolError&) {
    out.protocol_error = true;
  }
  return out;
}

void CheckRoundTrip(FuzzedDataProvider& fdp, std::string_view stream) {
  const auto conn = fdp.ConsumeBool() ? kPluginServiceConn : kRuntimeServiceConn;
  const auto stream_id = fdp.ConsumeIntegral<std::uint32_t>();
  const auto type = static_cast<TtrpcType>(fdp.ConsumeIntegralInRange<int>(1, 3));
  const auto flags = fdp.ConsumeIntegral<std::uint8_t>();
  // Up to 9000 bytes: past kMuxFirstFrameBytes, so the 4096-byte first frame
  // rule is exercised too (the data repeats the stream to get there).
  std::string data(stream.substr(0, fdp.ConsumeIntegralInRange<std::size_t>(0, stream.size())));
  if (!data.empty() && fdp.ConsumeBool()) {
    while (data.size() < 4200) data += data;
    data.resize(std::min<std::size_t>(data.size(), 9000));
  }
  const std::string wire = EncodeMuxFrames(conn, EncodeTtrpcMessage(stream_id, type, flags, data));
  const Outcome got = Decode(wire, {}, kTtrpcMaxMessageBytes);
  dranet::fuzz::Check(!got.protocol_error, "round trip: our own frames rejected");
  dranet::fuzz::Check(got.messages.size() == 1, "round trip: encoded 1 message, decoded " +
                                                    std::to_string(got.messages.size()) + " (data " +
                                                    std::to_string(data.size()) + " bytes)");
  const TtrpcMessage& m = got.messages[0].message;
  dranet::fuzz::Check(got.messages[0].conn == conn && m.header.stream_id == stream_id &&
                          m.header.type == static_cast<std::uint8_t>(type) && m.header.flags == flags &&
                          m.data == data && !m.oversized,
                      "round trip: decoded message differs");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Invalid UTF-8 in a string field is a parse failure we handle; protobuf
  // would also log every one of them.
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  std::vector<std::size_t> sizes(fdp.ConsumeIntegralInRange<std::size_t>(0, 16));
  for (auto& s : sizes) s = fdp.ConsumeIntegralInRange<std::size_t>(0, 64);
  const std::string round_trip_choices = fdp.ConsumeBytesAsString(24);
  const std::string stream = fdp.ConsumeRemainingBytesAsString();

  const Outcome whole = Decode(stream, {}, kDecoderLimit);
  const Outcome cut = Decode(stream, sizes.empty() ? std::vector<std::size_t>{1} : sizes, kDecoderLimit);
  dranet::fuzz::Check(whole.protocol_error == cut.protocol_error,
                      "MuxProtocolError depends on how the stream is read");
  dranet::fuzz::Check(whole.messages == cut.messages, "decoded messages depend on how the stream is read");

  FuzzedDataProvider choices(reinterpret_cast<const uint8_t*>(round_trip_choices.data()),
                             round_trip_choices.size());
  CheckRoundTrip(choices, stream);
  return 0;
}
