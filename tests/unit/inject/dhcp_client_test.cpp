// Tests of the DHCPv4 client (core/inject/dhcp_client.h).
//
// Pure tests: message and datagram encoding and parsing, hostile packets,
// option 121, and the DISCOVER/OFFER/REQUEST/ACK conversation fed by hand,
// including the leases it refuses. Root tests also check that a link that
// was down is down again after a lease, a failure or a release.
// Root tests: dnsmasq serves a server network namespace at one end of a veth
// pair; the client runs in a client namespace at the other end. Both
// namespaces carry the pid in their name and are deleted (with the veths)
// and dnsmasq is killed when a test ends, even on failure. Skipped unless
// root with `ip netns` and /usr/sbin/dnsmasq.
#include "inject/dhcp_client.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "inject/netns.h"
#include "inject/pod_netns_applier.h"
#include "dnsmasq_server.h"
#include "shell_command.h"

namespace dranet::inject {
namespace {

using testing::Contains;
using testing::Ok;

constexpr std::array<uint8_t, 6> kClientMac = {0x02, 0x00, 0x00, 0x00, 0xd0, 0x01};
constexpr uint32_t kXid = 0x12345678;
constexpr uint32_t kServer = 0xc0000201;   // 192.0.2.1
constexpr uint32_t kOffered = 0xc0000232;  // 192.0.2.50

std::vector<uint8_t> Bytes(std::initializer_list<int> values) {
  std::vector<uint8_t> out;
  for (int v : values) out.push_back(static_cast<uint8_t>(v));
  return out;
}

// Ones'-complement checksum written independently of the client's, as an oracle.
uint16_t Checksum(const std::vector<uint8_t>& data) {
  uint64_t sum = 0;
  for (std::size_t i = 0; i < data.size(); ++i) sum += i % 2 == 0 ? data[i] << 8 : data[i];
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// ---- Message encoding ----

TEST(DhcpMessageTest, RoundTripsEveryFieldAndOption) {
  DhcpMessage m;
  m.op = 2;
  m.xid = kXid;
  m.secs = 7;
  m.flags = 0x8000;
  m.ciaddr = 1;
  m.yiaddr = kOffered;
  m.siaddr = 3;
  m.giaddr = 4;
  m.chaddr = kClientMac;
  m.options[dhcp_option::kMessageType] = {5};
  m.options[dhcp_option::kServerId] = Bytes({192, 0, 2, 1});
  m.options[dhcp_option::kClasslessStaticRoute] = std::vector<uint8_t>(600, 0x2a);  // three pieces
  m.options[200] = {};
  const auto bytes = BuildDhcpMessage(m);
  EXPECT_EQ(bytes[0], 2);
  EXPECT_EQ(bytes[1], 1);  // Ethernet
  EXPECT_EQ(bytes[2], 6);
  EXPECT_EQ(std::vector<uint8_t>(bytes.begin() + 236, bytes.begin() + 240), Bytes({99, 130, 83, 99}));
  EXPECT_EQ(std::vector<uint8_t>(bytes.begin() + 240, bytes.begin() + 243), Bytes({53, 1, 5}))
      << "the message type comes first";
  const auto parsed = ParseDhcpMessage(bytes);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, m);
  EXPECT_EQ(parsed->Type(), DhcpMessageType::kAck);
  EXPECT_EQ(parsed->AddressOption(dhcp_option::kServerId), kServer);
}

TEST(DhcpMessageTest, PadsToTheBootpMinimumAndEndsWithEnd) {
  DhcpMessage m;
  m.options[dhcp_option::kMessageType] = {1};
  const auto bytes = BuildDhcpMessage(m);
  EXPECT_EQ(bytes.size(), 300u);
  EXPECT_EQ(bytes[243], 255);
}

std::vector<uint8_t> MinimalReply() {
  DhcpMessage m;
  m.op = 2;
  m.xid = kXid;
  m.chaddr = kClientMac;
  auto bytes = BuildDhcpMessage(m);
  bytes.resize(240);  // header and cookie, no options, no End
  return bytes;
}

TEST(DhcpMessageTest, AcceptsOptionsWithoutEndAndSkipsPads) {
  auto bytes = MinimalReply();
  for (int b : {0, 0, 53, 1, 2, 0, 54, 4, 192, 0, 2, 1}) bytes.push_back(static_cast<uint8_t>(b));
  const auto parsed = ParseDhcpMessage(bytes);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->Type(), DhcpMessageType::kOffer);
  EXPECT_EQ(parsed->AddressOption(dhcp_option::kServerId), kServer);
  EXPECT_EQ(parsed->options.size(), 2u);
}

TEST(DhcpMessageTest, IgnoresWhatFollowsEnd) {
  auto bytes = MinimalReply();
  for (int b : {53, 1, 2, 255, 54, 200}) bytes.push_back(static_cast<uint8_t>(b));  // garbage after End
  const auto parsed = ParseDhcpMessage(bytes);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->options.size(), 1u);
}

TEST(DhcpMessageTest, RejectsHostileMessages) {
  const auto good = MinimalReply();
  ASSERT_TRUE(ParseDhcpMessage(good));
  EXPECT_FALSE(ParseDhcpMessage({})) << "empty";
  EXPECT_FALSE(ParseDhcpMessage(std::span(good).first(239))) << "cut in the cookie";
  auto bad_cookie = good;
  bad_cookie[239] = 0;
  EXPECT_FALSE(ParseDhcpMessage(bad_cookie));
  auto not_ethernet = good;
  not_ethernet[1] = 32;  // InfiniBand
  EXPECT_FALSE(ParseDhcpMessage(not_ethernet));
  auto long_hlen = good;
  long_hlen[2] = 16;
  EXPECT_FALSE(ParseDhcpMessage(long_hlen));
  auto no_length = good;
  no_length.push_back(53);  // a code with no length byte
  no_length.shrink_to_fit();  // so that ASan builds (scripts/sanitize.sh) see a read past the end
  EXPECT_FALSE(ParseDhcpMessage(no_length));
  auto overlong = good;
  for (int b : {121, 10, 8, 10}) overlong.push_back(static_cast<uint8_t>(b));  // 10 bytes claimed, 2 there
  EXPECT_FALSE(ParseDhcpMessage(overlong));
  auto max_length = good;
  max_length.push_back(121);
  max_length.push_back(255);
  EXPECT_FALSE(ParseDhcpMessage(max_length));
}

