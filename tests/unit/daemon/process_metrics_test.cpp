// The daemon's own footprint: resident anonymous memory as it reads it, and
// the free heap given back to the kernel once start-up is over.
#include "daemon/process_metrics.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/metrics.h"

namespace dranet::daemon {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;

TEST(ProcessMetricsTest, ResidentAnonymousMemoryGrowsWithWrittenHeap) {
  const uint64_t before = ResidentAnonymousBytes();
  ASSERT_GT(before, 0u);
  std::vector<char> block(32 * kMiB);
  std::memset(block.data(), 1, block.size());
  EXPECT_GE(ResidentAnonymousBytes(), before + 24 * kMiB);
}

TEST(ProcessMetricsTest, ScrapeReportsAnonymousAndWholeResidentMemory) {
  MetricsRegistry registry;
  RegisterProcessMetrics(registry, "test");
  const std::string text = registry.Render();
  EXPECT_NE(text.find("\ndranet_process_anonymous_memory_bytes "), std::string::npos) << text;
  EXPECT_NE(text.find("\nprocess_resident_memory_bytes "), std::string::npos) << text;
}

// Start-up's pattern: many mid-sized blocks written, then freed while a later
// allocation stays live above them. glibc keeps such memory resident (only
// the top of the heap goes back by itself); ReturnFreeHeap gives it back.
TEST(ProcessMetricsTest, FreedHeapBelowALiveBlockGoesBackToTheKernel) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator replaces malloc; malloc_trim has no arenas to trim";
#else
  std::vector<void*> blocks;
  for (int i = 0; i < 4096; ++i) {  // 16 MiB of 4 KiB blocks (below the mmap threshold)
    blocks.push_back(std::malloc(4096));
    ASSERT_NE(blocks.back(), nullptr);
    std::memset(blocks.back(), 1, 4096);
  }
  void* pin = std::malloc(4096);
  ASSERT_NE(pin, nullptr);
  std::memset(pin, 1, 4096);
  for (void* b : blocks) std::free(b);
  const uint64_t freed_but_resident = ResidentAnonymousBytes();
  const HeapReturned returned = ReturnFreeHeap();
  EXPECT_GE(returned.before, freed_but_resident - kMiB);
  EXPECT_LE(returned.after + 12 * kMiB, returned.before)
      << "before " << returned.before / 1024 << " KiB, after " << returned.after / 1024 << " KiB";
  std::free(pin);
#endif
}

}  // namespace
}  // namespace dranet::daemon
