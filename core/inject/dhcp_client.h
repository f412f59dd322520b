#pragma once
// core/inject/dhcp_client.h — a one-shot DHCPv4 client for a claim's
// `interface.dhcp: true`.
//
// As DRANET does, prepare asks for an address on the host side of the netdev
// (the calling thread's network namespace): DISCOVER → OFFER → REQUEST → ACK
// within a timeout. A link that is down is brought up for the exchange and
// put back down when it ends, whatever the outcome. The lease gives the
// address (yiaddr with option 1's mask) and option 121's classless static
// routes; options 3 and 33 are ignored, as DRANET ignores them. Unprepare
// sends a DHCPRELEASE.
//
// There is no renewal: the pod keeps the address after the lease expires,
// and the server may then give it to another client. Leases must outlive the
// pods, or the pods should use static addresses.
//
// A lease that cannot work is refused rather than applied: an address that
// is unspecified (0.0.0.0), loopback (127/8), multicast (224/4), reserved
// (240/4), the limited broadcast 255.255.255.255 or, with a prefix shorter
// than /31, the subnet's broadcast address; an invalid subnet mask; a lease
// time under kMinDhcpLeaseSeconds (0 included) or not 4 bytes long; an
// option 121 route via a gateway that is any of these. An infinite lease
// (0xffffffff) and one without option 51 are taken. An ACK with any of these
// fails the exchange; an OFFER with any of these is passed over, so that
// another server may answer, and the timeout's message says why.
//
// Hand-written because no packaged library offers a DHCP client. It speaks
// over a packet socket (AF_PACKET) with its own IPv4/UDP headers, like
// dhclient and udhcpc: nothing binds UDP port 68 (a host DHCP client may hold
// it), replies reach it before the interface has an address whatever
// rp_filter says, and a RELEASE can come from the leased address although the
// host no longer has it. Ethernet interfaces only; no option overload (52),
// no INIT-REBOOT, no renewal.
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <vector>

#include "inject/plan.h"

namespace dranet::inject {

struct DhcpLease {
  std::string address;        // "192.0.2.10/24": yiaddr with option 1's mask (/32 without option 1)
  std::string server_id;      // option 54, "192.0.2.1"
  std::string server_mac;     // link-layer source of the ACK (the server, or its relay agent): where
                              // the RELEASE goes; "aa:bb:cc:dd:ee:ff"
  std::string client_mac;     // the chaddr the lease was requested with, "aa:bb:cc:dd:ee:ff"
  std::vector<Route> routes;  // option 121 in the server's order: destination CIDR and gateway,
                              // gateway empty for an on-link route; empty when option 121 is
                              // missing or malformed
  uint32_t lease_seconds = 0; // option 51, at least kMinDhcpLeaseSeconds; 0xffffffff = infinite;
                              // 0 = not sent (RFC 2131 requires it; without it nothing says when the
                              // server reuses the address, and the lease is taken as it is)
  std::string client_id = {};  // option 61 the lease was requested with (its identifier after the
                               // type byte 0); empty: none sent, the server keys the lease by chaddr
  friend bool operator==(const DhcpLease&, const DhcpLease&) = default;
};

// The shortest finite lease accepted, in seconds. There is no renewal, so a
// shorter lease would have the server reuse the pod's address almost at once.
inline constexpr uint32_t kMinDhcpLeaseSeconds = 60;

// Runs a DHCP exchange on `if_name` in the calling thread's network
// namespace: retransmits DISCOVER (then REQUEST) every second until an ACK
// comes, `timeout` passes or `stop` is requested. Replies that are not for
// this exchange are ignored. A link that is down is brought up for the
// exchange and put back down before this returns or throws (best effort:
// when that fails after a lease was obtained, the lease is returned and the
// link stays up; when it fails after an error, the error says so too).
// Needs CAP_NET_ADMIN and CAP_NET_RAW. Throws InjectError naming the
// interface and the step: no such interface, not Ethernet, no offer or no
// acknowledgement within the timeout (with the last offer passed over and
// why), stopped, a NAK, an ACK refused as unusable (see the top of this file).
//
// `client_id` (not empty): sent as option 61 (type 0, then the identifier),
// so that several leases can be held on one interface, as each IPVLAN child
// of a netdev has the netdev's MAC; the lease records it for the release.
DhcpLease RequestDhcpLease(const std::string& if_name, std::chrono::milliseconds timeout,
                           std::stop_token stop = {}, const std::string& client_id = {});

// Sends one DHCPRELEASE for `lease` out of `if_name` (calling thread's
// namespace): from the leased address to the server id, framed to
// `lease.server_mac` (broadcast when empty). A link that is down (as a
// netdev back on the host at unprepare often is) is brought up for the send
// and put back down afterwards. The frame bypasses the qdisc, so that a link
// without carrier refuses it rather than drops it, and is retried for up to
// 5 s while the link negotiates (tcpdump on the host does not see it). Best
// effort: nothing answers a RELEASE. Throws InjectError naming the interface
// when it cannot be sent (no such interface, a lease field that does not
// parse, no carrier within 5 s, a socket error) or the link could not be put
// back down. The wait for carrier ends early once `stop` is requested (the
// unprepare's deadline), and nothing is sent after that.
void ReleaseDhcpLease(const std::string& if_name, const DhcpLease& lease, std::stop_token stop = {});

// ---- Wire format: pure functions, exposed for unit tests and the fuzzer ----

inline constexpr uint16_t kDhcpServerPort = 67;
inline constexpr uint16_t kDhcpClientPort = 68;

enum class DhcpMessageType : uint8_t {
  kDiscover = 1, kOffer = 2, kRequest = 3, kDecline = 4, kAck = 5, kNak = 6, kRelease = 7, kInform = 8,
};

// Option codes the client reads or writes.
namespace dhcp_option {
inline constexpr uint8_t kSubnetMask = 1;
inline constexpr uint8_t kRouter = 3;
inline constexpr uint8_t kRequestedAddress = 50;
inline constexpr uint8_t kLeaseTime = 51;
inline constexpr uint8_t kMessageType = 53;
inline constexpr uint8_t kServerId = 54;
inline constexpr uint8_t kParameterRequestList = 55;
inline constexpr uint8_t kMessage = 56;
inline constexpr uint8_t kClientId = 61;
inline constexpr uint8_t kClasslessStaticRoute = 121;
}  // namespace dhcp_option

// One BOOTP/DHCP message (RFC 2131). Addresses are in host byte order.
struct DhcpMessage {
  uint8_t op = 1;  // 1 BOOTREQUEST, 2 BOOTREPLY
  uint32_t xid = 0;
  uint16_t secs = 0;
  uint16_t flags = 0;  // 0x8000: BROADCAST
  uint32_t ciaddr = 0, yiaddr = 0, siaddr = 0, giaddr = 0;
  std::array<uint8_t, 6> chaddr{};  // Ethernet only: htype 1, hlen 6
  // Option code → data; an option sent in several pieces is one entry with
  // the pieces concatenated (RFC 3396). Pad (0) and End (255) never appear.
  std::map<uint8_t, std::vector<uint8_t>> options;
  friend bool operator==(const DhcpMessage&, const DhcpMessage&) = default;

