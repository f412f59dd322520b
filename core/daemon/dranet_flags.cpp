#include "daemon/dranet_flags.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <stdexcept>

namespace dranet::daemon {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return std::string(text);
}

// Go's strconv.ParseBool.
bool ParseGoBool(const std::string& text, bool& out) {
  static const char* const kTrue[] = {"1", "t", "T", "TRUE", "true", "True"};
  static const char* const kFalse[] = {"0", "f", "F", "FALSE", "false", "False"};
  for (const char* t : kTrue)
    if (text == t) return out = true, true;
  for (const char* f : kFalse)
    if (text == f) return out = false, true;
  return false;
}

}  // namespace

std::chrono::milliseconds ParseGoDuration(std::string_view text) {
  const std::string original(text);
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("invalid duration \"" + original + "\": " + why +
                                 " (Go syntax, e.g. 2s, 1m30s, 500ms)");
  };
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text == "0") return std::chrono::milliseconds(0);
  if (text.empty()) throw bad("empty");
  static const std::pair<std::string_view, double> kUnits[] = {
      {"ns", 1e-6}, {"us", 1e-3}, {"\xc2\xb5s", 1e-3}, {"\xce\xbcs", 1e-3}, {"ms", 1}, {"s", 1e3}, {"m", 6e4}, {"h", 3.6e6}};
  double total_ms = 0;
  while (!text.empty()) {
    std::size_t digits = 0;
    while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
      ++digits;
    const std::string number(text.substr(0, digits));
    if (number.empty() || number == "." || std::count(number.begin(), number.end(), '.') > 1)
      throw bad("expected a number");
    text.remove_prefix(digits);
    std::size_t unit_length = 0;
    while (unit_length < text.size() && !std::isdigit(static_cast<unsigned char>(text[unit_length])) &&
           text[unit_length] != '.')
      ++unit_length;
    const std::string_view unit = text.substr(0, unit_length);
    if (unit.empty()) throw bad("missing unit");
    auto it = std::find_if(std::begin(kUnits), std::end(kUnits), [&](const auto& u) { return u.first == unit; });
    if (it == std::end(kUnits)) throw bad("unknown unit \"" + std::string(unit) + "\"");
    total_ms += std::stod(number) * it->second;
    text.remove_prefix(unit_length);
  }
  if (negative) throw bad("negative");
  if (total_ms > 9.2e15) throw bad("too large");
  return std::chrono::milliseconds(static_cast<int64_t>(std::floor(total_ms)));
}

std::map<std::string, bool> ParseFeatureGates(std::string_view text) {
  std::map<std::string, bool> gates{{std::string(kGateDraListTypeAttributes), false},
                                    {std::string(kGatePersistentResourceSliceAttributes), false}};
  std::size_t start = 0;
  const std::string all(text);
  while (start <= all.size()) {
    std::size_t end = all.find(',', start);
    const std::string entry = Trim(std::string_view(all).substr(start, end == std::string::npos ? std::string::npos
                                                                                              : end - start));
    start = end == std::string::npos ? all.size() + 1 : end + 1;
    if (entry.empty()) continue;
    const auto eq = entry.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("--feature-gates: missing bool value for " + entry + " (want Gate=true)");
    const std::string name = Trim(std::string_view(entry).substr(0, eq));
    const std::string value = Trim(std::string_view(entry).substr(eq + 1));
    auto it = gates.find(name);
    if (it == gates.end())
      throw std::invalid_argument("--feature-gates: unrecognized feature gate: " + name + " (known: " +
                                  std::string(kGateDraListTypeAttributes) + ", " +
                                  std::string(kGatePersistentResourceSliceAttributes) + ")");
    if (!ParseGoBool(value, it->second))
      throw std::invalid_argument("--feature-gates: invalid value of " + name + ": " + value + ", want true or false");
  }
  return gates;
}

const std::vector<std::string>& CloudPluginNames() {
  static const std::vector<std::string> kNames{"alibaba", "aws", "azure", "gcp", "oci"};
  return kNames;
}

CloudHint CloudPluginsForHint(std::string_view hint) {
  static const std::map<std::string, std::string> kPluginOfHint{
      {"aws", "aws"}, {"gce", "gcp"}, {"azure", "azure"}, {"oke", "oci"}, {"alibaba", "alibaba"}};
  CloudHint out;
  const std::string key = Lower(Trim(hint));
  if (key.empty()) return out;
  out.detect = false;
  if (key == "none" || key == "webhook") {
    out.deny = CloudPluginNames();
    if (key == "webhook")
      out.note = "--cloud-provider-hint=webhook: cloud attributes from a webhook are not supported; no cloud plugin "
                 "runs (profiles from a webhook: --profile-provider=webhook)";
    return out;
  }
  auto it = kPluginOfHint.find(key);
  if (it == kPluginOfHint.end())
    throw std::invalid_argument("--cloud-provider-hint: unsupported value \"" + std::string(hint) +
                                "\" (want AWS, GCE, AZURE, OKE, ALIBABA, webhook or NONE)");
  out.plugin = it->second;
  for (const auto& name : CloudPluginNames())
    if (name != out.plugin) out.deny.push_back(name);
  return out;
}

std::string StateDirForDbPath(const std::string& db_path) {
  if (db_path.empty()) return {};
  std::filesystem::path path(db_path);
  if (!path.has_parent_path() || path.parent_path().empty()) return ".";
  return path.parent_path().string();
}

std::vector<std::string> SplitEmptyValues(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size());
  for (const auto& arg : args) {
    const bool empty_value = arg.size() > 3 && arg.rfind("--", 0) == 0 && arg.back() == '=' &&
                             arg.find('=') == arg.size() - 1;
    if (!empty_value) {
      out.push_back(arg);
      continue;
    }
    out.push_back(arg.substr(0, arg.size() - 1));
    out.emplace_back();
  }
  return out;
}

int FirstArgument(int argc, const char* const* argv) {
  if (argc < 2 || argv[1] == nullptr || argv[1][0] == '-') return 1;
  const std::string base = std::filesystem::path(argv[1]).filename().string();
  return base == "dranet" || base == "dranetd" ? 2 : 1;
}

}  // namespace dranet::daemon
