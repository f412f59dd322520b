// core/cel/value.cpp — semver and quantity parsing, value descriptions.
#include "cel/value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dranet::cel::detail {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

// A semver numeric part: digits, no leading zero unless "0".
std::optional<uint64_t> ParseNumericPart(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  if (s.size() > 1 && s[0] == '0') return std::nullopt;
  uint64_t n = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

bool AllDigits(std::string_view s) {
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return !s.empty();
}

// Splits "a.b.c" on dots; empty parts are kept (and rejected by callers).
std::vector<std::string_view> SplitDots(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

// Dot-separated [0-9A-Za-z-]+ identifiers (pre-release or build metadata).
bool ValidIdentifiers(std::string_view dotted, bool numeric_no_leading_zero, std::vector<std::string>* out) {
  if (dotted.empty()) return false;
  for (auto part : SplitDots(dotted)) {
    if (part.empty() || !std::all_of(part.begin(), part.end(), IsIdentChar)) return false;
    if (numeric_no_leading_zero && AllDigits(part) && part.size() > 1 && part[0] == '0') return false;
    if (out) out->emplace_back(part);
  }
  return true;
}

}  // namespace

std::optional<Version> ParseVersion(std::string_view text) {
  Version v;
  v.text = std::string(text);
  std::string_view rest = text;
  if (auto plus = rest.find('+'); plus != std::string_view::npos) {
    if (!ValidIdentifiers(rest.substr(plus + 1), /*numeric_no_leading_zero=*/false, nullptr)) return std::nullopt;
    rest = rest.substr(0, plus);
  }
  if (auto dash = rest.find('-'); dash != std::string_view::npos) {
    if (!ValidIdentifiers(rest.substr(dash + 1), /*numeric_no_leading_zero=*/true, &v.prerelease)) return std::nullopt;
    rest = rest.substr(0, dash);
  }
  auto core = SplitDots(rest);
  if (core.size() != 3) return std::nullopt;
  auto major = ParseNumericPart(core[0]);
  auto minor = ParseNumericPart(core[1]);
  auto patch = ParseNumericPart(core[2]);
  if (!major || !minor || !patch) return std::nullopt;
  v.major = *major;
  v.minor = *minor;
  v.patch = *patch;
  return v;
}

int CompareVersions(const Version& a, const Version& b) {
  auto cmp = [](uint64_t x, uint64_t y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (int c = cmp(a.major, b.major)) return c;
  if (int c = cmp(a.minor, b.minor)) return c;
  if (int c = cmp(a.patch, b.patch)) return c;
  // A version without pre-release identifiers ranks above one with them.
  if (a.prerelease.empty() || b.prerelease.empty()) {
    return a.prerelease.empty() == b.prerelease.empty() ? 0 : (a.prerelease.empty() ? 1 : -1);
  }
  std::size_t n = std::min(a.prerelease.size(), b.prerelease.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& x = a.prerelease[i];
    const std::string& y = b.prerelease[i];
    bool xn = AllDigits(x), yn = AllDigits(y);
    if (xn && yn) {
      if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
      if (int c = x.compare(y)) return c < 0 ? -1 : 1;
    } else if (xn != yn) {
      return xn ? -1 : 1;  // numeric identifiers rank below alphanumeric ones
    } else if (int c = x.compare(y)) {
      return c < 0 ? -1 : 1;
    }
  }
  return cmp(a.prerelease.size(), b.prerelease.size());
}

std::optional<Quantity> ParseQuantity(std::string_view text) {
  std::string_view s = text;
  if (s.empty() || s.size() > 64) return std::nullopt;
  long double sign = 1;
  if (s[0] == '+' || s[0] == '-') {
    if (s[0] == '-') sign = -1;
    s.remove_prefix(1);
  }
  long double mantissa = 0;
  std::size_t i = 0, digits = 0;
  for (; i < s.size() && IsDigit(s[i]); ++i, ++digits) mantissa = mantissa * 10 + (s[i] - '0');
  if (i < s.size() && s[i] == '.') {
    long double scale = 0.1L;
    for (++i; i < s.size() && IsDigit(s[i]); ++i, ++digits, scale /= 10) {
      mantissa += scale * (s[i] - '0');
    }
  }
  if (digits == 0) return std::nullopt;
  std::string_view suffix = s.substr(i);
  long double factor = 1;
  struct Suffix {
    std::string_view name;
    long double factor;
  };
  static constexpr Suffix kSuffixes[] = {
      {"", 1},         {"n", 1e-9L},  {"u", 1e-6L},  {"m", 1e-3L},
      {"k", 1e3L},     {"M", 1e6L},   {"G", 1e9L},   {"T", 1e12L},
      {"P", 1e15L},    {"E", 1e18L},  {"Ki", 1024.0L}, {"Mi", 1048576.0L},
      {"Gi", 1073741824.0L}, {"Ti", 1099511627776.0L}, {"Pi", 1125899906842624.0L},
      {"Ei", 1152921504606846976.0L},
  };
  bool known = false;
  for (const auto& candidate : kSuffixes) {
    if (candidate.name == suffix) {
      factor = candidate.factor;
      known = true;
      break;
    }
  }
  if (!known) {
    // Decimal exponent: e3, E-2.
    if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return std::nullopt;
    std::string_view exp = suffix.substr(1);
    int exp_sign = 1;
    if (exp[0] == '+' || exp[0] == '-') {
      exp_sign = exp[0] == '-' ? -1 : 1;
      exp.remove_prefix(1);
    }
    if (!AllDigits(exp) || exp.size() > 3) return std::nullopt;
    int e = 0;
    for (char c : exp) e = e * 10 + (c - '0');
    factor = std::pow(10.0L, static_cast<long double>(exp_sign * e));
  }
  return Quantity{sign * mantissa * factor, std::string(text)};
}

std::string_view TypeName(const Value& value) {
  struct Visitor {
    std::string_view operator()(const Null&) const { return "null_type"; }
    std::string_view operator()(bool) const { return "bool"; }
    std::string_view operator()(int64_t) const { return "int"; }
    std::string_view operator()(const std::string&) const { return "string"; }
    std::string_view operator()(const Version&) const { return "semver"; }
    std::string_view operator()(const Quantity&) const { return "quantity"; }
    std::string_view operator()(const List&) const { return "list"; }
    std::string_view operator()(const MapRef&) const { return "map"; }
    std::string_view operator()(const DeviceRef&) const { return "device"; }
    std::string_view operator()(const FilterAttribute&) const { return "DeviceAttribute"; }
    std::string_view operator()(const ErrorValue&) const { return "error"; }
  };
  return std::visit(Visitor{}, value.v);
}

std::string Describe(const Value& value) {
  struct Visitor {
    std::string operator()(const Null&) const { return "null"; }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(const std::string& s) const { return "\"" + s + "\""; }
    std::string operator()(const Version& v) const { return "semver(\"" + v.text + "\")"; }
    std::string operator()(const Quantity& q) const { return "quantity(\"" + q.text + "\")"; }
    std::string operator()(const List& l) const {
      std::string out = "[";
      for (std::size_t i = 0; i < l->size(); ++i) {
        if (i > 0) out += ", ";
        out += Describe((*l)[i]);
      }
      return out + "]";
    }
    std::string operator()(const MapRef&) const { return "map"; }
    std::string operator()(const DeviceRef&) const { return "device"; }
    std::string operator()(const FilterAttribute&) const { return "DeviceAttribute"; }
    std::string operator()(const ErrorValue& e) const { return "error: " + e.message; }
  };
  return std::visit(Visitor{}, value.v);
}

std::size_t CodePointCount(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::size_t CodePointOffset(std::string_view text, std::size_t index) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == index) return i;
      ++seen;
    }
  }
  return text.size();
}

}  // namespace dranet::cel::detail