TEST(DhcpMessageTest, MessageTypeAndAddressOptionsNeedTheirExactLength) {
  DhcpMessage m;
  m.options[dhcp_option::kMessageType] = {5, 5};
  m.options[dhcp_option::kServerId] = Bytes({192, 0, 2});
  EXPECT_FALSE(m.Type());
  EXPECT_FALSE(m.AddressOption(dhcp_option::kServerId));
  m.options[dhcp_option::kMessageType] = {9};
  EXPECT_FALSE(m.Type()) << "9 is no DHCP message type";
  m.options[dhcp_option::kMessageType] = {0};
  EXPECT_FALSE(m.Type());
  m.options.clear();
  EXPECT_FALSE(m.Type());
  EXPECT_FALSE(m.AddressOption(dhcp_option::kSubnetMask));
}

// ---- Option 121 ----

Route R(const std::string& destination, const std::string& gateway) {
  Route r;
  r.destination = destination;
  r.gateway = gateway;
  return r;
}

TEST(ClasslessRoutesTest, DecodesRfc3442Widths) {
  const auto routes = ParseClasslessRoutes(Bytes({
      0, 192, 0, 2, 254,                  // default via 192.0.2.254
      8, 10, 192, 0, 2, 253,              // 10/8
      24, 198, 51, 100, 0, 0, 0, 0,       // 198.51.100/24 on-link
      32, 203, 0, 113, 7, 192, 0, 2, 1,   // a host route
      12, 172, 31, 192, 0, 2, 1,          // 172.31/12: bits past the width are dropped
  }));
  ASSERT_TRUE(routes);
  EXPECT_EQ(*routes, (std::vector<Route>{R("0.0.0.0/0", "192.0.2.254"), R("10.0.0.0/8", "192.0.2.253"),
                                         R("198.51.100.0/24", ""), R("203.0.113.7/32", "192.0.2.1"),
                                         R("172.16.0.0/12", "192.0.2.1")}));
}

TEST(ClasslessRoutesTest, IgnoresTheWholeOptionWhenMalformed) {
  EXPECT_FALSE(ParseClasslessRoutes(Bytes({33, 10, 0, 0, 0, 0, 192, 0, 2, 1}))) << "width over 32";
  EXPECT_FALSE(ParseClasslessRoutes(Bytes({255, 1, 2, 3, 4, 5, 6, 7, 8}))) << "width 255";
  EXPECT_FALSE(ParseClasslessRoutes(Bytes({8, 10, 192, 0, 2, 1, 24, 198, 51}))) << "second entry truncated";
  EXPECT_FALSE(ParseClasslessRoutes(Bytes({24, 198, 51, 100, 192, 0, 2}))) << "gateway truncated";
  EXPECT_FALSE(ParseClasslessRoutes(Bytes({32}))) << "width only";
  EXPECT_EQ(ParseClasslessRoutes({}), std::vector<Route>{});
}

// ---- IPv4/UDP framing ----

TEST(DhcpDatagramTest, BuildsIpv4UdpWithValidChecksums) {
  const auto payload = Bytes({1, 2, 3, 4, 5});  // odd length: the UDP checksum pads it
  const auto datagram = BuildDhcpDatagram(0xc0000232, kServer, payload);
  ASSERT_EQ(datagram.size(), 20u + 8 + payload.size());
  EXPECT_EQ(datagram[0], 0x45);
  EXPECT_EQ(datagram[2] << 8 | datagram[3], static_cast<int>(datagram.size()));
  EXPECT_EQ(datagram[9], 17);
  EXPECT_EQ(std::vector<uint8_t>(datagram.begin() + 12, datagram.begin() + 20),
            Bytes({192, 0, 2, 50, 192, 0, 2, 1}));
  EXPECT_EQ(Checksum(std::vector<uint8_t>(datagram.begin(), datagram.begin() + 20)), 0) << "IP header checksum";
  EXPECT_EQ(std::vector<uint8_t>(datagram.begin() + 20, datagram.begin() + 26), Bytes({0, 68, 0, 67, 0, 13}));
  std::vector<uint8_t> pseudo = Bytes({192, 0, 2, 50, 192, 0, 2, 1, 0, 17, 0, 13});
  pseudo.insert(pseudo.end(), datagram.begin() + 20, datagram.end());
  EXPECT_NE(datagram[26] << 8 | datagram[27], 0) << "UDP checksum present";
  EXPECT_EQ(Checksum(pseudo), 0) << "UDP checksum";
  EXPECT_EQ(std::vector<uint8_t>(datagram.begin() + 28, datagram.end()), payload);
}

// A datagram as a server sends it: from 67 to 68.
std::vector<uint8_t> ServerDatagram(const std::vector<uint8_t>& payload) {
  auto datagram = BuildDhcpDatagram(kServer, 0xffffffff, payload);
  std::swap(datagram[20], datagram[22]);
  std::swap(datagram[21], datagram[23]);
  return datagram;
}

TEST(DhcpDatagramTest, FindsThePayloadOfADatagramToPort68) {
  const auto payload = Bytes({9, 8, 7});
  auto datagram = ServerDatagram(payload);
  datagram.resize(datagram.size() + 20, 0);  // Ethernet padding after the IP datagram
  const auto found = DhcpPayloadOf(datagram);
  ASSERT_TRUE(found);
  EXPECT_EQ(std::vector<uint8_t>(found->begin(), found->end()), payload);
}

