// The Prometheus registry renders the text format exactly.
#include "base/metrics.h"

#include <gtest/gtest.h>

namespace dranet {
namespace {

TEST(Metrics, CountersAndGaugesWithLabels) {
  MetricsRegistry r;
  auto& prepared = r.Counter("dranet_claims_prepared_total", "Claims prepared", {"result"});
  prepared.Inc({"ok"});
  prepared.Inc({"ok"});
  prepared.Inc({"error"});
  r.Gauge("dranet_published_devices", "Devices").Set(4);
  std::string out = r.Render();
  EXPECT_NE(out.find("# HELP dranet_claims_prepared_total Claims prepared\n# TYPE dranet_claims_prepared_total counter\n"),
            std::string::npos);
  EXPECT_NE(out.find("dranet_claims_prepared_total{result=\"ok\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("dranet_claims_prepared_total{result=\"error\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE dranet_published_devices gauge\ndranet_published_devices 4\n"), std::string::npos);
  EXPECT_EQ(prepared.Value({"ok"}), 2);
}

TEST(Metrics, HistogramBucketsAreCumulative) {
  MetricsRegistry r;
  auto& h = r.Histogram("dranet_hook_duration_seconds", "Hook latency", {"hook"}, {0.001, 0.01, 0.1});
  h.Observe(0.0005, {"CreateContainer"});
  h.Observe(0.005, {"CreateContainer"});
  h.Observe(0.5, {"CreateContainer"});
  std::string out = r.Render();
  EXPECT_NE(out.find("dranet_hook_duration_seconds_bucket{hook=\"CreateContainer\",le=\"0.001\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("dranet_hook_duration_seconds_bucket{hook=\"CreateContainer\",le=\"0.01\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("dranet_hook_duration_seconds_bucket{hook=\"CreateContainer\",le=\"0.1\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("dranet_hook_duration_seconds_bucket{hook=\"CreateContainer\",le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(out.find("dranet_hook_duration_seconds_count{hook=\"CreateContainer\"} 3\n"), std::string::npos);
  EXPECT_NE(out.find("dranet_hook_duration_seconds_sum{hook=\"CreateContainer\"} 0.5055\n"), std::string::npos);
  EXPECT_EQ(h.Count({"CreateContainer"}), 3u);
}

TEST(Metrics, LabelValuesAreEscapedAndArityChecked) {
  MetricsRegistry r;
  auto& g = r.Gauge("x", "help", {"name"});
  g.Set(1, {"a\"b\\c\nd"});
  EXPECT_NE(r.Render().find("x{name=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos) << r.Render();
  EXPECT_THROW(g.Set(1, {}), std::invalid_argument);
}

TEST(Metrics, SameNameReturnsTheSameFamilyAndCollectorsRun) {
  MetricsRegistry r;
  EXPECT_EQ(&r.Counter("c_total", "h"), &r.Counter("c_total", "h"));
  int runs = 0;
  r.OnCollect([&](MetricsRegistry& reg) {
    ++runs;
    reg.Gauge("collected", "h").Set(runs);
  });
  r.Render();
  EXPECT_NE(r.Render().find("collected 2\n"), std::string::npos);
}

TEST(Metrics, NamesFollowThePrometheusConventions) {
  MetricsRegistry r;
  // _total on counters, and only on counters.
  EXPECT_THROW(r.Counter("dranet_prepares", "h"), MetricNameError);
  EXPECT_THROW(r.Gauge("dranet_devices_total", "h"), MetricNameError);
  EXPECT_THROW(r.Histogram("dranet_latency_seconds_total", "h"), MetricNameError);
  // What histograms render for themselves is no family's name.
  EXPECT_THROW(r.Gauge("dranet_x_count", "h"), MetricNameError);
  EXPECT_THROW(r.Gauge("dranet_x_sum", "h"), MetricNameError);
  EXPECT_THROW(r.Counter("dranet_x_bucket", "h"), MetricNameError);
  EXPECT_THROW(r.Histogram("dranet_y_seconds", "h", {"le"}), MetricNameError);
  // The exposition format's character set.
  EXPECT_THROW(r.Gauge("dranet-devices", "h"), MetricNameError);
  EXPECT_THROW(r.Gauge("9devices", "h"), MetricNameError);
  EXPECT_THROW(r.Gauge("dranet_devices", "h", {"pci-address"}), MetricNameError);
  EXPECT_THROW(r.Gauge("dranet_devices", "h", {"__name"}), MetricNameError);
  // One name, one meaning.
  r.Gauge("dranet_devices", "h", {"kind"});
  EXPECT_THROW(r.Counter("dranet_devices", "h", {"kind"}), MetricNameError);
  EXPECT_THROW(r.Gauge("dranet_devices", "h", {"pool"}), MetricNameError);
  EXPECT_NO_THROW(r.Gauge("dranet_devices", "", {"kind"}));
  // DRANET's published-devices gauge keeps the name its dashboards query.
  EXPECT_NO_THROW(r.Gauge("dranet_driver_published_devices_total", "h", {"feature"}));
}

TEST(Metrics, ValuesKeepEveryDigitTheyHave) {
  MetricsRegistry r;
  r.Gauge("t_seconds", "h").Set(1795581234.567);
  r.Gauge("small", "h").Set(0.1);
  r.Gauge("smaller", "h").Set(0.0001);
  r.Gauge("tiny", "h").Set(0.00001);
  const auto out = r.Render();
  EXPECT_NE(out.find("smaller 0.0001\n"), std::string::npos) << out;
  EXPECT_NE(out.find("tiny 1e-05\n"), std::string::npos) << out;
  // Every digit kept (a Unix time to the millisecond), in the form Go's
  // client prints such values.
  EXPECT_NE(out.find("t_seconds 1.795581234567e+09\n"), std::string::npos) << out;
  EXPECT_NE(out.find("small 0.1\n"), std::string::npos) << out;
}

TEST(Metrics, ACounterMayTakeATotalKeptElsewhere) {
  MetricsRegistry r;
  r.Counter("process_cpu_seconds_total", "CPU").Set(1.5);
  EXPECT_NE(r.Render().find("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.5\n"),
            std::string::npos)
      << r.Render();
}

}  // namespace
}  // namespace dranet
