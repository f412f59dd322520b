#include "nri/ttrpc_session.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <memory>
#include <thread>

#include "nri/proto/ttrpc.pb.h"

namespace dranet::nri {
namespace {

using namespace std::chrono_literals;

std::pair<UniqueFd, UniqueFd> SocketPair() {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

RpcResult Echo(const RpcRequest& r) {
  if (r.method == "Echo") return {{}, r.service + "/" + r.method + ":" + r.payload};
  return Unimplemented(r);
}

void WriteAll(int fd, const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    ASSERT_GT(n, 0);
    off += static_cast<std::size_t>(n);
  }
}

// Reads one whole ttRPC response from a raw mux stream.
TtrpcMessage ReadOneMessage(int fd) {
  std::vector<TtrpcMessage> got;
  TtrpcStreamDecoder ttrpc;
  MuxDecoder mux([&](std::uint32_t, std::string_view b) {
    for (auto& m : ttrpc.Feed(b)) got.push_back(std::move(m));
  });
  char buf[4096];
  for (int i = 0; i < 1000 && got.empty(); ++i) {
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, 5000) != 1) break;  // nothing for 5 s: no answer is coming
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    mux.Feed(std::string_view(buf, static_cast<std::size_t>(n)));
  }
  EXPECT_FALSE(got.empty());
  return got.empty() ? TtrpcMessage{} : got.front();
}

TEST(TtrpcSession, CallsInBothDirections) {
  auto [a, b] = SocketPair();
  TtrpcSession plugin(std::move(a), TtrpcSession::kPluginRoles, Echo, "t-plugin");
  TtrpcSession runtime(std::move(b), TtrpcSession::kRuntimeRoles, Echo, "t-runtime");
  auto r1 = runtime.Call("svc.Plugin", "Echo", "hi", 5s);
  ASSERT_TRUE(r1.status.ok()) << r1.status.message;
  EXPECT_EQ(r1.payload, "svc.Plugin/Echo:hi");
  auto r2 = plugin.Call("svc.Runtime", "Echo", std::string(100000, 'p'), 5s);
  ASSERT_TRUE(r2.status.ok());
  EXPECT_EQ(r2.payload.size(), std::string("svc.Runtime/Echo:").size() + 100000);
  auto r3 = plugin.Call("svc.Runtime", "Nope", "", 5s);
  EXPECT_EQ(r3.status.code, RpcCode::kUnimplemented);
}

TEST(TtrpcSession, ConcurrentCallsGetTheirOwnAnswers) {
  auto [a, b] = SocketPair();
  TtrpcSession plugin(std::move(a), TtrpcSession::kPluginRoles, Echo, "t-plugin");
  TtrpcSession runtime(std::move(b), TtrpcSession::kRuntimeRoles, Echo, "t-runtime");
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const std::string p = std::to_string(t) + "-" + std::to_string(i);
        auto r = runtime.Call("s", "Echo", p, 5s);
        if (r.status.ok() && r.payload == "s/Echo:" + p) ++good;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 200);
}

TEST(TtrpcSession, HandlerExceptionBecomesInternalError) {
  auto [a, b] = SocketPair();
  TtrpcSession plugin(std::move(a), TtrpcSession::kPluginRoles,
                      [](const RpcRequest&) -> RpcResult { throw std::runtime_error("boom"); }, "t-plugin");
  TtrpcSession runtime(std::move(b), TtrpcSession::kRuntimeRoles, Echo, "t-runtime");
  auto r = runtime.Call("s", "Echo", "", 5s);
  EXPECT_EQ(r.status.code, RpcCode::kInternal);
  EXPECT_EQ(r.status.message, "boom");
}

TEST(TtrpcSession, DeadlineWhileTheHandlerIsSlow) {
  auto [a, b] = SocketPair();
  std::promise<void> release;
  auto released = release.get_future().share();
  TtrpcSession plugin(std::move(a), TtrpcSession::kPluginRoles,
                      [released](const RpcRequest& r) {
                        released.wait();
                        return Echo(r);
                      },
                      "t-plugin");
  TtrpcSession runtime(std::move(b), TtrpcSession::kRuntimeRoles, Echo, "t-runtime");
  auto r = runtime.Call("s", "Echo", "late", 50ms);
  EXPECT_EQ(r.status.code, RpcCode::kDeadlineExceeded);
  release.set_value();
  // The late answer is dropped; the next call still works.
  auto next = runtime.Call("s", "Echo", "again", 5s);
  EXPECT_TRUE(next.status.ok());
  EXPECT_EQ(next.payload, "s/Echo:again");
}

