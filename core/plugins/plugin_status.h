#pragma once
// core/plugins/plugin_status.h — a plugin's status code as an operator reads
// it: the code's name and number, sys_errno (with errno's text where it is
// one) and the plugin's message.
#include <string>
#include <string_view>

#include <dranet/plugin.h>

namespace dranet::plugins {

// "DRANET_ERR_IO (-5), sys_errno 5 (Input/output error): read /x failed";
// the sys_errno part only when non-zero, the message only when non-empty.
std::string DescribeStatus(dranet_status_t status, int32_t sys_errno, std::string_view message);
// The same from a plugin's filled-in error buffer.
std::string DescribeStatus(dranet_status_t status, const dranet_error_t& err);

}  // namespace dranet::plugins
