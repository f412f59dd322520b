#include "base/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

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
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
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

}  // namespace

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

std::vector<double> MetricsRegistry::LatencyBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

MetricFamily& MetricsRegistry::Add(const std::string& name, const std::string& help, MetricFamily::Type type,
                                   std::vector<std::string> label_names, std::vector<double> buckets) {
  std::lock_guard lock(mu_);
  auto it = families_.find(name);
  if (it != families_.end()) return *it->second;  // registered once, shared afterwards
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