TEST(DhcpDatagramTest, RejectsWhatIsNotAnUnfragmentedDatagramToPort68) {
  const auto good = ServerDatagram(Bytes({9, 8, 7}));
  ASSERT_TRUE(DhcpPayloadOf(good));
  // Changes the IP header and fixes its checksum again, so only the change is wrong.
  auto with_header = [&](auto change) {
    auto packet = good;
    change(packet);
    packet[10] = packet[11] = 0;
    const std::size_t header = std::min<std::size_t>((packet[0] & 0xf) * 4u, packet.size());
    const uint16_t sum = Checksum(std::vector<uint8_t>(packet.begin(), packet.begin() + static_cast<std::ptrdiff_t>(header)));
    packet[10] = static_cast<uint8_t>(sum >> 8);
    packet[11] = static_cast<uint8_t>(sum);
    return packet;
  };
  EXPECT_FALSE(DhcpPayloadOf(BuildDhcpDatagram(0, kServer, Bytes({1})))) << "to port 67";
  EXPECT_FALSE(DhcpPayloadOf(std::span(good).first(19))) << "shorter than an IP header";
  EXPECT_FALSE(DhcpPayloadOf(std::span(good).first(good.size() - 1))) << "cut before the IP total length";
  EXPECT_FALSE(DhcpPayloadOf(with_header([](auto& p) { p[0] = 0x65; }))) << "IPv6 version";
  EXPECT_FALSE(DhcpPayloadOf(with_header([](auto& p) { p[0] = 0x44; }))) << "IHL under 5";
  EXPECT_FALSE(DhcpPayloadOf(with_header([](auto& p) { p[0] = 0x4f; }))) << "IHL past the packet";
  EXPECT_FALSE(DhcpPayloadOf(with_header([](auto& p) { p[9] = 6; }))) << "TCP";
  EXPECT_FALSE(DhcpPayloadOf(with_header([](auto& p) { p[6] = 0x20; }))) << "more fragments";
  EXPECT_FALSE(DhcpPayloadOf(with_header([](auto& p) { p[7] = 0x01; }))) << "a fragment offset";
  EXPECT_TRUE(DhcpPayloadOf(with_header([](auto& p) { p[6] = 0x40; }))) << "don't-fragment is fine";
  EXPECT_FALSE(DhcpPayloadOf(with_header([](auto& p) { p[3] = 27; }))) << "total length under IP+UDP headers";
  EXPECT_FALSE(DhcpPayloadOf(with_header([](auto& p) { p[3] = 10; }))) << "total length under the IP header";
  EXPECT_FALSE(DhcpPayloadOf(with_header([](auto& p) { p[3] = static_cast<uint8_t>(p[3] + 1); })))
      << "total length past the packet";
  auto bad_checksum = good;
  bad_checksum[11] ^= 1;
  EXPECT_FALSE(DhcpPayloadOf(bad_checksum)) << "IP header checksum";
  auto long_udp = good;
  long_udp[25] = static_cast<uint8_t>(long_udp[25] + 1);
  EXPECT_FALSE(DhcpPayloadOf(long_udp)) << "UDP length past the IP datagram";
  auto short_udp = good;
  short_udp[25] = 7;
  EXPECT_FALSE(DhcpPayloadOf(short_udp)) << "UDP length under its header";
}

// ---- The conversation ----

DhcpMessage Reply(DhcpMessageType type, uint32_t server = kServer) {
  DhcpMessage m;
  m.op = 2;
  m.xid = kXid;
  m.yiaddr = kOffered;
  m.chaddr = kClientMac;
  m.options[dhcp_option::kMessageType] = {static_cast<uint8_t>(type)};
  m.options[dhcp_option::kServerId] = {static_cast<uint8_t>(server >> 24), static_cast<uint8_t>(server >> 16),
                                       static_cast<uint8_t>(server >> 8), static_cast<uint8_t>(server)};
  return m;
}

std::optional<DhcpLease> Feed(DhcpExchange& exchange, const DhcpMessage& reply) {
  return exchange.OnReply(BuildDhcpMessage(reply), "02:00:00:00:5e:01");
}

DhcpMessage Sent(const DhcpExchange& exchange) {
  auto parsed = ParseDhcpMessage(exchange.Outgoing());
  EXPECT_TRUE(parsed);
  return parsed.value_or(DhcpMessage{});
}

// An exchange that took the standard offer.
DhcpExchange Offered() {
  DhcpExchange exchange("eth7", kClientMac, kXid);
  EXPECT_FALSE(Feed(exchange, Reply(DhcpMessageType::kOffer)));
  EXPECT_EQ(Sent(exchange).Type(), DhcpMessageType::kRequest);
  return exchange;
}

TEST(DhcpExchangeTest, StartsWithABroadcastDiscoverAskingForOption121) {
  DhcpExchange exchange("eth7", kClientMac, kXid);
  const auto discover = Sent(exchange);
  EXPECT_EQ(discover.op, 1);
  EXPECT_EQ(discover.xid, kXid);
  EXPECT_EQ(discover.chaddr, kClientMac);
  EXPECT_EQ(discover.flags, 0x8000);
  EXPECT_EQ(discover.ciaddr, 0u);
  EXPECT_EQ(discover.Type(), DhcpMessageType::kDiscover);
  const auto& asked = discover.options.at(dhcp_option::kParameterRequestList);
  EXPECT_NE(std::find(asked.begin(), asked.end(), 121), asked.end());
  EXPECT_NE(std::find(asked.begin(), asked.end(), 1), asked.end());
  EXPECT_FALSE(discover.options.contains(dhcp_option::kServerId));
  EXPECT_EQ(exchange.Awaiting(), "offer");
}

TEST(DhcpExchangeTest, RequestsTheOfferedAddressFromTheOfferingServer) {
  auto exchange = Offered();
  const auto request = Sent(exchange);
  EXPECT_EQ(request.xid, kXid);
  EXPECT_EQ(request.flags, 0x8000);
  EXPECT_EQ(request.chaddr, kClientMac);
  EXPECT_EQ(request.ciaddr, 0u) << "SELECTING: no ciaddr";
  EXPECT_EQ(request.AddressOption(dhcp_option::kRequestedAddress), kOffered);
  EXPECT_EQ(request.AddressOption(dhcp_option::kServerId), kServer);
  EXPECT_TRUE(request.options.contains(dhcp_option::kParameterRequestList));
  EXPECT_EQ(exchange.Awaiting(), "acknowledgement from 192.0.2.1");
}

TEST(DhcpExchangeTest, IgnoresRepliesThatAreNotAnOfferForIt) {
  DhcpExchange exchange("eth7", kClientMac, kXid);
  const auto discover = exchange.Outgoing();
  auto other_xid = Reply(DhcpMessageType::kOffer);
  other_xid.xid = kXid + 1;
  auto other_client = Reply(DhcpMessageType::kOffer);
  other_client.chaddr[5] = 0x02;
  auto request = Reply(DhcpMessageType::kOffer);
  request.op = 1;
  auto no_address = Reply(DhcpMessageType::kOffer);
  no_address.yiaddr = 0;
  auto no_server = Reply(DhcpMessageType::kOffer);
  no_server.options.erase(dhcp_option::kServerId);
  auto no_type = Reply(DhcpMessageType::kOffer);
  no_type.options.erase(dhcp_option::kMessageType);
  for (const auto& foreign : {other_xid, other_client, request, no_address, no_server, no_type,
                              Reply(DhcpMessageType::kAck), Reply(DhcpMessageType::kNak)}) {
    EXPECT_FALSE(Feed(exchange, foreign));
  }
  EXPECT_FALSE(exchange.OnReply(Bytes({1, 2, 3}), "")) << "not DHCP";
  EXPECT_EQ(exchange.Outgoing(), discover) << "still discovering";
  EXPECT_EQ(exchange.Awaiting(), "offer");
}

