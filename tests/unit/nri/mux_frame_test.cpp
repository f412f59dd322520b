#include "nri/mux_frame.h"

#include <gtest/gtest.h>

#include <map>

#include "nri/ttrpc_frame.h"

namespace dranet::nri {
namespace {

struct Frame {
  std::uint32_t conn;
  std::uint32_t length;
};

// Splits an encoded buffer into frame headers (conn, length).
std::vector<Frame> Frames(const std::string& encoded) {
  std::vector<Frame> out;
  std::size_t off = 0;
  while (off < encoded.size()) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(encoded.data() + off);
    Frame f{GetBigEndian32(p), GetBigEndian32(p + 4)};
    out.push_back(f);
    off += kMuxHeaderBytes + f.length;
  }
  EXPECT_EQ(off, encoded.size());
  return out;
}

TEST(MuxFrame, SmallMessageIsOneFrame) {
  const auto f = Frames(EncodeMuxFrames(kPluginServiceConn, std::string(4096, 'a')));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].conn, kPluginServiceConn);
  EXPECT_EQ(f[0].length, 4096u);
}

TEST(MuxFrame, LargerMessageStartsWithA4096ByteFrame) {
  const auto f = Frames(EncodeMuxFrames(kRuntimeServiceConn, std::string(5000, 'a')));
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].length, 4096u);
  EXPECT_EQ(f[1].length, 904u);
}

TEST(MuxFrame, HugeMessageIsCutAtTheFrameLimit) {
  const std::size_t size = kMuxFirstFrameBytes + kMuxMaxPayload + 10;
  const auto f = Frames(EncodeMuxFrames(1, std::string(size, 'a')));
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].length, 4096u);
  EXPECT_EQ(f[1].length, kMuxMaxPayload);
  EXPECT_EQ(f[2].length, 10u);
}

TEST(MuxFrame, DemultiplexesInterleavedConnectionsFedByteByByte) {
  const std::string stream = EncodeMuxFrames(1, "one-a") + EncodeMuxFrames(2, "two") +
                             EncodeMuxFrames(1, "one-b") + EncodeMuxFrames(7, "unknown") +
                             EncodeMuxFrames(2, std::string(5000, 'z'));
  std::map<std::uint32_t, std::string> got;
  MuxDecoder decoder([&](std::uint32_t conn, std::string_view bytes) { got[conn].append(bytes); });
  for (char c : stream) decoder.Feed(std::string_view(&c, 1));
  EXPECT_EQ(got[1], "one-aone-b");
  EXPECT_EQ(got[2], "two" + std::string(5000, 'z'));
  EXPECT_EQ(got[7], "unknown");  // the session drops unknown ids; the decoder just reports them
}

TEST(MuxFrame, EmptyFrameIsHarmless) {
  int calls = 0;
  MuxDecoder decoder([&](std::uint32_t, std::string_view) { ++calls; });
  decoder.Feed(EncodeMuxFrames(1, "") + EncodeMuxFrames(1, "x"));
  EXPECT_EQ(calls, 1);
}

TEST(MuxFrame, OversizedFrameIsAProtocolError) {
  std::string header;
  PutBigEndian32(header, 1);
  PutBigEndian32(header, kMuxMaxPayload + 1);
  MuxDecoder decoder([](std::uint32_t, std::string_view) {});
  EXPECT_THROW(decoder.Feed(header), MuxProtocolError);
}

}  // namespace
}  // namespace dranet::nri
