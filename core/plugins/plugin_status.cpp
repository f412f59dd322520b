#include "plugins/plugin_status.h"

#include <cstring>

namespace dranet::plugins {

std::string DescribeStatus(dranet_status_t status, int32_t sys_errno, std::string_view message) {
  std::string s = std::string(dranet_status_name(status)) + " (" + std::to_string(status) + ")";
  if (sys_errno != 0) {
    s += ", sys_errno " + std::to_string(sys_errno);
    // sys_errno may also be an HTTP status or a vendor code (plugin.h): only
    // an errno value gets errno's text.
    if (const char* text = sys_errno > 0 ? strerrordesc_np(sys_errno) : nullptr) s += " (" + std::string(text) + ")";
  }
  if (!message.empty()) s += ": " + std::string(message);
  return s;
}

std::string DescribeStatus(dranet_status_t status, const dranet_error_t& err) {
  return DescribeStatus(status, err.sys_errno, std::string_view(err.message, strnlen(err.message, sizeof err.message)));
}

}  // namespace dranet::plugins
