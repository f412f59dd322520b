// core/inject/dhcp_client.cpp — DHCPv4 wire format, the DORA conversation,
// and its packet-socket transport (see dhcp_client.h for why packet sockets).
#include "inject/dhcp_client.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <utility>

#include "base/unique_fd.h"
#include "inject/pod_netns_applier.h"

namespace dranet::inject {
namespace {

constexpr std::size_t kFixedHeaderBytes = 236;  // op .. file
constexpr std::array<uint8_t, 4> kMagicCookie = {99, 130, 83, 99};
constexpr std::size_t kMinMessageBytes = 300;  // BOOTP's minimum
constexpr uint8_t kOptionPad = 0;
constexpr uint8_t kOptionEnd = 255;
constexpr uint16_t kBroadcastFlag = 0x8000;
constexpr uint8_t kBootRequest = 1;
constexpr uint8_t kBootReply = 2;
constexpr std::size_t kIpv4HeaderBytes = 20;
constexpr std::size_t kUdpHeaderBytes = 8;
constexpr uint8_t kProtocolUdp = 17;
constexpr auto kRetransmitInterval = std::chrono::seconds(1);
constexpr std::array<uint8_t, 6> kBroadcastMac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
constexpr auto kReleaseCarrierWait = std::chrono::seconds(5);  // a NIC brought up negotiates its link
constexpr auto kCarrierPollInterval = std::chrono::milliseconds(10);

void PutU16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}
void PutU32(std::vector<uint8_t>& out, uint32_t v) {
  PutU16(out, static_cast<uint16_t>(v >> 16));
  PutU16(out, static_cast<uint16_t>(v));
}
uint16_t GetU16(std::span<const uint8_t> in, std::size_t at) {
  return static_cast<uint16_t>(in[at] << 8 | in[at + 1]);
}
uint32_t GetU32(std::span<const uint8_t> in, std::size_t at) {
  return static_cast<uint32_t>(GetU16(in, at)) << 16 | GetU16(in, at + 2);
}
// Option 61's data: type 0 (not a hardware address), then the identifier.
std::vector<uint8_t> ClientIdOption(const std::string& id) {
  std::vector<uint8_t> data(id.size() + 1, 0);
  for (std::size_t i = 0; i < id.size(); ++i) data[i + 1] = static_cast<uint8_t>(id[i]);
  return data;
}

std::vector<uint8_t> U32Bytes(uint32_t v) {
  std::vector<uint8_t> out;
  PutU32(out, v);
  return out;
}

std::string FormatIpv4(uint32_t address) {
  const in_addr in{htonl(address)};
  char text[INET_ADDRSTRLEN];
  return ::inet_ntop(AF_INET, &in, text, sizeof text);
}
std::optional<uint32_t> ParseIpv4(const std::string& text) {
  in_addr in{};
  if (::inet_pton(AF_INET, text.c_str(), &in) != 1) return std::nullopt;
  return ntohl(in.s_addr);
}

std::string FormatMac(const std::array<uint8_t, 6>& mac) {
  char text[18];
  std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
                mac[5]);
  return text;
}
std::optional<std::array<uint8_t, 6>> ParseMac(const std::string& text) {
  std::array<uint8_t, 6> mac{};
  int consumed = 0;
  if (text.size() != 17 ||
      std::sscanf(text.c_str(), "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx%n", &mac[0], &mac[1], &mac[2], &mac[3],
                  &mac[4], &mac[5], &consumed) != 6 ||
      consumed != 17) {
    return std::nullopt;
  }
  return mac;
}

// RFC 1071 ones'-complement sum, folded, not inverted.
uint32_t SumWords(std::span<const uint8_t> data, uint32_t sum = 0) {
  for (std::size_t i = 0; i + 1 < data.size(); i += 2) sum += GetU16(data, i);
  if (data.size() % 2 != 0) sum += static_cast<uint32_t>(data.back()) << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum;
}

[[noreturn]] void ThrowErrno(const std::string& context, const std::string& step) {
  throw InjectError(context + ": " + step + ": " + std::strerror(errno));
}

