#include "nri/ttrpc_frame.h"

#include <gtest/gtest.h>

#include "nri/mux_frame.h"
#include "nri/proto/nri.pb.h"
#include "nri/proto/ttrpc.pb.h"

namespace dranet::nri {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s.push_back(static_cast<char>(v));
  return s;
}

TEST(TtrpcFrame, HeaderIsTenBigEndianBytes) {
  const auto m = EncodeTtrpcMessage(0x01020304, TtrpcType::kResponse, 0, "abc");
  EXPECT_EQ(m, Bytes({0, 0, 0, 3, 1, 2, 3, 4, 2, 0}) + "abc");
}

// RegisterPlugin on conn 2, stream 1: bytes worked out by hand from the field numbers of
// containerd/nri pkg/api/api.proto and containerd/ttrpc request.proto.
TEST(TtrpcFrame, RegisterPluginMatchesTheSpecBytes) {
  ::nri::pkg::api::v1alpha1::RegisterPluginRequest reg;
  reg.set_plugin_name("dra.net");
  reg.set_plugin_idx("00");
  EXPECT_EQ(reg.SerializeAsString(), Bytes({0x0a, 0x07}) + "dra.net" + Bytes({0x12, 0x02}) + "00");
  ::ttrpc::Request req;
  req.set_service("nri.pkg.api.v1alpha1.Runtime");
  req.set_method("RegisterPlugin");
  req.set_payload(reg.SerializeAsString());
  const auto frames =
      EncodeMuxFrames(kRuntimeServiceConn, EncodeTtrpcMessage(1, TtrpcType::kRequest, 0, req.SerializeAsString()));
  const std::string expected = Bytes({0, 0, 0, 2, 0, 0, 0, 0x47}) + Bytes({0, 0, 0, 0x3d, 0, 0, 0, 1, 1, 0}) +
                               Bytes({0x0a, 0x1c}) + "nri.pkg.api.v1alpha1.Runtime" + Bytes({0x12, 0x0e}) +
                               "RegisterPlugin" + Bytes({0x1a, 0x0d}) + reg.SerializeAsString();
  EXPECT_EQ(frames, expected);
}

TEST(TtrpcFrame, ConfigureResponseUsesFieldTwo) {
  ::nri::pkg::api::v1alpha1::ConfigureResponse resp;
  resp.set_events(0xF);
  EXPECT_EQ(resp.SerializeAsString(), Bytes({0x10, 0x0f}));
  ::ttrpc::Response wrapped;
  wrapped.set_payload(resp.SerializeAsString());
  EXPECT_EQ(wrapped.SerializeAsString(), Bytes({0x12, 0x02, 0x10, 0x0f}));
}

TEST(TtrpcFrame, DecodesMessagesSplitAtEveryByte) {
  const std::string stream = EncodeTtrpcMessage(1, TtrpcType::kRequest, 0, "hello") +
                             EncodeTtrpcMessage(3, TtrpcType::kRequest, 0, "") +
                             EncodeTtrpcMessage(5, TtrpcType::kRequest, 0, std::string(300, 'x'));
  TtrpcStreamDecoder decoder;
  std::vector<TtrpcMessage> got;
  for (char c : stream) {
    for (auto& m : decoder.Feed(std::string_view(&c, 1))) got.push_back(std::move(m));
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].header.stream_id, 1u);
  EXPECT_EQ(got[0].data, "hello");
  EXPECT_EQ(got[1].header.stream_id, 3u);
  EXPECT_EQ(got[1].data, "");
  EXPECT_EQ(got[2].data, std::string(300, 'x'));
  EXPECT_EQ(decoder.pending_bytes(), 0u);
}

TEST(TtrpcFrame, DecodesManyMessagesInOneRead) {
  std::string stream;
  for (std::uint32_t i = 0; i < 50; ++i) {
    stream += EncodeTtrpcMessage(2 * i + 1, TtrpcType::kResponse, 0, std::to_string(i));
  }
  TtrpcStreamDecoder decoder;
  const auto got = decoder.Feed(stream);
  ASSERT_EQ(got.size(), 50u);
  EXPECT_EQ(got[49].data, "49");
}

TEST(TtrpcFrame, OversizedMessageIsSkippedAndReported) {
  TtrpcStreamDecoder decoder(/*max_message_bytes=*/16);
  const std::string big = EncodeTtrpcMessage(7, TtrpcType::kRequest, 0, std::string(100, 'B'));
  const std::string next = EncodeTtrpcMessage(9, TtrpcType::kRequest, 0, "ok");
  auto first = decoder.Feed(big.substr(0, 40));
  EXPECT_TRUE(first.empty());
  auto rest = decoder.Feed(big.substr(40) + next);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_TRUE(rest[0].oversized);
  EXPECT_EQ(rest[0].header.stream_id, 7u);
  EXPECT_TRUE(rest[0].data.empty());
  EXPECT_FALSE(rest[1].oversized);
  EXPECT_EQ(rest[1].data, "ok");
}

TEST(TtrpcFrame, DefaultLimitIsFourMiB) {
  TtrpcStreamDecoder decoder;
  std::string header;
  PutBigEndian32(header, kTtrpcMaxMessageBytes + 1);
  PutBigEndian32(header, 1);
  header += Bytes({1, 0});
  EXPECT_TRUE(decoder.Feed(header).empty());
  // The decoder buffers nothing for a message it will skip.
  EXPECT_EQ(decoder.pending_bytes(), 0u);
}

}  // namespace
}  // namespace dranet::nri