TEST(DhcpExchangeTest, IgnoresOtherServersAndLaterOffersAfterTheOffer) {
  auto exchange = Offered();
  const auto request = exchange.Outgoing();
  EXPECT_FALSE(Feed(exchange, Reply(DhcpMessageType::kAck, 0xc0000202)));
  EXPECT_FALSE(Feed(exchange, Reply(DhcpMessageType::kNak, 0xc0000202)));  // no throw either
  EXPECT_FALSE(Feed(exchange, Reply(DhcpMessageType::kOffer, 0xc0000202)));
  EXPECT_FALSE(Feed(exchange, Reply(DhcpMessageType::kOffer)));
  auto ack_no_server = Reply(DhcpMessageType::kAck);
  ack_no_server.options.erase(dhcp_option::kServerId);
  EXPECT_FALSE(Feed(exchange, ack_no_server));
  auto ack_other_xid = Reply(DhcpMessageType::kAck);
  ack_other_xid.xid = 1;
  EXPECT_FALSE(Feed(exchange, ack_other_xid));
  EXPECT_EQ(exchange.Outgoing(), request);
}

TEST(DhcpExchangeTest, AnAckGivesTheLease) {
  auto exchange = Offered();
  auto ack = Reply(DhcpMessageType::kAck);
  ack.options[dhcp_option::kSubnetMask] = Bytes({255, 255, 255, 0});
  ack.options[dhcp_option::kLeaseTime] = Bytes({0, 0, 0x0e, 0x10});
  ack.options[dhcp_option::kRouter] = Bytes({192, 0, 2, 99});  // ignored, as DRANET does
  ack.options[dhcp_option::kClasslessStaticRoute] = Bytes({16, 10, 20, 192, 0, 2, 254, 24, 198, 51, 100, 0, 0, 0, 0});
  const auto lease = Feed(exchange, ack);
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->address, "192.0.2.50/24");
  EXPECT_EQ(lease->server_id, "192.0.2.1");
  EXPECT_EQ(lease->server_mac, "02:00:00:00:5e:01");
  EXPECT_EQ(lease->client_mac, "02:00:00:00:d0:01");
  EXPECT_EQ(lease->lease_seconds, 3600u);
  EXPECT_EQ(lease->routes, (std::vector<Route>{R("10.20.0.0/16", "192.0.2.254"), R("198.51.100.0/24", "")}));
}

TEST(DhcpExchangeTest, AnAckWithoutMaskOrRoutesGivesAHostAddress) {
  auto exchange = Offered();
  const auto lease = Feed(exchange, Reply(DhcpMessageType::kAck));
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->address, "192.0.2.50/32");
  EXPECT_TRUE(lease->routes.empty());
  EXPECT_EQ(lease->lease_seconds, 0u);
}

TEST(DhcpExchangeTest, AMalformedOption121IsIgnoredNotFatal) {
  auto exchange = Offered();
  auto ack = Reply(DhcpMessageType::kAck);
  ack.options[dhcp_option::kClasslessStaticRoute] = Bytes({8, 10, 192, 0, 2, 1, 40, 1, 2, 3, 4, 5, 192, 0, 2, 1});
  const auto lease = Feed(exchange, ack);
  ASSERT_TRUE(lease);
  EXPECT_TRUE(lease->routes.empty());
}

TEST(DhcpExchangeTest, ANakFromTheChosenServerFailsNamingTheInterface) {
  auto exchange = Offered();
  auto nak = Reply(DhcpMessageType::kNak);
  nak.yiaddr = 0;
  const std::string text = "address in use";
  nak.options[dhcp_option::kMessage] = std::vector<uint8_t>(text.begin(), text.end());
  try {
    Feed(exchange, nak);
    FAIL() << "a NAK was accepted";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "eth7")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "NAK")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "192.0.2.50")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "address in use")) << e.what();
  }
}

TEST(DhcpExchangeTest, AnInvalidSubnetMaskFailsNamingTheInterface) {
  for (const auto& mask : {Bytes({255, 0, 255, 0}), Bytes({0, 0, 0, 0}), Bytes({255, 255, 255})}) {
    auto exchange = Offered();
    auto ack = Reply(DhcpMessageType::kAck);
    ack.options[dhcp_option::kSubnetMask] = mask;
    try {
      Feed(exchange, ack);
      ADD_FAILURE() << "mask accepted: " << int(mask[0]) << "." << int(mask[1]) << " (" << mask.size() << " bytes)";
    } catch (const InjectError& e) {
      EXPECT_TRUE(Contains(e.what(), "eth7")) << e.what();
      EXPECT_TRUE(Contains(e.what(), "subnet mask")) << e.what();
    }
  }
}

// The bytes of a 4-byte option.
std::vector<uint8_t> U32(uint32_t v) {
  return Bytes({static_cast<int>(v >> 24), static_cast<int>(v >> 16 & 0xff), static_cast<int>(v >> 8 & 0xff),
                static_cast<int>(v & 0xff)});
}

// Feeds `ack` to an exchange that took the standard offer; the InjectError's message, or
// "accepted" when it gave a lease.
std::string Refusal(const DhcpMessage& ack) {
  auto exchange = Offered();
  try {
    return Feed(exchange, ack) ? "accepted" : "ignored";
  } catch (const InjectError& e) {
    return e.what();
  }
}

// Addresses no host can have, with the subnet mask they come with and what the refusal says.
struct Unusable {
  uint32_t address;
  std::optional<uint32_t> mask;
  std::string text;  // the address as the message gives it
  std::string why;
};
const std::vector<Unusable> kUnusableAddresses = {
    {0xffffffff, std::nullopt, "255.255.255.255/32", "the limited broadcast address"},
    {0xc00002ff, 0xffffff00, "192.0.2.255/24", "the broadcast address of 192.0.2.0/24"},
    {0xc00003ff, 0xfffffe00, "192.0.3.255/23", "the broadcast address of 192.0.2.0/23"},
    {0x0a0000ff, 0xffffff00, "10.0.0.255/24", "the broadcast address of 10.0.0.0/24"},
    {0x7f000001, 0xffffff00, "127.0.0.1/24", "loopback"},
    {0x7f0a0b0c, std::nullopt, "127.10.11.12/32", "loopback"},
    {0xe0000005, std::nullopt, "224.0.0.5/32", "multicast"},
    {0xeffffffa, 0xffffff00, "239.255.255.250/24", "multicast"},
    {0x00000000, 0xffffff00, "0.0.0.0/24", "unspecified"},
    {0xf0000001, std::nullopt, "240.0.0.1/32", "reserved (240.0.0.0/4)"},
    {0xfffffffe, std::nullopt, "255.255.255.254/32", "reserved (240.0.0.0/4)"},
};