// A packet socket for IPv4 frames on `if_name`, and the interface's index and MAC.
struct PacketSocket {
  UniqueFd fd{-1};
  int ifindex = 0;
  std::array<uint8_t, 6> mac{};
};

PacketSocket OpenPacketSocket(const std::string& if_name, const std::string& context) {
  // Protocol 0 receives nothing until bind() picks the interface.
  PacketSocket s{UniqueFd(::socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0))};
  if (s.fd.get() < 0) ThrowErrno(context, "opening a packet socket");
  ifreq req{};
  if (if_name.empty() || if_name.size() >= sizeof req.ifr_name) throw InjectError(context + ": no such interface");
  std::memcpy(req.ifr_name, if_name.data(), if_name.size());
  if (::ioctl(s.fd.get(), SIOCGIFINDEX, &req) != 0) ThrowErrno(context, "looking up the interface");
  s.ifindex = req.ifr_ifindex;
  if (::ioctl(s.fd.get(), SIOCGIFHWADDR, &req) != 0) ThrowErrno(context, "reading the MAC address");
  if (req.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
    throw InjectError(context + ": not an Ethernet interface (ARPHRD " + std::to_string(req.ifr_hwaddr.sa_family) +
                      "); only Ethernet is supported");
  }
  std::memcpy(s.mac.data(), req.ifr_hwaddr.sa_data, s.mac.size());
  return s;
}

// Brings a link that is down up for as long as it is in scope and puts it
// back down when it goes: a DHCP exchange must leave the link's
// administrative state as it found it, whether it succeeds or not.
class LinkUpForExchange {
 public:
  // Throws InjectError (prefixed with `context`) when the flags cannot be read or set.
  LinkUpForExchange(const PacketSocket& s, const std::string& if_name, const std::string& context)
      : fd_(s.fd.get()) {
    std::memcpy(request_.ifr_name, if_name.data(), if_name.size());
    ifreq req = request_;
    if (::ioctl(fd_, SIOCGIFFLAGS, &req) != 0) ThrowErrno(context, "reading the link flags");
    if (req.ifr_flags & IFF_UP) return;
    req.ifr_flags = static_cast<short>(req.ifr_flags | IFF_UP);
    if (::ioctl(fd_, SIOCSIFFLAGS, &req) != 0) ThrowErrno(context, "bringing the link up");
    brought_up_ = true;
  }
  ~LinkUpForExchange() { (void)PutBackDown(); }
  LinkUpForExchange(const LinkUpForExchange&) = delete;
  LinkUpForExchange& operator=(const LinkUpForExchange&) = delete;

  // Puts the link back down if this brought it up (once). "" on success or when there was
  // nothing to do, else what failed.
  std::string PutBackDown() {
    if (!std::exchange(brought_up_, false)) return "";
    ifreq req = request_;
    // Only IFF_UP changes: other flags may have changed since (IFF_RUNNING, promiscuity).
    bool done = ::ioctl(fd_, SIOCGIFFLAGS, &req) == 0;
    req.ifr_flags = static_cast<short>(req.ifr_flags & ~IFF_UP);
    done = done && ::ioctl(fd_, SIOCSIFFLAGS, &req) == 0;
    return done ? "" : std::string("putting the link back down: ") + std::strerror(errno);
  }

 private:
  int fd_;
  ifreq request_{};
  bool brought_up_ = false;
};

// `message`, with what failed while putting the link back down appended, if anything did.
std::string WithRestoreFailure(const std::string& message, const std::string& restore_failure) {
  return restore_failure.empty() ? message : message + " (and " + restore_failure + ")";
}

sockaddr_ll LinkAddress(int ifindex, const std::array<uint8_t, 6>& mac) {
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_protocol = htons(ETH_P_IP);
  to.sll_ifindex = ifindex;
  to.sll_halen = static_cast<unsigned char>(mac.size());
  std::memcpy(to.sll_addr, mac.data(), mac.size());
  return to;
}

