#pragma once
// tests/fuzz/fuzz_support.h — small pieces shared by the fuzz targets.
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string_view>

#include "base/log.h"

namespace dranet::fuzz {

// A logger that formats every line (so hostile strings go through the log
// escaping too) and writes them nowhere: an ostream without a buffer.
inline Logger& DiscardingLogger() {
  static std::ostream sink(nullptr);
  static Logger log(sink, Logger::Format::kText, /*verbosity=*/5);
  return log;
}

// A broken invariant: report it and abort, so libFuzzer keeps the input.
[[noreturn]] inline void Fail(std::string_view what) {
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

inline void Check(bool condition, std::string_view what) {
  if (!condition) Fail(what);
}

}  // namespace dranet::fuzz
