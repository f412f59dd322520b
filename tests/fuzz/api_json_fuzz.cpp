// api_json_fuzz: what the API server sends us, as arbitrary JSON
// (core/kube/resource_slice.h, resource_claim.h).
//
// The input is parsed with ParseJson (base/json.h: nesting capped, as the
// API client parses every body and watch line); a document
// that parses goes to ParseSlice and ParseResourceClaim. Checked: they throw
// nothing but std::invalid_argument (their documented failure); a slice
// that parses renders back to JSON that parses again as a slice equal to
// the first one, semantically, and that slice compares equal to itself.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "base/json.h"
#include "fuzz_support.h"
#include "kube/resource_claim.h"
#include "kube/resource_slice.h"

namespace {

using namespace dranet;

void FuzzSlice(const rapidjson::Value& object) {
  kube::ResourceSlice slice;
  try {
    slice = kube::ParseSlice(object);
  } catch (const std::invalid_argument&) {
    return;
  }
  fuzz::Check(kube::SemanticallyEqual(slice, slice) || slice.has_foreign_content,
              "a parsed slice is not semantically equal to itself");
  const std::string json = kube::SliceToJson(slice);
  rapidjson::Document again;
  again.Parse(json.data(), json.size());
  fuzz::Check(!again.HasParseError(), "SliceToJson wrote JSON that does not parse");
  kube::ResourceSlice reread;
  try {
    reread = kube::ParseSlice(again);
  } catch (const std::invalid_argument& e) {
    fuzz::Fail(std::string("SliceToJson output does not parse as a slice: ") + e.what());
  }
  if (!slice.has_foreign_content) {
    fuzz::Check(kube::SemanticallyEqual(slice, reread), "slice changed through SliceToJson/ParseSlice");
  }
}

void FuzzClaim(const rapidjson::Value& object) {
  kube::ResourceClaim claim;
  try {
    claim = kube::ParseResourceClaim(object);
  } catch (const std::invalid_argument&) {
    return;
  }
  for (const auto& config : claim.configs) {
    if (config.parameters_json.empty()) continue;
    rapidjson::Document parameters;
    parameters.Parse(config.parameters_json.data(), config.parameters_json.size());
    fuzz::Check(!parameters.HasParseError(), "opaque parameters re-serialised as invalid JSON");
  }
  (void)claim.ResultsFor("dra.net");
  (void)claim.ResultsFor("dra.net", "node-a");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rapidjson::Document document;
  if (!ParseJson(document, std::string_view(reinterpret_cast<const char*>(data), size)).empty()) return 0;
  FuzzSlice(document);
  FuzzClaim(document);
  return 0;
}