// Sends `datagram` to `mac`; false with errno set when the kernel refuses.
bool SendFrame(const PacketSocket& s, const std::vector<uint8_t>& datagram, const std::array<uint8_t, 6>& mac) {
  const sockaddr_ll to = LinkAddress(s.ifindex, mac);
  return ::sendto(s.fd.get(), datagram.data(), datagram.size(), 0, reinterpret_cast<const sockaddr*>(&to),
                  sizeof to) == static_cast<ssize_t>(datagram.size());
}

// Sends `datagram` to `mac` past the qdisc (PACKET_QDISC_BYPASS), retrying for up to `limit`.
// Through a qdisc, a frame on a link without carrier (as a NIC just brought up is, for the
// seconds it negotiates) is dropped silently and sendto() succeeds; past it, the kernel refuses
// the frame (ENOBUFS) until the link has carrier and the driver takes it, so success means the
// driver has it, and bringing the link down at once does not drop it from a queue. Such frames
// skip packet taps (tcpdump on the host does not show them). "" when sent, else why not.
std::string SendOnceRunning(const PacketSocket& s, const std::vector<uint8_t>& datagram,
                            const std::array<uint8_t, 6>& mac, std::chrono::milliseconds limit,
                            std::stop_token stop) {
  const int one = 1;
  if (::setsockopt(s.fd.get(), SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) != 0) {
    return std::string("bypassing the qdisc: ") + std::strerror(errno);
  }
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!SendFrame(s, datagram, mac)) {
    if (errno != ENOBUFS && errno != EAGAIN) return std::strerror(errno);
    if (std::chrono::steady_clock::now() >= give_up) {
      return "the link has no carrier (frames refused for " + std::to_string(limit.count()) + " ms)";
    }
    if (stop.stop_requested()) return "stopped: the unprepare's deadline passed while the link had no carrier";
    std::this_thread::sleep_for(kCarrierPollInterval);
  }
  return "";
}

uint32_t RandomXid() { return std::random_device{}(); }

// Why `address` cannot be a host's address in a subnet of `prefix` bits; "" when it can.
std::string UnusableAddress(uint32_t address, int prefix) {
  if (address == 0) return "unspecified";
  if (address == INADDR_BROADCAST) return "the limited broadcast address";
  if (address >> 24 == 127) return "loopback";
  if (address >> 28 == 0xe) return "multicast";
  if (address >> 28 == 0xf) return "reserved (240.0.0.0/4)";
  if (prefix > 0 && prefix < 31) {  // /31 and /32 have no broadcast address (RFC 3021)
    const uint32_t host_bits = ~uint32_t{0} >> prefix;
    if ((address & host_bits) == host_bits) {
      return "the broadcast address of " + FormatIpv4(address & ~host_bits) + "/" + std::to_string(prefix);
    }
  }
  return "";
}

// The lease that `reply` (an OFFER or an ACK) gives, in `lease` (address, routes, lease
// time), or what makes it unusable, phrased to follow "offered" or "acknowledged".
std::string LeaseTerms(const DhcpMessage& reply, DhcpLease& lease) {
  const std::string yiaddr = FormatIpv4(reply.yiaddr);
  int prefix = 32;
  if (const auto it = reply.options.find(dhcp_option::kSubnetMask); it != reply.options.end()) {
    const auto mask = reply.AddressOption(dhcp_option::kSubnetMask);
    prefix = mask ? std::countl_one(*mask) : 0;
    if (prefix == 0 || *mask != ~uint32_t{0} << (32 - prefix)) {
      return "address " + yiaddr + " with an invalid subnet mask (" +
             (mask ? FormatIpv4(*mask) : "option 1 of " + std::to_string(it->second.size()) + " bytes") + ")";
    }
  }
  lease.address = yiaddr + "/" + std::to_string(prefix);
  if (const std::string why = UnusableAddress(reply.yiaddr, prefix); !why.empty()) {
    return "address " + lease.address + ", which is " + why;
  }
  lease.lease_seconds = 0;
  if (const auto it = reply.options.find(dhcp_option::kLeaseTime); it != reply.options.end()) {
    if (it->second.size() != 4) {
      return "address " + lease.address + " with a malformed lease time (option 51 of " +
             std::to_string(it->second.size()) + " bytes)";
    }
    lease.lease_seconds = GetU32(it->second, 0);
    if (lease.lease_seconds < kMinDhcpLeaseSeconds) {
      return "address " + lease.address + " for " + std::to_string(lease.lease_seconds) + " s, under the " +
             std::to_string(kMinDhcpLeaseSeconds) +
             " s minimum (dranet does not renew leases: the server would soon hand the address to another client)";
    }
  }
  lease.routes.clear();
  if (const auto it = reply.options.find(dhcp_option::kClasslessStaticRoute); it != reply.options.end()) {
    lease.routes = ParseClasslessRoutes(it->second).value_or(std::vector<Route>{});
  }
  for (const Route& route : lease.routes) {
    if (route.gateway.empty()) continue;  // on-link
    if (const std::string why = UnusableAddress(*ParseIpv4(route.gateway), prefix); !why.empty()) {
      return "address " + lease.address + " with a classless static route (option 121) to " + route.destination +
             " via " + route.gateway + ", which is " + why;
    }
  }
  return "";
}

}  // namespace