TEST(DhcpExchangeTest, AnAckWithAnUnusableAddressIsRefusedNamingInterfaceServerAndAddress) {
  for (const auto& bad : kUnusableAddresses) {
    auto ack = Reply(DhcpMessageType::kAck);
    ack.yiaddr = bad.address;
    if (bad.mask) ack.options[dhcp_option::kSubnetMask] = U32(*bad.mask);
    const std::string refusal = Refusal(ack);
    EXPECT_TRUE(Contains(refusal, "DHCP on eth7: server 192.0.2.1 acknowledged address " + bad.text + ", which is " +
                                      bad.why))
        << refusal;
    EXPECT_TRUE(Contains(refusal, "refusing it")) << refusal;
  }
}

TEST(DhcpExchangeTest, BroadcastLikeAddressesOfPointToPointAndHostPrefixesAreUsable) {
  // RFC 3021: a /31 has no broadcast address; a /32 (no option 1) neither. A /23's .255 in
  // its lower half is an ordinary address.
  for (const auto& [address, mask, cidr] :
       std::vector<std::tuple<uint32_t, std::optional<uint32_t>, std::string>>{
           {0xc00002ff, 0xfffffffe, "192.0.2.255/31"},
           {0xc00002ff, std::nullopt, "192.0.2.255/32"},
           {0xc00002ff, 0xfffffe00, "192.0.2.255/23"},
           {0xc0000200, 0xffffff00, "192.0.2.0/24"},
       }) {
    auto exchange = Offered();
    auto ack = Reply(DhcpMessageType::kAck);
    ack.yiaddr = address;
    if (mask) ack.options[dhcp_option::kSubnetMask] = U32(*mask);
    const auto lease = Feed(exchange, ack);
    ASSERT_TRUE(lease) << cidr;
    EXPECT_EQ(lease->address, cidr);
  }
}

TEST(DhcpExchangeTest, AnOfferWithAnUnusableAddressIsPassedOverForAnotherServer) {
  for (const auto& bad : kUnusableAddresses) {
    DhcpExchange exchange("eth7", kClientMac, kXid);
    const auto discover = exchange.Outgoing();
    auto offer = Reply(DhcpMessageType::kOffer);
    offer.yiaddr = bad.address;
    if (bad.mask) offer.options[dhcp_option::kSubnetMask] = U32(*bad.mask);
    EXPECT_FALSE(Feed(exchange, offer));
    EXPECT_EQ(exchange.Outgoing(), discover) << bad.text << ": still discovering";
    EXPECT_EQ(exchange.Awaiting(), "offer");
    EXPECT_EQ(exchange.IgnoredOffer(), "server 192.0.2.1 offered address " + bad.text + ", which is " + bad.why);
    // Another server's usable offer is taken.
    EXPECT_FALSE(Feed(exchange, Reply(DhcpMessageType::kOffer, 0xc0000202)));
    EXPECT_EQ(exchange.Awaiting(), "acknowledgement from 192.0.2.2") << bad.text;
    EXPECT_EQ(Sent(exchange).AddressOption(dhcp_option::kRequestedAddress), kOffered);
  }
}

TEST(DhcpExchangeTest, ALeaseUnderTheMinimumIsRefused) {
  ASSERT_EQ(kMinDhcpLeaseSeconds, 60u);
  for (uint32_t seconds : {0u, 1u, 59u}) {
    auto ack = Reply(DhcpMessageType::kAck);
    ack.options[dhcp_option::kLeaseTime] = U32(seconds);
    const std::string refusal = Refusal(ack);
    EXPECT_TRUE(Contains(refusal, "DHCP on eth7: server 192.0.2.1 acknowledged address 192.0.2.50/32 for " +
                                      std::to_string(seconds) + " s, under the 60 s minimum"))
        << refusal;
    EXPECT_TRUE(Contains(refusal, "does not renew")) << refusal;

    DhcpExchange exchange("eth7", kClientMac, kXid);
    auto offer = Reply(DhcpMessageType::kOffer);
    offer.options[dhcp_option::kLeaseTime] = U32(seconds);
    EXPECT_FALSE(Feed(exchange, offer));
    EXPECT_EQ(exchange.Awaiting(), "offer") << seconds << " s offer passed over";
    EXPECT_TRUE(Contains(exchange.IgnoredOffer(), "for " + std::to_string(seconds) + " s")) << exchange.IgnoredOffer();
  }
}

TEST(DhcpExchangeTest, AMalformedLeaseTimeIsRefused) {
  for (const auto& option : {Bytes({0, 0, 0x0e}), Bytes({0, 0, 0x0e, 0x10, 0}), Bytes({})}) {
    auto ack = Reply(DhcpMessageType::kAck);
    ack.options[dhcp_option::kLeaseTime] = option;
    const std::string refusal = Refusal(ack);
    EXPECT_TRUE(Contains(refusal, "eth7")) << refusal;
    EXPECT_TRUE(Contains(refusal, "malformed lease time (option 51 of " + std::to_string(option.size()) + " bytes)"))
        << refusal;
  }
}

TEST(DhcpExchangeTest, MinimumInfiniteAndAbsentLeaseTimesAreTaken) {
  for (const auto& [option, seconds] : std::vector<std::pair<std::optional<uint32_t>, uint32_t>>{
           {60u, 60u}, {0xffffffffu, 0xffffffffu}, {std::nullopt, 0u}}) {
    auto exchange = Offered();
    auto ack = Reply(DhcpMessageType::kAck);
    if (option) ack.options[dhcp_option::kLeaseTime] = U32(*option);
    const auto lease = Feed(exchange, ack);
    ASSERT_TRUE(lease) << seconds;
    EXPECT_EQ(lease->lease_seconds, seconds);
  }
}

