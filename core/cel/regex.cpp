#include "cel/regex.h"

namespace dranet::cel {
namespace {

// RE2 pattern → POSIX ERE, or RegexError for what ERE cannot express.
std::string ToExtendedRegex(std::string_view pattern, bool& icase) {
  icase = false;
  if (pattern.substr(0, 4) == "(?i)") {
    icase = true;
    pattern.remove_prefix(4);
  }
  std::string out;
  bool in_brackets = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (in_brackets) {
      out.push_back(c);
      if (c == ']' && out.size() >= 2 && out[out.size() - 2] != '[') in_brackets = false;
      continue;
    }
    if (c == '[') {
      in_brackets = true;
      out.push_back(c);
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out.push_back(pattern[++i]);
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out.push_back(pattern[++i]);
      continue;
    }
    if (c == '\\' && i + 1 < pattern.size()) {
      char e = pattern[++i];
      if (e >= '1' && e <= '9') throw RegexError("back-references (\\" + std::string(1, e) + ") are not supported");
      switch (e) {
        case 'd': out += "[0-9]"; break;
        case 'D': out += "[^0-9]"; break;
        case 'w': out += "[[:alnum:]_]"; break;
        case 'W': out += "[^[:alnum:]_]"; break;
        case 's': out += "[[:space:]]"; break;
        case 'S': out += "[^[:space:]]"; break;
        default:
          out.push_back('\\');
          out.push_back(e);
      }
      continue;
    }
    if (c == '(' && i + 1 < pattern.size() && pattern[i + 1] == '?') {
      if (pattern.substr(i, 3) != "(?:") throw RegexError("only a leading (?i) and (?: groups are supported");
      out.push_back('(');
      i += 2;
      continue;
    }
    if ((c == '*' || c == '+' || c == '?' || c == '}') && i + 1 < pattern.size() && pattern[i + 1] == '?')
      throw RegexError("lazy quantifiers are not supported");
    // A quantifier on a quantifier ("a++", "a*+"): RE2 rejects it ("bad
    // repetition operator"), and glibc compiles long runs of them into an
    // automaton that exhausts memory.
    if ((c == '*' || c == '+' || c == '?' || c == '}') && i + 1 < pattern.size() &&
        (pattern[i + 1] == '*' || pattern[i + 1] == '+'))
      throw RegexError("bad repetition operator: " + std::string(pattern.substr(i, 2)));
    out.push_back(c);
  }
  return out;
}

}  // namespace

Regex::Regex(const std::string& pattern) {
  bool icase = false;
  std::string ere = ToExtendedRegex(pattern, icase);
  int rc = regcomp(&compiled_, ere.c_str(), REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
  if (rc != 0) {
    char message[256];
    regerror(rc, &compiled_, message, sizeof message);
    regfree(&compiled_);
    throw RegexError(message);
  }
}

Regex::~Regex() { regfree(&compiled_); }

bool Regex::Search(const std::string& text) const {
  // REG_STARTEND: the subject is the whole string, NUL bytes included.
  regmatch_t range{0, static_cast<regoff_t>(text.size())};
  return regexec(&compiled_, text.c_str(), 1, &range, REG_STARTEND) == 0;
}

std::shared_ptr<const Regex> CompileRegex(const std::string& pattern) {
  return std::make_shared<const Regex>(pattern);
}

}  // namespace dranet::cel