std::optional<DhcpMessageType> DhcpMessage::Type() const {
  const auto it = options.find(dhcp_option::kMessageType);
  if (it == options.end() || it->second.size() != 1 || it->second[0] < 1 || it->second[0] > 8) return std::nullopt;
  return static_cast<DhcpMessageType>(it->second[0]);
}

std::optional<uint32_t> DhcpMessage::AddressOption(uint8_t code) const {
  const auto it = options.find(code);
  if (it == options.end() || it->second.size() != 4) return std::nullopt;
  return GetU32(it->second, 0);
}

std::vector<uint8_t> BuildDhcpMessage(const DhcpMessage& message) {
  std::vector<uint8_t> out;
  out.reserve(kMinMessageBytes);
  out.push_back(message.op);
  out.push_back(ARPHRD_ETHER);  // htype
  out.push_back(6);             // hlen
  out.push_back(0);             // hops
  PutU32(out, message.xid);
  PutU16(out, message.secs);
  PutU16(out, message.flags);
  for (uint32_t address : {message.ciaddr, message.yiaddr, message.siaddr, message.giaddr}) PutU32(out, address);
  out.insert(out.end(), message.chaddr.begin(), message.chaddr.end());
  out.resize(kFixedHeaderBytes, 0);  // rest of chaddr, sname, file
  out.insert(out.end(), kMagicCookie.begin(), kMagicCookie.end());
  auto put_option = [&out](uint8_t code, const std::vector<uint8_t>& data) {
    std::size_t at = 0;
    do {  // RFC 3396: longer options go in several pieces; an empty one is one empty piece
      const std::size_t piece = std::min<std::size_t>(data.size() - at, 255);
      out.push_back(code);
      out.push_back(static_cast<uint8_t>(piece));
      out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(at),
                 data.begin() + static_cast<std::ptrdiff_t>(at + piece));
      at += piece;
    } while (at < data.size());
  };
  // The message type first, as servers are used to.
  if (const auto it = message.options.find(dhcp_option::kMessageType); it != message.options.end()) {
    put_option(it->first, it->second);
  }
  for (const auto& [code, data] : message.options) {
    if (code != dhcp_option::kMessageType && code != kOptionPad && code != kOptionEnd) put_option(code, data);
  }
  out.push_back(kOptionEnd);
  if (out.size() < kMinMessageBytes) out.resize(kMinMessageBytes, kOptionPad);
  return out;
}

