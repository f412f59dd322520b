// core/kube/names.cpp — name and value rules of the Kubernetes API (see names.h).
#include "base/k8s_names.h"

#include <cstddef>

namespace dranet {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Calls `part` for each piece of `text` between `separator`s; false as soon as one fails.
template <typename PartCheck>
bool AllParts(std::string_view text, char separator, PartCheck part) {
  std::size_t start = 0;
  while (true) {
    std::size_t end = text.find(separator, start);
    if (!part(text.substr(start, end == std::string_view::npos ? text.size() - start : end - start)))
      return false;
    if (end == std::string_view::npos) return true;
    start = end + 1;
  }
}

bool IsNumericIdentifier(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!IsDigit(c)) return false;
  return text.size() == 1 || text[0] != '0';
}

bool IsSemVerIdentifier(std::string_view text, bool numeric_needs_no_leading_zero) {
  if (text.empty()) return false;
  bool all_digits = true;
  for (char c : text) {
    if (!IsDigit(c) && !IsAlpha(c) && c != '-') return false;
    all_digits &= IsDigit(c);
  }
  return !(numeric_needs_no_leading_zero && all_digits && text.size() > 1 && text[0] == '0');
}

}  // namespace

bool IsDnsLabel(std::string_view text) {
  if (text.empty() || text.size() > 63) return false;
  if (!IsLowerAlnum(text.front()) || !IsLowerAlnum(text.back())) return false;
  for (char c : text)
    if (!IsLowerAlnum(c) && c != '-') return false;
  return true;
}

bool IsDnsSubdomain(std::string_view text) {
  if (text.empty() || text.size() > 253) return false;
  return AllParts(text, '.', [](std::string_view part) { return IsDnsLabel(part); });
}

bool IsAttributeId(std::string_view text) {
  if (text.empty() || text.size() > 32) return false;
  if (!IsAlpha(text[0]) && text[0] != '_') return false;
  for (char c : text)
    if (!IsAlpha(c) && !IsDigit(c) && c != '_') return false;
  return true;
}

bool IsQualifiedName(std::string_view text) {
  std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return IsAttributeId(text);
  std::string_view domain = text.substr(0, slash);
  std::string_view id = text.substr(slash + 1);
  return domain.size() <= 63 && IsDnsSubdomain(domain) && IsAttributeId(id);
}

bool IsSemVer(std::string_view text) {
  std::string_view build;
  if (std::size_t plus = text.find('+'); plus != std::string_view::npos) {
    build = text.substr(plus + 1);
    text = text.substr(0, plus);
    if (!AllParts(build, '.', [](std::string_view p) { return IsSemVerIdentifier(p, false); }))
      return false;
  }
  std::string_view pre;
  if (std::size_t dash = text.find('-'); dash != std::string_view::npos) {
    pre = text.substr(dash + 1);
    text = text.substr(0, dash);
    if (!AllParts(pre, '.', [](std::string_view p) { return IsSemVerIdentifier(p, true); }))
      return false;
  }
  int numbers = 0;
  bool ok = AllParts(text, '.', [&numbers](std::string_view p) {
    ++numbers;
    return IsNumericIdentifier(p);
  });
  return ok && numbers == 3;
}

}  // namespace dranet