TEST(TtrpcSession, PeerCloseFailsPendingAndLaterCalls) {
  auto [a, b] = SocketPair();
  std::promise<void> release;
  auto released = release.get_future().share();
  auto plugin = std::make_unique<TtrpcSession>(std::move(a), TtrpcSession::kPluginRoles,
                                               [released](const RpcRequest& r) {
                                                 released.wait();
                                                 return Echo(r);
                                               },
                                               "t-plugin");
  TtrpcSession runtime(std::move(b), TtrpcSession::kRuntimeRoles, Echo, "t-runtime");
  auto pending = std::async(std::launch::async, [&] { return runtime.Call("s", "Echo", "x", 30s); });
  plugin->Close("test closes");
  auto r = pending.get();
  EXPECT_EQ(r.status.code, RpcCode::kUnavailable);
  EXPECT_TRUE(runtime.WaitClosed(5s));
  EXPECT_EQ(runtime.Call("s", "Echo", "y", 5s).status.code, RpcCode::kUnavailable);
  release.set_value();
}

TEST(TtrpcSession, GarbageClosesTheSessionWithAReason) {
  auto [a, raw] = SocketPair();
  TtrpcSession plugin(std::move(a), TtrpcSession::kPluginRoles, Echo, "t-plugin");
  WriteAll(raw.get(), std::string("\x00\x00\x00\x01\xff\xff\xff\xff garbage", 17));
  ASSERT_TRUE(plugin.WaitClosed(5s));
  EXPECT_NE(plugin.close_reason().find("protocol error"), std::string::npos) << plugin.close_reason();
}

TEST(TtrpcSession, WrongMessageTypeOrStreamIdClosesTheSession) {
  {
    auto [a, raw] = SocketPair();
    TtrpcSession plugin(std::move(a), TtrpcSession::kPluginRoles, Echo, "t-plugin");
    WriteAll(raw.get(), EncodeMuxFrames(kPluginServiceConn, EncodeTtrpcMessage(1, TtrpcType::kData, 0, "")));
    ASSERT_TRUE(plugin.WaitClosed(5s));
    EXPECT_NE(plugin.close_reason().find("message type 3"), std::string::npos);
  }
  {
    auto [a, raw] = SocketPair();
    TtrpcSession plugin(std::move(a), TtrpcSession::kPluginRoles, Echo, "t-plugin");
    WriteAll(raw.get(), EncodeMuxFrames(kPluginServiceConn, EncodeTtrpcMessage(2, TtrpcType::kRequest, 0, "")));
    ASSERT_TRUE(plugin.WaitClosed(5s));
    EXPECT_NE(plugin.close_reason().find("stream id 2"), std::string::npos);
  }
}

TEST(TtrpcSession, MalformedRequestGetsInvalidArgument) {
  auto [a, raw] = SocketPair();
  TtrpcSession plugin(std::move(a), TtrpcSession::kPluginRoles, Echo, "t-plugin");
  WriteAll(raw.get(), EncodeMuxFrames(kPluginServiceConn,
                                      EncodeTtrpcMessage(1, TtrpcType::kRequest, 0, "\xff\xff\xff")));
  const auto m = ReadOneMessage(raw.get());
  ::ttrpc::Response resp;
  ASSERT_TRUE(resp.ParseFromString(m.data));
  EXPECT_EQ(m.header.stream_id, 1u);
  EXPECT_EQ(resp.status().code(), static_cast<int>(RpcCode::kInvalidArgument));
  EXPECT_FALSE(plugin.closed());
}

TEST(TtrpcSession, OversizedRequestGetsResourceExhausted) {
  auto [a, raw] = SocketPair();
  TtrpcSession plugin(std::move(a), TtrpcSession::kPluginRoles, Echo, "t-plugin");
  const std::string big =
      EncodeTtrpcMessage(1, TtrpcType::kRequest, 0, std::string(kTtrpcMaxMessageBytes + 1, 'x'));
  std::thread writer([&, fd = raw.get()] { WriteAll(fd, EncodeMuxFrames(kPluginServiceConn, big)); });
  const auto m = ReadOneMessage(raw.get());
  writer.join();
  ::ttrpc::Response resp;
  ASSERT_TRUE(resp.ParseFromString(m.data));
  EXPECT_EQ(resp.status().code(), static_cast<int>(RpcCode::kResourceExhausted));
  // The session survives and serves the next request.
  ::ttrpc::Request ok;
  ok.set_service("s");
  ok.set_method("Echo");
  WriteAll(raw.get(), EncodeMuxFrames(kPluginServiceConn,
                                      EncodeTtrpcMessage(3, TtrpcType::kRequest, 0, ok.SerializeAsString())));
  const auto m2 = ReadOneMessage(raw.get());
  ASSERT_TRUE(resp.ParseFromString(m2.data));
  EXPECT_EQ(resp.payload(), "s/Echo:");
}

