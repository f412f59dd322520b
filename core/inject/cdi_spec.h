#pragma once
// core/inject/cdi_spec.h — the CDI strategy: a claim's char devices and env
// as a CDI spec file, so that a runtime with CDI support injects them (and
// fails the container when the file is missing: injection fails closed).
//
// One spec file per claim, <cdi_dir>/dra.net_rdma-<claim uid>.json, kind
// "dra.net/rdma", one device named after the claim UID. Written atomically
// (temp + fsync + rename + fsync dir) at prepare; removed at unprepare. NRI
// keeps moving the netdevs either way.
#include <string>
#include <vector>

#include "inject/plan.h"

namespace dranet::inject {

inline constexpr char kCdiKind[] = "dra.net/rdma";
inline constexpr char kCdiVersion[] = "0.5.0";
inline constexpr char kDefaultCdiDir[] = "/var/run/cdi";

// The spec file's JSON for `plan` (exposed for tests).
std::string RenderCdiSpec(const ClaimPlan& plan);

// The path of the spec file of `claim_uid` under `cdi_dir`.
std::string CdiSpecPath(const std::string& claim_uid, const std::string& cdi_dir);

// Writes the spec of `plan` and returns its fully-qualified CDI device ids
// ("dra.net/rdma=<claim uid>") for NodePrepareResources. A plan without
// device nodes and env writes nothing and returns no ids. Idempotent.
// Throws std::system_error naming the file, or InjectError for a claim UID
// that cannot be a CDI device name.
std::vector<std::string> WriteCdiSpec(const ClaimPlan& plan, const std::string& cdi_dir);

// Removes the spec of `claim_uid`; absent files are fine. Throws
// std::system_error naming the file on other failures.
void RemoveCdiSpec(const std::string& claim_uid, const std::string& cdi_dir);

}  // namespace dranet::inject
