#include "base/metrics.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string_view>

namespace dranet {
namespace {

std::string FormatValue(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  // The shortest text that reads back as the same double, fixed or exponent
  // form chosen as Go's client library does: a Unix time keeps its
  // sub-second digits (1.795581234567e+09), 0.1 stays "0.1", 0.0001 "0.0001".
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general).ptr;
  return std::string(buf, end);
}

void AppendEscapedLabel(std::string& out, const std::string& v) {
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out.push_back(c);
  }
}

void AppendLabels(std::string& out, const std::vector<std::string>& names, const Labels& values,
                  const std::string& extra_name = {}, const std::string& extra_value = {}) {
  if (names.empty() && extra_name.empty()) return;
  out.push_back('{');
  bool first = true;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!first) out.push_back(',');
    first = false;
    out += names[i] + "=\"";
    AppendEscapedLabel(out, i < values.size() ? values[i] : "");
    out.push_back('"');
  }
  if (!extra_name.empty()) {
    if (!first) out.push_back(',');
    out += extra_name + "=\"" + extra_value + "\"";
  }
  out.push_back('}');
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool ValidName(const std::string& name, bool allow_colon) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || (allow_colon && c == ':');
  });
}

// DRANET's published-devices gauge ends in _total. Dashboards query it by
// that name, so it is exposed as DRANET exposes it: the one family allowed
// to break the rule below.
constexpr std::string_view kGaugesNamedTotal[] = {"dranet_driver_published_devices_total"};

void CheckFamily(const std::string& name, MetricFamily::Type type, const std::vector<std::string>& labels) {
  auto refuse = [&](const std::string& why) { throw MetricNameError("metric " + name + ": " + why); };
  if (!ValidName(name, /*allow_colon=*/false)) refuse("not a valid metric name");
  const bool counter = type == MetricFamily::Type::kCounter;
  if (counter && !EndsWith(name, "_total")) refuse("a counter's name must end in _total");
  if (!counter && EndsWith(name, "_total") &&
      std::find(std::begin(kGaugesNamedTotal), std::end(kGaugesNamedTotal), name) == std::end(kGaugesNamedTotal))
    refuse("only counters end in _total");
  for (std::string_view reserved : {"_bucket", "_count", "_sum"})
    if (EndsWith(name, reserved)) refuse("names ending in " + std::string(reserved) + " are a histogram's series");
  for (const auto& label : labels) {
    if (!ValidName(label, /*allow_colon=*/false) || label.rfind("__", 0) == 0)
      refuse("label \"" + label + "\" is not a valid label name");
    if (type == MetricFamily::Type::kHistogram && label == "le") refuse("a histogram cannot have a label \"le\"");
  }
}

}  // namespace

const char* OperationStatusName(OperationStatus status) {
  switch (status) {
    case OperationStatus::kSuccess: return "success";
    case OperationStatus::kFailed: return "failed";
    case OperationStatus::kNoop: return "noop";
  }
  return "unknown";
}

MetricFamily::MetricFamily(std::string name, std::string help, Type type, std::vector<std::string> label_names,
                           std::vector<double> buckets)
    : name_(std::move(name)), help_(std::move(help)), type_(type), label_names_(std::move(label_names)),
      bounds_(std::move(buckets)) {
  std::sort(bounds_.begin(), bounds_.end());
}

MetricFamily::Series& MetricFamily::SeriesFor(const Labels& labels) {
  if (labels.size() != label_names_.size())
    throw std::invalid_argument("metric " + name_ + ": expected " + std::to_string(label_names_.size()) +
                                " label values, got " + std::to_string(labels.size()));
  auto [it, inserted] = series_.try_emplace(labels);
  if (inserted && type_ == Type::kHistogram) it->second.buckets.assign(bounds_.size(), 0);
  return it->second;
}

void MetricFamily::Inc(const Labels& labels, double by) {
  std::lock_guard lock(mu_);
  SeriesFor(labels).value += by;
}

void MetricFamily::Set(double value, const Labels& labels) {
  std::lock_guard lock(mu_);
  SeriesFor(labels).value = value;
}

