// dhcp_message_fuzz: the DHCPv4 client's parsing of what arrives on the wire
// (core/inject/dhcp_client.h) on arbitrary bytes.
//
// The input is a frame as the packet socket delivers it (an IPv4 datagram);
// when DhcpPayloadOf finds no DHCP payload in it, the whole input is taken
// as the payload instead. The payload goes to ParseDhcpMessage, its option
// 121 to ParseClasslessRoutes, and to a DhcpExchange whose xid and MAC are
// the message's own, both before and after an offer from the message's
// server.
// Checked: nothing but InjectError is thrown; a parsed message builds to
// bytes that parse back to the same message; every route parsed is a
// canonical IPv4 CIDR.
#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "fuzz_support.h"
#include "inject/dhcp_client.h"
#include "inject/pod_netns_applier.h"

namespace {

using namespace dranet;
using namespace dranet::inject;

void CheckRoute(const Route& route) {
  const auto slash = route.destination.find('/');
  fuzz::Check(slash != std::string::npos, "route without a prefix length");
  in_addr address{};
  fuzz::Check(::inet_pton(AF_INET, route.destination.substr(0, slash).c_str(), &address) == 1,
              "route destination is not IPv4");
  const int width = std::stoi(route.destination.substr(slash + 1));
  fuzz::Check(width >= 0 && width <= 32, "route width out of range");
  const uint32_t host_bits = width == 32 ? 0 : ~uint32_t{0} >> width;
  fuzz::Check((ntohl(address.s_addr) & host_bits) == 0, "route destination has host bits");
  fuzz::Check(route.gateway.empty() || ::inet_pton(AF_INET, route.gateway.c_str(), &address) == 1,
              "route gateway is not IPv4");
}

void Converse(const DhcpMessage& message, std::span<const uint8_t> payload) {
  try {
    DhcpExchange fresh("fuzz0", message.chaddr, message.xid);
    if (const auto lease = fresh.OnReply(payload, "02:00:00:00:00:01")) fuzz::Fail("a lease without an offer");

    DhcpMessage offer = message;
    offer.options[dhcp_option::kMessageType] = {static_cast<uint8_t>(DhcpMessageType::kOffer)};
    // An offer the exchange takes (a usable address, no mask, lease time or
    // routes to refuse it for), so that the fuzzed message reaches the ACK's
    // checks.
    offer.yiaddr = 0x0a000002;  // 10.0.0.2
    offer.options.erase(dhcp_option::kSubnetMask);
    offer.options.erase(dhcp_option::kLeaseTime);
    offer.options.erase(dhcp_option::kClasslessStaticRoute);
    DhcpExchange offered("fuzz0", message.chaddr, message.xid);
    (void)offered.OnReply(BuildDhcpMessage(offer), "02:00:00:00:00:01");
    if (const auto lease = offered.OnReply(payload, "02:00:00:00:00:01")) {
      for (const auto& route : lease->routes) CheckRoute(route);
    }
  } catch (const InjectError& e) {
    fuzz::Check(e.what()[0] != '\0', "InjectError without a message");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> input(data, size);
  const std::span<const uint8_t> payload = DhcpPayloadOf(input).value_or(input);
  const auto message = ParseDhcpMessage(payload);
  if (!message) return 0;
  fuzz::Check(ParseDhcpMessage(BuildDhcpMessage(*message)) == message, "build then parse changes the message");
  if (const auto it = message->options.find(dhcp_option::kClasslessStaticRoute); it != message->options.end()) {
    if (const auto routes = ParseClasslessRoutes(it->second)) {
      for (const auto& route : *routes) CheckRoute(route);
    }
  }
  Converse(*message, payload);
  return 0;
}
