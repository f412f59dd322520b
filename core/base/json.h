#pragma once
// core/base/json.h — parsing JSON that comes from outside (the API server,
// snapshots, the checkpoint, claim configuration) without letting its shape
// crash the daemon.
//
// RapidJSON's default parser recurses once per nesting level, and so do
// CopyFrom, Accept (writing) and the walkers built on them: a body of a
// million '[' overflows the stack before any error can be logged. Every
// document is therefore first scanned for its nesting depth (linear, no
// allocation) and refused beyond kMaxJsonDepth, then parsed iteratively.
#include <rapidjson/document.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace dranet {

// Deeper than any Kubernetes object or snapshot file dranet reads (a
// ResourceClaim is about 10 levels deep).
inline constexpr int kMaxJsonDepth = 128;

// The offset of the first '[' or '{' that opens level max_depth + 1 outside
// string literals, or npos when the text stays within max_depth.
std::size_t FindJsonDepthExcess(std::string_view text, int max_depth = kMaxJsonDepth);

// Parses `text` into `doc`. Returns "" on success, else a message naming the
// problem and its byte offset ("nested deeper than 128 levels at offset 128",
// "Invalid value. at offset 0"). With `stop_when_done`, text after the first
// complete value is ignored.
std::string ParseJson(rapidjson::Document& doc, std::string_view text, bool stop_when_done = false);

}  // namespace dranet