void MetricFamily::Observe(double value, const Labels& labels) {
  std::lock_guard lock(mu_);
  auto& s = SeriesFor(labels);
  s.value += value;
  ++s.count;
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), value);
  if (it != bounds_.end()) ++s.buckets[static_cast<std::size_t>(it - bounds_.begin())];
}

double MetricFamily::Value(const Labels& labels) const {
  std::lock_guard lock(mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.value;
}

bool MetricFamily::Matches(Type type, const std::vector<std::string>& label_names) const {
  return type == type_ && label_names == label_names_;
}

uint64_t MetricFamily::Count(const Labels& labels) const {
  std::lock_guard lock(mu_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.count;
}

void MetricFamily::Render(std::string& out) const {
  std::lock_guard lock(mu_);
  const char* type = type_ == Type::kCounter ? "counter" : type_ == Type::kGauge ? "gauge" : "histogram";
  out += "# HELP " + name_ + " " + help_ + "\n# TYPE " + name_ + " " + type + "\n";
  for (const auto& [labels, s] : series_) {
    if (type_ != Type::kHistogram) {
      out += name_;
      AppendLabels(out, label_names_, labels);
      out += " " + FormatValue(s.value) + "\n";
      continue;
    }
    uint64_t cumulative = 0;
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
      cumulative += s.buckets[i];
      out += name_ + "_bucket";
      AppendLabels(out, label_names_, labels, "le", FormatValue(bounds_[i]));
      out += " " + std::to_string(cumulative) + "\n";
    }
    out += name_ + "_bucket";
    AppendLabels(out, label_names_, labels, "le", "+Inf");
    out += " " + std::to_string(s.count) + "\n";
    out += name_ + "_sum";
    AppendLabels(out, label_names_, labels);
    out += " " + FormatValue(s.value) + "\n";
    out += name_ + "_count";
    AppendLabels(out, label_names_, labels);
    out += " " + std::to_string(s.count) + "\n";
  }
}

std::vector<double> MetricsRegistry::DefaultBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

std::vector<double> MetricsRegistry::LatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

MetricFamily& MetricsRegistry::Add(const std::string& name, const std::string& help, MetricFamily::Type type,
                                   std::vector<std::string> label_names, std::vector<double> buckets) {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) {  // registered once, shared afterwards
    if (!it->second->Matches(type, label_names))
      throw MetricNameError("metric " + name + ": registered again with another type or other labels");
    return *it->second;
  }
  CheckFamily(name, type, label_names);
  auto fam = std::make_unique<MetricFamily>(name, help, type, std::move(label_names), std::move(buckets));
  auto& ref = *fam;
  families_.emplace(name, std::move(fam));
  return ref;
}

MetricFamily& MetricsRegistry::Counter(const std::string& name, const std::string& help,
                                       std::vector<std::string> label_names) {
  return Add(name, help, MetricFamily::Type::kCounter, std::move(label_names), {});
}

MetricFamily& MetricsRegistry::Gauge(const std::string& name, const std::string& help,
                                     std::vector<std::string> label_names) {
  return Add(name, help, MetricFamily::Type::kGauge, std::move(label_names), {});
}

MetricFamily& MetricsRegistry::Histogram(const std::string& name, const std::string& help,
                                         std::vector<std::string> label_names, std::vector<double> buckets) {
  return Add(name, help, MetricFamily::Type::kHistogram, std::move(label_names),
             buckets.empty() ? LatencyBuckets() : std::move(buckets));
}

void MetricsRegistry::OnCollect(std::function<void(MetricsRegistry&)> collector) {
  std::lock_guard lock(mu_);
  collectors_.push_back(std::move(collector));
}

std::string MetricsRegistry::Render() {
  std::vector<std::function<void(MetricsRegistry&)>> collectors;
  {
    std::lock_guard lock(mu_);
    collectors = collectors_;
  }
  for (auto& c : collectors) c(*this);
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& [name, fam] : families_) fam->Render(out);
  return out;
}

}  // namespace dranet