std::optional<DhcpMessage> ParseDhcpMessage(std::span<const uint8_t> payload) {
  constexpr std::size_t kOptionsStart = kFixedHeaderBytes + kMagicCookie.size();
  if (payload.size() < kOptionsStart) return std::nullopt;
  if (!std::equal(kMagicCookie.begin(), kMagicCookie.end(), payload.begin() + kFixedHeaderBytes)) return std::nullopt;
  if (payload[1] != ARPHRD_ETHER || payload[2] != 6) return std::nullopt;
  DhcpMessage message;
  message.op = payload[0];
  message.xid = GetU32(payload, 4);
  message.secs = GetU16(payload, 8);
  message.flags = GetU16(payload, 10);
  message.ciaddr = GetU32(payload, 12);
  message.yiaddr = GetU32(payload, 16);
  message.siaddr = GetU32(payload, 20);
  message.giaddr = GetU32(payload, 24);
  std::copy_n(payload.begin() + 28, message.chaddr.size(), message.chaddr.begin());
  std::size_t at = kOptionsStart;
  while (at < payload.size()) {
    const uint8_t code = payload[at];
    if (code == kOptionPad) {
      ++at;
      continue;
    }
    if (code == kOptionEnd) break;
    if (at + 1 >= payload.size()) return std::nullopt;
    const std::size_t length = payload[at + 1];
    if (at + 2 + length > payload.size()) return std::nullopt;
    auto& data = message.options[code];
    data.insert(data.end(), payload.begin() + static_cast<std::ptrdiff_t>(at + 2),
                payload.begin() + static_cast<std::ptrdiff_t>(at + 2 + length));
    at += 2 + length;
  }
  return message;
}

std::optional<std::vector<Route>> ParseClasslessRoutes(std::span<const uint8_t> data) {
  std::vector<Route> routes;
  std::size_t at = 0;
  while (at < data.size()) {
    const unsigned width = data[at];
    if (width > 32) return std::nullopt;
    const std::size_t octets = (width + 7) / 8;
    if (at + 1 + octets + 4 > data.size()) return std::nullopt;
    uint32_t destination = 0;
    for (std::size_t i = 0; i < octets; ++i) destination |= static_cast<uint32_t>(data[at + 1 + i]) << (24 - 8 * i);
    destination &= width == 0 ? 0 : ~uint32_t{0} << (32 - width);
    const uint32_t gateway = GetU32(data, at + 1 + octets);
    Route route;
    route.destination = FormatIpv4(destination) + "/" + std::to_string(width);
    if (gateway != 0) route.gateway = FormatIpv4(gateway);
    routes.push_back(std::move(route));
    at += 1 + octets + 4;
  }
  return routes;
}

std::vector<uint8_t> BuildDhcpDatagram(uint32_t source, uint32_t destination, std::span<const uint8_t> payload) {
  const std::size_t udp_length = kUdpHeaderBytes + payload.size();
  std::vector<uint8_t> out;
  out.reserve(kIpv4HeaderBytes + udp_length);
  out.push_back(0x45);  // version 4, 5 words
  out.push_back(0);     // TOS
  PutU16(out, static_cast<uint16_t>(kIpv4HeaderBytes + udp_length));
  PutU32(out, 0);  // id, flags, fragment offset
  out.push_back(64);  // TTL
  out.push_back(kProtocolUdp);
  PutU16(out, 0);  // header checksum, below
  PutU32(out, source);
  PutU32(out, destination);
  const uint16_t ip_checksum = static_cast<uint16_t>(~SumWords(out));
  out[10] = static_cast<uint8_t>(ip_checksum >> 8);
  out[11] = static_cast<uint8_t>(ip_checksum);

  PutU16(out, kDhcpClientPort);
  PutU16(out, kDhcpServerPort);
  PutU16(out, static_cast<uint16_t>(udp_length));
  PutU16(out, 0);  // checksum, below
  out.insert(out.end(), payload.begin(), payload.end());
  std::vector<uint8_t> pseudo_header;
  PutU32(pseudo_header, source);
  PutU32(pseudo_header, destination);
  PutU16(pseudo_header, kProtocolUdp);
  PutU16(pseudo_header, static_cast<uint16_t>(udp_length));
  uint16_t udp_checksum = static_cast<uint16_t>(
      ~SumWords(std::span(out).subspan(kIpv4HeaderBytes), SumWords(pseudo_header)));
  if (udp_checksum == 0) udp_checksum = 0xffff;  // 0 means "none"
  out[kIpv4HeaderBytes + 6] = static_cast<uint8_t>(udp_checksum >> 8);
  out[kIpv4HeaderBytes + 7] = static_cast<uint8_t>(udp_checksum);
  return out;
}

