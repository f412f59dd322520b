#pragma once
// core/cel/regex.h — the regular expressions of CEL's matches().
//
// Kubernetes evaluates matches() with RE2, whose matching time is linear in
// the input. std::regex backtracks (a 64-byte attribute against "(a+)+$"
// runs for minutes), so patterns are compiled as POSIX extended regular
// expressions with glibc, which matches without backtracking when there are
// no back-references — and back-references are not RE2 syntax anyway.
// Accepted: RE2's common subset — ERE syntax plus a leading "(?i)", "(?:",
// and the escapes \d \D \w \W \s \S. Rejected with a clear error:
// back-references (\1…), lazy quantifiers (*? +? ??), other "(?" groups.
#include <regex.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace dranet::cel {

class RegexError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Regex {
 public:
  // Throws RegexError naming the problem.
  explicit Regex(const std::string& pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // True when the pattern matches anywhere in `text` (RE2's partial match).
  // Thread-safe.
  bool Search(const std::string& text) const;

 private:
  regex_t compiled_{};
};

std::shared_ptr<const Regex> CompileRegex(const std::string& pattern);

}  // namespace dranet::cel
