#pragma once
// core/daemon/process_metrics.h — the daemon's own footprint as metrics:
// resident memory, open file descriptors, CPU seconds, threads, start time
// and build information, refreshed at every scrape.
#include "base/metrics.h"

namespace dranet::daemon {
void RegisterProcessMetrics(MetricsRegistry& registry, const char* version);
}