std::optional<std::span<const uint8_t>> DhcpPayloadOf(std::span<const uint8_t> packet) {
  if (packet.size() < kIpv4HeaderBytes || packet[0] >> 4 != 4) return std::nullopt;
  const std::size_t header_length = (packet[0] & 0x0f) * 4u;
  if (header_length < kIpv4HeaderBytes || header_length > packet.size()) return std::nullopt;
  const std::size_t total_length = GetU16(packet, 2);  // frames may carry padding after it
  if (total_length < header_length + kUdpHeaderBytes || total_length > packet.size()) return std::nullopt;
  if ((GetU16(packet, 6) & 0x3fff) != 0) return std::nullopt;  // a fragment: more fragments or an offset
  if (packet[9] != kProtocolUdp) return std::nullopt;
  if (SumWords(packet.first(header_length)) != 0xffff) return std::nullopt;
  const auto udp = packet.subspan(header_length, total_length - header_length);
  if (GetU16(udp, 2) != kDhcpClientPort) return std::nullopt;
  const std::size_t udp_length = GetU16(udp, 4);
  if (udp_length < kUdpHeaderBytes || udp_length > udp.size()) return std::nullopt;
  return udp.subspan(kUdpHeaderBytes, udp_length - kUdpHeaderBytes);
}

DhcpExchange::DhcpExchange(std::string if_name, std::array<uint8_t, 6> mac, uint32_t xid, std::string client_id)
    : if_name_(std::move(if_name)),
      mac_(mac),
      xid_(xid),
      client_id_(std::move(client_id)),
      outgoing_(BuildDhcpMessage(Request(DhcpMessageType::kDiscover))) {}

DhcpMessage DhcpExchange::Request(DhcpMessageType type) const {
  DhcpMessage m;
  m.op = kBootRequest;
  m.xid = xid_;
  m.flags = kBroadcastFlag;  // the interface has no address yet: answer by broadcast
  m.chaddr = mac_;
  m.options[dhcp_option::kMessageType] = {static_cast<uint8_t>(type)};
  m.options[dhcp_option::kParameterRequestList] = {dhcp_option::kSubnetMask, dhcp_option::kLeaseTime,
                                                   dhcp_option::kClasslessStaticRoute};
  if (!client_id_.empty()) m.options[dhcp_option::kClientId] = ClientIdOption(client_id_);
  if (offer_) {
    m.options[dhcp_option::kRequestedAddress] = U32Bytes(offer_->yiaddr);
    m.options[dhcp_option::kServerId] = offer_->options.at(dhcp_option::kServerId);
  }
  return m;
}

std::string DhcpExchange::Awaiting() const {
  if (!offer_) return "offer";
  return "acknowledgement from " + FormatIpv4(*offer_->AddressOption(dhcp_option::kServerId));
}

std::optional<DhcpLease> DhcpExchange::OnReply(std::span<const uint8_t> payload, const std::string& source_mac) {
  const auto reply = ParseDhcpMessage(payload);
  if (!reply || reply->op != kBootReply || reply->xid != xid_ || reply->chaddr != mac_) return std::nullopt;
  const auto type = reply->Type();
  const auto server = reply->AddressOption(dhcp_option::kServerId);
  if (!type || !server) return std::nullopt;
  DhcpLease lease;
  if (!offer_) {
    if (*type != DhcpMessageType::kOffer) return std::nullopt;
    // An offer that the ACK would be refused for is passed over: another server may answer.
    if (const std::string problem = LeaseTerms(*reply, lease); !problem.empty()) {
      ignored_offer_ = "server " + FormatIpv4(*server) + " offered " + problem;
      return std::nullopt;
    }
    offer_ = *reply;
    outgoing_ = BuildDhcpMessage(Request(DhcpMessageType::kRequest));
    return std::nullopt;
  }
  if (*server != *offer_->AddressOption(dhcp_option::kServerId)) return std::nullopt;
  const std::string context = "DHCP on " + if_name_ + ": server " + FormatIpv4(*server);
  if (*type == DhcpMessageType::kNak) {
    std::string why;
    if (const auto it = reply->options.find(dhcp_option::kMessage); it != reply->options.end()) {
      why = " (\"" + std::string(it->second.begin(), it->second.end()) + "\")";
    }
    throw InjectError(context + " refused (NAK) the request for " + FormatIpv4(offer_->yiaddr) + why);
  }
  if (*type != DhcpMessageType::kAck) return std::nullopt;
  if (const std::string problem = LeaseTerms(*reply, lease); !problem.empty()) {
    throw InjectError(context + " acknowledged " + problem + "; refusing it");
  }
  lease.server_id = FormatIpv4(*server);
  lease.server_mac = source_mac;
  lease.client_mac = FormatMac(mac_);
  lease.client_id = client_id_;
  return lease;
}

