#include "inject/rdma_link.h"

#include <gtest/gtest.h>
#include <linux/netlink.h>

#include <cstring>

namespace dranet::inject {
namespace {

TEST(RdmaLink, NldevTypesMatchTheKernelNumbers) {
  EXPECT_EQ(RdmaNldevType(1), 0x1401);  // RDMA_NLDEV_CMD_GET
  EXPECT_EQ(RdmaNldevType(2), 0x1402);  // RDMA_NLDEV_CMD_SET
}

TEST(RdmaLink, SetNetnsCarriesDevIndexAndNetnsFd) {
  const std::string msg = EncodeRdmaSetNetns(7, 42);
  ASSERT_EQ(msg.size(), NLMSG_HDRLEN + 2 * 8u);
  nlmsghdr hdr;
  std::memcpy(&hdr, msg.data(), sizeof(hdr));
  EXPECT_EQ(hdr.nlmsg_type, 0x1402);
  EXPECT_EQ(hdr.nlmsg_flags & (NLM_F_REQUEST | NLM_F_ACK), NLM_F_REQUEST | NLM_F_ACK);
  struct Attr {
    std::uint16_t len, type;
    std::uint32_t value;
  } a1, a2;
  std::memcpy(&a1, msg.data() + NLMSG_HDRLEN, 8);
  std::memcpy(&a2, msg.data() + NLMSG_HDRLEN + 8, 8);
  EXPECT_EQ(a1.type, 1);  // RDMA_NLDEV_ATTR_DEV_INDEX
  EXPECT_EQ(a1.value, 7u);
  EXPECT_EQ(a2.type, 68);  // RDMA_NLDEV_NET_NS_FD
  EXPECT_EQ(a2.value, 42u);
}

}  // namespace
}  // namespace dranet::inject
