#pragma once
// core/state/plan_json.h — ClaimPlan <-> JSON, the body of the checkpoint.
//
// Field names are camelCase like the Kubernetes objects the plans come from.
// Decoding is strict: a missing or mistyped field throws
// std::invalid_argument naming the field, so a damaged checkpoint is caught
// even when its checksum happens to match.
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "inject/plan.h"

namespace dranet::state {

// The plans as a JSON array, compact, in the given order.
std::string PlansToJson(const std::vector<inject::ClaimPlan>& plans);

// One plan as a compact JSON object: "[" + the objects joined by "," + "]"
// is exactly PlansToJson of those plans (the checkpoint keeps each claim's
// text and joins them instead of serialising every plan on every write).
std::string PlanToJson(const inject::ClaimPlan& plan);

// Decodes an array written by PlansToJson. Throws std::invalid_argument.
std::vector<inject::ClaimPlan> PlansFromJson(const rapidjson::Value& array);

}  // namespace dranet::state
