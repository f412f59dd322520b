#include "base/json.h"

#include <rapidjson/error/en.h>

namespace dranet {

std::size_t FindJsonDepthExcess(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > max_depth) return i;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;  // unbalanced text is the parser's to report
        break;
      default: break;
    }
  }
  return std::string_view::npos;
}

std::string ParseJson(rapidjson::Document& doc, std::string_view text, bool stop_when_done) {
  if (const auto at = FindJsonDepthExcess(text); at != std::string_view::npos) {
    doc.SetNull();
    return "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels at offset " + std::to_string(at);
  }
  if (stop_when_done) {
    doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseStopWhenDoneFlag>(text.data(), text.size());
  } else {
    doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  }
  if (!doc.HasParseError()) return {};
  return std::string(rapidjson::GetParseError_En(doc.GetParseError())) + " at offset " +
         std::to_string(doc.GetErrorOffset());
}

}  // namespace dranet
