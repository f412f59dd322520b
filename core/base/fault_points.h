#pragma once
// core/base/fault_points.h — named crash points for kill -9 tests.
//
// DRANET_FAULT_POINT("name") compiles to nothing unless the translation unit is
// built with DRANET_FAULT_POINTS defined (only the test variants of the
// libraries are). In such a build, a process started with DRANET_FAULT=<name>
// sends itself SIGKILL when it reaches that point, so a test can check that
// every step of prepare and unprepare converges after a restart.
//
// The names are data: kFaultPoints lists every point placed in core/kubelet
// and core/state, and tests iterate over it.
#include <array>
#include <string_view>

#ifdef DRANET_FAULT_POINTS
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#endif

namespace dranet {

// Every fault point, in the order a prepare/unprepare reaches them.
inline constexpr std::array<std::string_view, 8> kFaultPoints = {
    "prepare-after-claim-read",   // claim read and validated, nothing built yet
    "prepare-before-persist",     // plans built, checkpoint not written
    "state-write-torn",           // half of the new checkpoint written (in <file>.tmp), then killed
    "state-before-rename",        // checkpoint written as <file>.tmp, not renamed
    "state-after-rename",         // new checkpoint in place
    "prepare-after-persist",      // persisted, kubelet not answered
    "unprepare-before-persist",   // claims looked up, checkpoint not written
    "unprepare-after-persist",    // removal persisted, kubelet not answered
};

#ifdef DRANET_FAULT_POINTS
// True when DRANET_FAULT names `point` (read on every call; tests set it
// before the process starts and never change it).
inline bool FaultArmed(std::string_view point) noexcept {
  const char* wanted = std::getenv("DRANET_FAULT");
  return wanted != nullptr && point == wanted;
}
inline void FaultPoint(std::string_view point) noexcept {
  if (FaultArmed(point)) {
    ::kill(::getpid(), SIGKILL);
    ::_exit(137);  // not reached
  }
}
#define DRANET_FAULT_POINT(name) ::dranet::FaultPoint(name)
#else
#define DRANET_FAULT_POINT(name) ((void)0)
#endif

}  // namespace dranet