// A trunk handed from one process to another (Detach, then a session
// resumed from it): the runtime sees one unbroken connection, a request cut
// anywhere by the hand-over is answered once, by the new session, and stream
// ids go on from where the old one left them.
TEST(TtrpcSession, ADetachedTrunkResumesWhereItStood) {
  auto [plugin_end, runtime_end] = SocketPair();
  const int plugin_fd = plugin_end.get();  // to see what the plugin has not read yet
  auto named = [](std::string who) {
    return [who](const RpcRequest& r) -> RpcResult { return {{}, who + ":" + r.method}; };
  };
  auto first = std::make_unique<TtrpcSession>(std::move(plugin_end), TtrpcSession::kPluginRoles, named("first"),
                                              "t-first");
  auto request = [](std::uint32_t stream, const std::string& method) {
    ::ttrpc::Request r;
    r.set_service("svc.Plugin");
    r.set_method(method);
    return EncodeMuxFrames(kPluginServiceConn,
                           EncodeTtrpcMessage(stream, TtrpcType::kRequest, 0, r.SerializeAsString()));
  };
  auto answer = [&](std::uint32_t stream) {
    const auto m = ReadOneMessage(runtime_end.get());
    EXPECT_EQ(m.header.stream_id, stream);
    ::ttrpc::Response r;
    EXPECT_TRUE(r.ParseFromString(m.data));
    return r.payload();
  };
  auto drained = [&] {  // the plugin read every byte sent so far
    for (int i = 0; i < 2000; ++i) {
      int unread = 0;
      if (::ioctl(plugin_fd, FIONREAD, &unread) == 0 && unread == 0) return true;
      std::this_thread::sleep_for(1ms);
    }
    return false;
  };
  WriteAll(runtime_end.get(), request(1, "One"));
  EXPECT_EQ(answer(1), "first:One");
  // A call of the plugin's own, answered by the raw runtime.
  std::thread respond([&] {
    const auto m = ReadOneMessage(runtime_end.get());
    EXPECT_EQ(m.header.stream_id, 1U);
    ::ttrpc::Response r;
    r.set_payload("ok");
    WriteAll(runtime_end.get(), EncodeMuxFrames(kRuntimeServiceConn, EncodeTtrpcMessage(m.header.stream_id, TtrpcType::kResponse, 0, r.SerializeAsString())));
  });
  EXPECT_TRUE(first->Call("svc.Runtime", "Register", "", 5s).status.ok());
  respond.join();

  // Cut inside the ttRPC header of request 3 (the mux frame's payload).
  const std::string two = request(3, "Two");
  WriteAll(runtime_end.get(), two.substr(0, kMuxHeaderBytes + 5));
  ASSERT_TRUE(drained());
  auto detached = first->Detach();
  ASSERT_TRUE(detached);
  EXPECT_TRUE(first->closed());
  EXPECT_EQ(first->close_reason(), "handed over");
  EXPECT_FALSE(detached->state.replay.empty());
  EXPECT_EQ(detached->state.next_stream, 3U);
  EXPECT_EQ(detached->state.last_served_stream, 1U);
  first.reset();  // the old session's end does not end the trunk
  auto second = std::make_unique<TtrpcSession>(std::move(detached->socket), TtrpcSession::kPluginRoles,
                                               named("second"), "t-second", std::move(detached->state));
  WriteAll(runtime_end.get(), two.substr(kMuxHeaderBytes + 5));
  EXPECT_EQ(answer(3), "second:Two");

  // Cut inside the next mux header, and again handed over.
  const std::string three = request(5, "Three");
  WriteAll(runtime_end.get(), three.substr(0, 3));
  ASSERT_TRUE(drained());
  detached = second->Detach();
  ASSERT_TRUE(detached);
  second.reset();
  TtrpcSession third(std::move(detached->socket), TtrpcSession::kPluginRoles, named("third"), "t-third",
                     std::move(detached->state));
  WriteAll(runtime_end.get(), three.substr(3));
  EXPECT_EQ(answer(5), "third:Three");
  // The plugin's next call goes on from stream 3.
  std::thread respond_again([&] {
    const auto m = ReadOneMessage(runtime_end.get());
    EXPECT_EQ(m.header.stream_id, 3U);
    ::ttrpc::Response r;
    WriteAll(runtime_end.get(), EncodeMuxFrames(kRuntimeServiceConn, EncodeTtrpcMessage(m.header.stream_id, TtrpcType::kResponse, 0, r.SerializeAsString())));
  });
  EXPECT_TRUE(third.Call("svc.Runtime", "Update", "", 5s).status.ok());
  respond_again.join();
  // A request already answered is a protocol error to the resumed session too.
  WriteAll(runtime_end.get(), request(5, "Again"));
  EXPECT_TRUE(third.WaitClosed(5s));
}

TEST(TtrpcSession, AClosedSessionCannotBeDetached) {
  auto [a, b] = SocketPair();
  TtrpcSession plugin(std::move(a), TtrpcSession::kPluginRoles, Echo, "t-plugin");
  b.Reset();
  EXPECT_TRUE(plugin.WaitClosed(5s));
  EXPECT_FALSE(plugin.Detach());
}

}  // namespace
}  // namespace dranet::nri