std::vector<uint8_t> BuildDhcpRelease(const std::string& if_name, const DhcpLease& lease, uint32_t xid) {
  const std::string context = "DHCP release on " + if_name;
  const auto address = ParseIpv4(lease.address.substr(0, lease.address.find('/')));
  if (!address) throw InjectError(context + ": lease address \"" + lease.address + "\" is not IPv4");
  const auto server = ParseIpv4(lease.server_id);
  if (!server) throw InjectError(context + ": server id \"" + lease.server_id + "\" is not IPv4");
  const auto mac = ParseMac(lease.client_mac);
  if (!mac) throw InjectError(context + ": client MAC \"" + lease.client_mac + "\" does not parse");
  DhcpMessage m;
  m.op = kBootRequest;
  m.xid = xid;
  m.ciaddr = *address;
  m.chaddr = *mac;
  m.options[dhcp_option::kMessageType] = {static_cast<uint8_t>(DhcpMessageType::kRelease)};
  m.options[dhcp_option::kServerId] = U32Bytes(*server);
  if (!lease.client_id.empty()) m.options[dhcp_option::kClientId] = ClientIdOption(lease.client_id);
  return BuildDhcpMessage(m);
}

namespace {

// The conversation of RequestDhcpLease on a bound socket of a link that is up.
DhcpLease Converse(const PacketSocket& s, const std::string& if_name, const std::string& context,
                   std::chrono::milliseconds timeout, std::chrono::steady_clock::time_point deadline,
                   std::stop_token stop, const std::string& client_id) {
  const UniqueFd stop_event(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (stop_event.get() < 0) ThrowErrno(context, "creating an eventfd");
  const std::stop_callback wake_on_stop(stop, [&stop_event] { (void)::eventfd_write(stop_event.get(), 1); });

  DhcpExchange exchange(if_name, s.mac, RandomXid(), client_id);
  std::vector<uint8_t> receive_buffer(65536);
  std::string last_send_error;
  auto send_outgoing = [&] {
    const auto datagram = BuildDhcpDatagram(0, INADDR_BROADCAST, exchange.Outgoing());
    // A link just brought up may refuse frames for a moment; the next retransmission tries again.
    if (!SendFrame(s, datagram, kBroadcastMac)) last_send_error = std::strerror(errno);
  };
  send_outgoing();
  auto next_send = std::chrono::steady_clock::now() + kRetransmitInterval;
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      std::string notes;
      if (!last_send_error.empty()) notes += " (sending failed: " + last_send_error + ")";
      if (!exchange.IgnoredOffer().empty()) notes += " (ignored: " + exchange.IgnoredOffer() + ")";
      throw InjectError(context + ": no " + exchange.Awaiting() + " within " + std::to_string(timeout.count()) +
                        " ms" + notes);
    }
    if (now >= next_send) {
      send_outgoing();
      next_send = now + kRetransmitInterval;
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(std::min(next_send, deadline) - now);
    std::array<pollfd, 2> fds{{{s.fd.get(), POLLIN, 0}, {stop_event.get(), POLLIN, 0}}};
    if (::poll(fds.data(), fds.size(), static_cast<int>(wait.count())) < 0 && errno != EINTR) {
      ThrowErrno(context, "waiting for an " + exchange.Awaiting());
    }
    if (fds[1].revents != 0) throw InjectError(context + ": stopped with no " + exchange.Awaiting() + " yet");
    if (fds[0].revents == 0) continue;
    while (true) {
      sockaddr_ll from{};
      socklen_t from_length = sizeof from;
      // A frame longer than the buffer arrives cut, and its IP length then fails DhcpPayloadOf.
      // Frames this socket sends come back too (PACKET_OUTGOING); they go to port 67 and fail it too.
      const ssize_t n = ::recvfrom(s.fd.get(), receive_buffer.data(), receive_buffer.size(), 0,
                                   reinterpret_cast<sockaddr*>(&from), &from_length);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (errno == EINTR) continue;
        ThrowErrno(context, "receiving");
      }
      const auto payload = DhcpPayloadOf(std::span(receive_buffer).first(static_cast<std::size_t>(n)));
      if (!payload) continue;
      std::array<uint8_t, 6> source_mac{};
      std::copy_n(from.sll_addr, std::min<std::size_t>(from.sll_halen, source_mac.size()), source_mac.begin());
      const std::string awaited = exchange.Awaiting();
      if (auto lease = exchange.OnReply(*payload, FormatMac(source_mac))) return *std::move(lease);
      if (exchange.Awaiting() != awaited) {  // an offer was taken: request it now
        send_outgoing();
        next_send = std::chrono::steady_clock::now() + kRetransmitInterval;
      }
    }
  }
}

}  // namespace

