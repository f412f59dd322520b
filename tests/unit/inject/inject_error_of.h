#pragma once
// tests/unit/inject/inject_error_of.h — what an InjectError says, for tests
// that compare messages.
#include <functional>
#include <string>

#include "inject/pod_netns_applier.h"

namespace dranet::inject::testing {

// The message of the InjectError `fn` throws; "" when it throws none.
inline std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InjectError& e) {
    return e.what();
  }
  return "";
}

}  // namespace dranet::inject::testing