TEST(DhcpExchangeTest, AClasslessRouteViaAnUnusableGatewayIsRefused) {
  for (const auto& [gateway, text, why] : std::vector<std::tuple<std::vector<uint8_t>, std::string, std::string>>{
           {Bytes({127, 0, 0, 1}), "127.0.0.1", "loopback"},
           {Bytes({224, 0, 0, 1}), "224.0.0.1", "multicast"},
           {Bytes({255, 255, 255, 255}), "255.255.255.255", "the limited broadcast address"},
           {Bytes({192, 0, 2, 255}), "192.0.2.255", "the broadcast address of 192.0.2.0/24"},
           {Bytes({240, 1, 2, 3}), "240.1.2.3", "reserved (240.0.0.0/4)"},
       }) {
    auto ack = Reply(DhcpMessageType::kAck);
    ack.options[dhcp_option::kSubnetMask] = Bytes({255, 255, 255, 0});
    auto routes = Bytes({24, 198, 51, 100, 0, 0, 0, 0, 16, 10, 20});  // an on-link route first: fine
    routes.insert(routes.end(), gateway.begin(), gateway.end());
    ack.options[dhcp_option::kClasslessStaticRoute] = routes;
    const std::string refusal = Refusal(ack);
    EXPECT_TRUE(Contains(refusal, "DHCP on eth7: server 192.0.2.1 acknowledged address 192.0.2.50/24 with a classless "
                                  "static route (option 121) to 10.20.0.0/16 via " +
                                      text + ", which is " + why))
        << refusal;

    DhcpExchange exchange("eth7", kClientMac, kXid);
    auto offer = Reply(DhcpMessageType::kOffer);
    offer.options = ack.options;
    offer.options[dhcp_option::kMessageType] = {static_cast<uint8_t>(DhcpMessageType::kOffer)};
    EXPECT_FALSE(Feed(exchange, offer));
    EXPECT_EQ(exchange.Awaiting(), "offer") << text << ": offer passed over";
    EXPECT_TRUE(Contains(exchange.IgnoredOffer(), "via " + text)) << exchange.IgnoredOffer();
  }
}

TEST(DhcpReleaseTest, ReleasesTheLeasedAddressToTheServer) {
  DhcpLease lease;
  lease.address = "192.0.2.50/24";
  lease.server_id = "192.0.2.1";
  lease.client_mac = "02:00:00:00:d0:01";
  const auto release = ParseDhcpMessage(BuildDhcpRelease("eth7", lease, kXid));
  ASSERT_TRUE(release);
  EXPECT_EQ(release->op, 1);
  EXPECT_EQ(release->xid, kXid);
  EXPECT_EQ(release->Type(), DhcpMessageType::kRelease);
  EXPECT_EQ(release->ciaddr, kOffered);
  EXPECT_EQ(release->chaddr, kClientMac);
  EXPECT_EQ(release->flags, 0);
  EXPECT_EQ(release->AddressOption(dhcp_option::kServerId), kServer);
  EXPECT_FALSE(release->options.contains(dhcp_option::kClientId));
}

// A client identifier (a child interface's lease on its parent): option 61,
// type 0 then the identifier, in the DISCOVER, the REQUEST, the lease and
// its RELEASE.
TEST(DhcpExchangeTest, AClientIdentifierGoesIntoEveryMessageAndTheLease) {
  const std::vector<uint8_t> option{0, 'c', 'h', 'i', 'l', 'd', '/', '1'};
  DhcpExchange exchange("eth7", kClientMac, kXid, "child/1");
  EXPECT_EQ(Sent(exchange).options.at(dhcp_option::kClientId), option);
  EXPECT_FALSE(Feed(exchange, Reply(DhcpMessageType::kOffer)));
  EXPECT_EQ(Sent(exchange).options.at(dhcp_option::kClientId), option);
  const auto lease = Feed(exchange, Reply(DhcpMessageType::kAck));
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->client_id, "child/1");
  const auto release = ParseDhcpMessage(BuildDhcpRelease("eth7", *lease, kXid));
  ASSERT_TRUE(release);
  EXPECT_EQ(release->options.at(dhcp_option::kClientId), option);
  EXPECT_FALSE(Sent(DhcpExchange("eth7", kClientMac, kXid)).options.contains(dhcp_option::kClientId));
}

TEST(DhcpReleaseTest, ALeaseThatDoesNotParseFailsNamingTheInterface) {
  const DhcpLease good{"192.0.2.50/24", "192.0.2.1", "", "02:00:00:00:d0:01", {}, 0};
  ASSERT_NO_THROW(BuildDhcpRelease("eth7", good, kXid));
  auto bad_address = good, bad_server = good, bad_mac = good, v6 = good;
  bad_address.address = "";
  bad_server.server_id = "192.0.2";
  bad_mac.client_mac = "02:00:00:00:d0";
  v6.address = "2001:db8::5/64";
  for (const auto& lease : {bad_address, bad_server, bad_mac, v6}) {
    try {
      BuildDhcpRelease("eth7", lease, kXid);
      ADD_FAILURE() << "accepted " << lease.address << " " << lease.server_id << " " << lease.client_mac;
    } catch (const InjectError& e) {
      EXPECT_TRUE(Contains(e.what(), "eth7")) << e.what();
    }
  }
  auto bad_server_mac = good;
  bad_server_mac.server_mac = "zz:00:00:00:00:01";
  EXPECT_THROW(ReleaseDhcpLease("eth7", bad_server_mac), InjectError);
}

// ---- A real DHCP server ----

constexpr const char* kDnsmasq = testing::kDnsmasqPath;
constexpr const char* kServerMacText = "02:00:00:00:5e:01";
constexpr const char* kClientMacText = "02:00:00:00:d0:01";
constexpr auto kTimeout = std::chrono::milliseconds(5000);

using testing::Eventually;
using testing::ReadAll;