DhcpLease RequestDhcpLease(const std::string& if_name, std::chrono::milliseconds timeout, std::stop_token stop,
                           const std::string& client_id) {
  const std::string context = "DHCP on " + if_name;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  PacketSocket s = OpenPacketSocket(if_name, context);
  // Down again when this returns, with a lease or not: the pod start brings it up in the pod.
  LinkUpForExchange link(s, if_name, context);
  try {
    // Bound once up: a packet socket bound to a link that is down reports ENETDOWN on its first receive.
    const sockaddr_ll local = LinkAddress(s.ifindex, {});
    if (::bind(s.fd.get(), reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
      ThrowErrno(context, "binding the packet socket");
    }
    return Converse(s, if_name, context, timeout, deadline, std::move(stop), client_id);
  } catch (const InjectError& e) {
    const std::string restore_failure = link.PutBackDown();
    if (restore_failure.empty()) throw;
    throw InjectError(WithRestoreFailure(e.what(), restore_failure));
  }
}

void ReleaseDhcpLease(const std::string& if_name, const DhcpLease& lease, std::stop_token stop) {
  const std::string context = "DHCP release on " + if_name;
  if (stop.stop_requested())
    throw InjectError(context + ": not sent: the unprepare's deadline passed; the server keeps the lease until it expires");
  const auto payload = BuildDhcpRelease(if_name, lease, RandomXid());
  std::array<uint8_t, 6> server_mac = kBroadcastMac;
  if (!lease.server_mac.empty()) {
    const auto parsed = ParseMac(lease.server_mac);
    if (!parsed) throw InjectError(context + ": server MAC \"" + lease.server_mac + "\" does not parse");
    server_mac = *parsed;
  }
  const PacketSocket s = OpenPacketSocket(if_name, context);
  const auto datagram = BuildDhcpDatagram(*ParseIpv4(lease.address.substr(0, lease.address.find('/'))),
                                          *ParseIpv4(lease.server_id), payload);
  // At unprepare the netdev is back on the host in its recorded state, often down.
  LinkUpForExchange link(s, if_name, context);
  const std::string failure = SendOnceRunning(s, datagram, server_mac, kReleaseCarrierWait, stop);
  const std::string restore_failure = link.PutBackDown();
  if (!failure.empty()) {
    throw InjectError(WithRestoreFailure(context + ": sending to " + lease.server_id + ": " + failure +
                                             "; the server keeps the lease until it expires",
                                         restore_failure));
  }
  if (!restore_failure.empty()) throw InjectError(context + ": the RELEASE was sent, but " + restore_failure);
}

}  // namespace dranet::inject
