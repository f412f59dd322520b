// The status server against real TCP clients on loopback: silent clients
// cannot hold up the probes, a flood is capped, and stopping never waits
// for a client.
#include "daemon/status_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace dranet::daemon {
namespace {

using namespace std::chrono_literals;

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// GET `path`; the whole answer, or "" when none came within 5 s.
std::string Get(int port, const std::string& path) {
  const int fd = Connect(port);
  if (fd < 0) return "";
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    ::close(fd);
    return "";
  }
  std::string answer;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

class StatusServerTest : public ::testing::Test {
 protected:
  std::ostringstream log_text_;
  Logger log_{log_text_};
  std::map<std::string, HttpHandler> handlers_{{"/livez", [] { return HttpReply{200, "text/plain", "ok\n"}; }}};
};

TEST_F(StatusServerTest, SilentClientsDoNotBlockTheProbes) {
  StatusServer server("127.0.0.1:0", handlers_, log_);
  std::vector<int> silent;
  for (int i = 0; i < 40; ++i) silent.push_back(Connect(server.port()));
  const auto started = std::chrono::steady_clock::now();
  const std::string answer = Get(server.port(), "/livez");
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_NE(answer.find("ok"), std::string::npos) << answer;
  std::cout << "[ measured ] /livez with 40 silent clients connected: "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count()
            << " ms\n";
  // The silent ones are dropped at their deadline.
  for (int fd : silent) {
    pollfd p{fd, POLLIN, 0};
    char c;
    EXPECT_EQ(::poll(&p, 1, 10000), 1);
    EXPECT_EQ(::recv(fd, &c, 1, 0), 0) << "a silent client was not closed";
    ::close(fd);
  }
}

// 200 clients connect and say nothing, and keep their sockets open: the
// server holds at most 64 of them, drops each at its deadline, and answers
// probes again within seconds (it used to stay wedged for 20+ minutes).
TEST_F(StatusServerTest, AFloodIsCappedAndTheServerRecovers) {
  StatusServer server("127.0.0.1:0", handlers_, log_);
  std::vector<int> flood;
  for (int i = 0; i < 200; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(server.port());
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);  // in progress or done
    flood.push_back(fd);
  }
  std::string answer;
  int most_open = 0;
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (answer.find("200 OK") == std::string::npos && std::chrono::steady_clock::now() < until) {
    most_open = std::max(most_open, server.open_connections());
    answer = Get(server.port(), "/livez");
  }
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_LE(most_open, 64);
  EXPECT_GT(server.refused_connections(), 0u);
  for (int fd : flood) ::close(fd);
}

TEST_F(StatusServerTest, StoppingDoesNotWaitForAnIdleClient) {
  auto server = std::make_unique<StatusServer>("127.0.0.1:0", handlers_, log_);
  const int idle = Connect(server->port());
  ASSERT_GE(idle, 0);
  while (server->open_connections() == 0) std::this_thread::sleep_for(5ms);  // accepted, mid-read
  // A hang detector, not a timing: the client never sends or closes.
  auto stopped = std::async(std::launch::async, [&] { server.reset(); });
  const bool returned = stopped.wait_for(30s) == std::future_status::ready;
  ::close(idle);
  EXPECT_TRUE(returned) << "the destructor waits for an idle client";
}

TEST_F(StatusServerTest, UnknownPathsAndMethods) {
  StatusServer server("127.0.0.1:0", handlers_, log_);
  EXPECT_NE(Get(server.port(), "/nope").find("404"), std::string::npos);
  EXPECT_NE(Get(server.port(), "/livez?verbose").find("200 OK"), std::string::npos);
}

// Two instances on one node share the port (docs/operations.md, "Upgrade"):
// the holder gives its listening socket away and a successor serves it; an
// instance that finds the port held listens once it is free; a holder whose
// successor left takes the port back once it is free again.
TEST_F(StatusServerTest, APortInUseIsWaitedForAndASocketGivenAwayIsServedAndTakenBack) {
  auto holder = std::make_unique<StatusServer>("127.0.0.1:0", handlers_, log_);
  const std::string address = "127.0.0.1:" + std::to_string(holder->port());
  EXPECT_THROW(StatusServer(address, handlers_, log_), std::runtime_error) << "refused without wait_for_port";
  auto waiting = std::make_unique<StatusServer>(address, handlers_, log_, UniqueFd(), /*wait_for_port=*/true);
  EXPECT_FALSE(waiting->listening());

  UniqueFd given = holder->GiveAway();
  ASSERT_TRUE(given.valid());
  EXPECT_FALSE(holder->listening());
  auto successor = std::make_unique<StatusServer>(address, handlers_, log_, std::move(given));
  EXPECT_TRUE(successor->listening());
  EXPECT_EQ(successor->port(), holder->port());
  EXPECT_NE(Get(successor->port(), "/livez").find("200 OK"), std::string::npos);

  auto until = [](auto done) {  // a hang detector, not a timing
    for (int i = 0; i < 300 && !done(); ++i) std::this_thread::sleep_for(50ms);
    return done();
  };
  const int port = holder->port();
  successor.reset();  // the last descriptor of the socket closes with it
  ASSERT_TRUE(until([&] { return waiting->listening(); })) << "the waiting server never took the free port";
  EXPECT_NE(Get(port, "/livez").find("200 OK"), std::string::npos);

  holder->TakeBack();  // the port is the waiting server's now: the holder waits for it
  EXPECT_FALSE(holder->listening());
  waiting.reset();
  ASSERT_TRUE(until([&] { return holder->listening(); })) << "the holder never took its port back";
  EXPECT_NE(Get(port, "/livez").find("200 OK"), std::string::npos);
}

}  // namespace
}  // namespace dranet::daemon