  // Option 53, if present with one byte.
  std::optional<DhcpMessageType> Type() const;
  // A 4-byte option (54, 1, 50) as an address, if present with that length.
  std::optional<uint32_t> AddressOption(uint8_t code) const;
};

// The UDP payload for `message`: fixed header, magic cookie, options (longer
// than 255 bytes split in pieces), End, zero padding to 300 bytes (the BOOTP
// minimum some relays insist on).
std::vector<uint8_t> BuildDhcpMessage(const DhcpMessage& message);

// Parses a UDP payload. nullopt for anything that is not a well-formed DHCP
// message: shorter than the fixed header and cookie, wrong cookie, htype/hlen
// not Ethernet, an option whose length runs past the end. Never reads
// outside `payload`.
std::optional<DhcpMessage> ParseDhcpMessage(std::span<const uint8_t> payload);

// Option 121's data as routes (destination masked to its width, gateway
// empty for 0.0.0.0). nullopt when malformed (a width over 32, a truncated
// entry): RFC 3442 says to ignore the whole option then.
std::optional<std::vector<Route>> ParseClasslessRoutes(std::span<const uint8_t> data);

// An IPv4 datagram carrying `payload` in UDP from `source`:68 to
// `destination`:67, with header and UDP checksums.
std::vector<uint8_t> BuildDhcpDatagram(uint32_t source, uint32_t destination, std::span<const uint8_t> payload);

// The UDP payload of `packet` when it is an unfragmented IPv4 UDP datagram
// to port 68 whose lengths agree (the IP header checksum is checked; the UDP
// checksum is not, since a packet socket may see it before the NIC fills it
// in). nullopt otherwise. The span points into `packet`.
std::optional<std::span<const uint8_t>> DhcpPayloadOf(std::span<const uint8_t> packet);

// The DISCOVER → OFFER → REQUEST → ACK conversation without I/O: what to
// send and what to make of each reply. The first usable offer is taken.
class DhcpExchange {
 public:
  // `client_id`: option 61's identifier (type 0), sent when not empty.
  DhcpExchange(std::string if_name, std::array<uint8_t, 6> mac, uint32_t xid, std::string client_id = {});

  // The UDP payload to (re)send now: the DISCOVER, then the REQUEST once an
  // offer was taken.
  const std::vector<uint8_t>& Outgoing() const { return outgoing_; }
  // What it waits for: "offer", then "acknowledgement from 192.0.2.1".
  std::string Awaiting() const;

  // Feeds one received UDP payload, with the link-layer address it came
  // from. Returns the lease once an ACK completes the exchange. Ignores
  // (returns nullopt for) anything else: other transactions or clients,
  // requests, other servers, offers without a server id, offers whose lease
  // would be refused (recorded in IgnoredOffer()), after the offer a second
  // offer. Throws InjectError naming the interface, the server and the value
  // on a NAK from the chosen server or an ACK whose lease cannot work
  // (see the top of this file).
  std::optional<DhcpLease> OnReply(std::span<const uint8_t> payload, const std::string& source_mac);

  // The last offer passed over and why ("server 192.0.2.1 offered address
  // 127.0.0.1/24, which is loopback"); empty when none was.
  const std::string& IgnoredOffer() const { return ignored_offer_; }

 private:
  DhcpMessage Request(DhcpMessageType type) const;

  std::string if_name_;
  std::array<uint8_t, 6> mac_;
  uint32_t xid_;
  std::string client_id_;
  std::optional<DhcpMessage> offer_;
  std::vector<uint8_t> outgoing_;
  std::string ignored_offer_;
};

// The RELEASE payload for `lease` (ciaddr = leased address, option 54).
// Throws InjectError naming `if_name` when a lease field does not parse.
std::vector<uint8_t> BuildDhcpRelease(const std::string& if_name, const DhcpLease& lease, uint32_t xid);

}  // namespace dranet::inject