// A server and a client namespace joined by a veth pair: dhs0 (192.0.2.1/24,
// up) in the server's, dhc0 (down) in the client's.
class DnsmasqTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces, packet sockets)";
    if (!std::filesystem::exists(kDnsmasq)) GTEST_SKIP() << "needs " << kDnsmasq << " (Debian package dnsmasq-base)";
    if (!Ok("ip netns list")) GTEST_SKIP() << "needs iproute2 with `ip netns`";
    static std::atomic<int> sequence{0};
    const std::string id = std::to_string(::getpid()) + "-" + std::to_string(sequence++);
    server_ns_ = "dranet-dhcps-" + id;
    client_ns_ = "dranet-dhcpc-" + id;
    dir_ = std::filesystem::temp_directory_path() / ("dranet-dhcp-" + id);
    std::filesystem::create_directories(dir_);
    dnsmasq_ = std::make_unique<testing::DnsmasqServer>(dir_);
    ASSERT_TRUE(Ok("ip netns add " + server_ns_));
    ASSERT_TRUE(Ok("ip netns add " + client_ns_));
    ASSERT_TRUE(Ok("ip -n " + client_ns_ + " link add dhc0 address " + kClientMacText + " type veth peer name dhs0 address " +
                   kServerMacText + " netns " + server_ns_));
    ASSERT_TRUE(Ok("ip -n " + server_ns_ + " addr add 192.0.2.1/24 dev dhs0"));
    ASSERT_TRUE(Ok("ip -n " + server_ns_ + " link set dhs0 up"));
  }

  void TearDown() override {
    StopDnsmasq();
    if (!client_ns_.empty()) Ok("ip netns del " + client_ns_);
    if (!server_ns_.empty()) Ok("ip netns del " + server_ns_);
    if (!dir_.empty()) {
      if (HasFailure()) std::cerr << "dnsmasq log:\n" << ReadAll(dir_ / "dnsmasq.log");
      std::filesystem::remove_all(dir_);
    }
  }

  // dnsmasq on dhs0 handing out `range` (first,last) with two option-121 routes.
  void StartDnsmasq(const std::string& range = "192.0.2.50,192.0.2.50", const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--dhcp-option=121,10.20.0.0/16,192.0.2.254,198.51.100.0/24,0.0.0.0"};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_NO_THROW(dnsmasq_->Start(server_ns_, "dhs0", range, args));
  }

  void StopDnsmasq() {
    if (dnsmasq_) dnsmasq_->Stop();
  }

  void SetClientUp() { ASSERT_TRUE(Ok("ip -n " + client_ns_ + " link set dhc0 up")); }

  // Whether dhc0 is administratively up: UP among the flags `ip -o link` shows in <...>.
  bool ClientIsUp() {
    const std::string link = testing::Capture("ip -n " + client_ns_ + " -o link show dhc0");
    const auto open = link.find('<'), close = link.find('>');
    EXPECT_TRUE(open != std::string::npos && close != std::string::npos && open < close) << link;
    if (open == std::string::npos || close == std::string::npos || open > close) return false;
    std::stringstream flags(link.substr(open + 1, close - open - 1));
    for (std::string flag; std::getline(flags, flag, ',');) {
      if (flag == "UP") return true;
    }
    return false;
  }

  // Runs `fn` on a thread inside the client namespace; rethrows its exception.
  void InClient(const std::function<void()>& fn) {
    RunInNetns(OpenNetns("/var/run/netns/" + client_ns_), fn);
  }

  DhcpLease Request(std::chrono::milliseconds timeout = kTimeout, std::stop_token stop = {},
                    const std::string& client_id = {}) {
    DhcpLease lease;
    InClient([&] { lease = RequestDhcpLease("dhc0", timeout, stop, client_id); });
    return lease;
  }

  std::string Leases() { return dnsmasq_->Leases(); }

  std::string server_ns_, client_ns_;
  std::filesystem::path dir_;
  std::unique_ptr<testing::DnsmasqServer> dnsmasq_;
};

TEST_F(DnsmasqTest, LeasesAnAddressWithMaskRoutesAndServerThenReleasesIt) {
  StartDnsmasq();
  SetClientUp();
  const DhcpLease lease = Request();
  EXPECT_EQ(lease.address, "192.0.2.50/24");
  EXPECT_EQ(lease.server_id, "192.0.2.1");
  EXPECT_EQ(lease.server_mac, kServerMacText);
  EXPECT_EQ(lease.client_mac, kClientMacText);
  EXPECT_EQ(lease.lease_seconds, 3600u);
  EXPECT_EQ(lease.routes, (std::vector<Route>{R("10.20.0.0/16", "192.0.2.254"), R("198.51.100.0/24", "")}));
  ASSERT_TRUE(Eventually([&] { return Contains(Leases(), "192.0.2.50"); })) << Leases();
  EXPECT_TRUE(Contains(Leases(), kClientMacText)) << Leases();

  InClient([&] { ReleaseDhcpLease("dhc0", lease); });
  EXPECT_TRUE(Eventually([&] { return !Contains(Leases(), "192.0.2.50"); })) << "still leased:\n" << Leases();

  // The range holds one address: another client gets it only because it was freed.
  ASSERT_TRUE(Ok("ip -n " + client_ns_ + " link set dhc0 address 02:00:00:00:d0:02"));
  const DhcpLease second = Request();
  EXPECT_EQ(second.address, "192.0.2.50/24");
  EXPECT_EQ(second.client_mac, "02:00:00:00:d0:02");
}

TEST_F(DnsmasqTest, ASingleAddressRangeHoldsOneLeaseUntilReleased) {
  // What the release test above relies on: without a release, a second
  // client finds the range exhausted.
  StartDnsmasq();
  SetClientUp();
  Request();
  ASSERT_TRUE(Ok("ip -n " + client_ns_ + " link set dhc0 address 02:00:00:00:d0:02"));
  try {
    Request(std::chrono::milliseconds(2500));
    FAIL() << "a second lease from a single-address range";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "no offer within")) << e.what();
  }
}

// Two client identifiers on one interface (one MAC) are two clients to the
// server: the single-address range gives the second nothing until the
// first's lease, released under its identifier, is free.
TEST_F(DnsmasqTest, AClientIdentifierIsALeaseOfItsOwnOnTheSameInterface) {
  StartDnsmasq();
  SetClientUp();
  const DhcpLease first = Request(kTimeout, {}, "dranet/claim-a/dev/share-a");
  EXPECT_EQ(first.address, "192.0.2.50/24");
  EXPECT_EQ(first.client_id, "dranet/claim-a/dev/share-a");
  try {
    Request(std::chrono::milliseconds(2500), {}, "dranet/claim-b/dev/share-b");
    FAIL() << "a second identifier got the single address the first holds";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "no offer within")) << e.what();
  }
  InClient([&] { ReleaseDhcpLease("dhc0", first); });
  EXPECT_TRUE(Eventually([&] { return !Contains(Leases(), "192.0.2.50"); })) << "still leased:\n" << Leases();
  EXPECT_EQ(Request(kTimeout, {}, "dranet/claim-b/dev/share-b").address, "192.0.2.50/24");
}

TEST_F(DnsmasqTest, RequestsAsSoonAsOffered) {
  // Under the one-second retransmission interval: the REQUEST must follow
  // the OFFER at once rather than wait for a retransmission.
  StartDnsmasq();
  SetClientUp();
  EXPECT_EQ(Request(std::chrono::milliseconds(900)).address, "192.0.2.50/24");
}

TEST_F(DnsmasqTest, RetransmitsUntilAServerAnswers) {
  SetClientUp();
  StartDnsmasq("192.0.2.50,192.0.2.50", {"--dhcp-host=" + std::string(kClientMacText) + ",ignore"});
  auto lease = std::async(std::launch::async, [&] { return Request(); });
  // The first DISCOVER reaches a server that ignores this client ...
  ASSERT_TRUE(Eventually([&] { return Contains(ReadAll(dir_ / "dnsmasq.log"), "ignored"); }))
      << ReadAll(dir_ / "dnsmasq.log");
  // ... which makes way for one that answers a later DISCOVER.
  StopDnsmasq();
  StartDnsmasq();
  EXPECT_EQ(lease.get().address, "192.0.2.50/24");
}

TEST_F(DnsmasqTest, LeasesOnALinkThatIsDownAndPutsItBackDown) {
  StartDnsmasq();
  ASSERT_FALSE(ClientIsUp());
  const DhcpLease lease = Request();
  EXPECT_EQ(lease.address, "192.0.2.50/24");
  EXPECT_FALSE(ClientIsUp()) << "the link was left up";
}

TEST_F(DnsmasqTest, LeavesALinkThatIsUpUp) {
  StartDnsmasq();
  SetClientUp();
  EXPECT_EQ(Request().address, "192.0.2.50/24");
  EXPECT_TRUE(ClientIsUp());
  try {
    StopDnsmasq();
    Request(std::chrono::milliseconds(1000));
    FAIL() << "a lease without a server";
  } catch (const InjectError&) {
  }
  EXPECT_TRUE(ClientIsUp());
}

TEST_F(DnsmasqTest, AFailedExchangeLeavesALinkThatWasDownDown) {
  ASSERT_FALSE(ClientIsUp());
  try {
    Request(std::chrono::milliseconds(1500));
    FAIL() << "a lease without a server";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "no offer within 1500 ms")) << e.what();
  }
  EXPECT_FALSE(ClientIsUp()) << "the link was left up after no offer";

  std::stop_source stop;
  stop.request_stop();
  try {
    Request(std::chrono::seconds(3), stop.get_token());
    FAIL() << "a lease without a server";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "stopped")) << e.what();
  }
  EXPECT_FALSE(ClientIsUp()) << "the link was left up after a stop";
}

TEST_F(DnsmasqTest, AnUnusableOfferIsPassedOverAndNamedAtTheTimeout) {
  // The only server offers a route via loopback: no lease, and the error says why.
  StartDnsmasq("192.0.2.50,192.0.2.50", {"--dhcp-option=121,10.30.0.0/16,127.0.0.1"});
  try {
    Request(std::chrono::milliseconds(2500));
    FAIL() << "a lease with a route via loopback";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "dhc0: no offer within 2500 ms")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "ignored: server 192.0.2.1 offered address 192.0.2.50/24 with a classless static "
                                   "route (option 121) to 10.30.0.0/16 via 127.0.0.1, which is loopback"))
        << e.what();
  }
  EXPECT_FALSE(ClientIsUp());
}

TEST_F(DnsmasqTest, ReleasesOnALinkThatIsDownAndPutsItBackDown) {
  // At unprepare the netdev is back on the host in its recorded state: down.
  StartDnsmasq();
  const DhcpLease lease = Request();
  ASSERT_TRUE(Eventually([&] { return Contains(Leases(), "192.0.2.50"); })) << Leases();
  ASSERT_FALSE(ClientIsUp());
  InClient([&] { ReleaseDhcpLease("dhc0", lease); });
  EXPECT_TRUE(Eventually([&] { return !Contains(Leases(), "192.0.2.50"); })) << "still leased:\n" << Leases();
  EXPECT_FALSE(ClientIsUp()) << "the link was left up";
}

TEST_F(DnsmasqTest, AReleaseWithoutCarrierFailsAndPutsTheLinkBackDown) {
  StartDnsmasq();
  const DhcpLease lease = Request();
  ASSERT_TRUE(Ok("ip -n " + server_ns_ + " link set dhs0 down"));  // no carrier on dhc0 now
  try {
    InClient([&] { ReleaseDhcpLease("dhc0", lease); });
    FAIL() << "a release reported sent on a link without carrier";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "DHCP release on dhc0: sending to 192.0.2.1: the link has no carrier")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "the server keeps the lease until it expires")) << e.what();
  }
  EXPECT_FALSE(ClientIsUp()) << "the link was left up";
  EXPECT_TRUE(Contains(Leases(), "192.0.2.50")) << Leases();
}

TEST_F(DnsmasqTest, NoServerFailsAfterTheTimeoutNamingTheInterface) {
  SetClientUp();
  const auto timeout = std::chrono::milliseconds(1500);
  const auto start = std::chrono::steady_clock::now();
  try {
    Request(timeout);
    FAIL() << "a lease without a server";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "dhc0")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "no offer within 1500 ms")) << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, timeout);
}

TEST_F(DnsmasqTest, AStopRequestEndsTheWait) {
  SetClientUp();
  std::stop_source stop;
  stop.request_stop();
  try {
    Request(std::chrono::seconds(3), stop.get_token());
    FAIL() << "a lease without a server";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "dhc0")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "stopped")) << e.what();
  }
}

TEST_F(DnsmasqTest, RefusesMissingAndNonEthernetInterfaces) {
  try {
    InClient([] { RequestDhcpLease("nosuch0", kTimeout); });
    FAIL() << "no error for a missing interface";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "nosuch0")) << e.what();
  }
  try {
    InClient([] { RequestDhcpLease("lo", kTimeout); });
    FAIL() << "no error for loopback";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "lo: not an Ethernet interface")) << e.what();
  }
  try {
    InClient([] { ReleaseDhcpLease("nosuch0", DhcpLease{"192.0.2.50/24", "192.0.2.1", "", kClientMacText, {}, 0}); });
    FAIL() << "no error releasing on a missing interface";
  } catch (const InjectError& e) {
    EXPECT_TRUE(Contains(e.what(), "nosuch0")) << e.what();
  }
}

}  // namespace
}  // namespace dranet::inject
