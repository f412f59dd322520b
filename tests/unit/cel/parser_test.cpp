// Compile-time behaviour: error positions and excerpts, and the input
// length and nesting bounds.
#include <gtest/gtest.h>

#include <string>

#include "cel/cel.h"

namespace dranet::cel {
namespace {

Error CompileErrorOf(const std::string& expr, const Environment& env = {}) {
  try {
    Compile(expr, env);
  } catch (const CompileError& e) {
    return e.error();
  }
  ADD_FAILURE() << "compiled: " << expr;
  return {};
}

TEST(CompileErrors, CarryLineColumnAndCaret) {
  Error e = CompileErrorOf("device.driver == \"dra.net\" &&\n  device.attributes[\"dra.net\"].rdma === true");
  EXPECT_EQ(e.position.line, 2u);
  EXPECT_EQ(e.position.column, 39u);
  EXPECT_EQ(e.ToString(),
            "2:39: unexpected '=' (did you mean '=='?)\n"
            " |   device.attributes[\"dra.net\"].rdma === true\n"
            " | ......................................^");
}

TEST(CompileErrors, UnknownIdentifierIsNamed) {
  Error e = CompileErrorOf("devise.driver == \"dra.net\"");
  EXPECT_EQ(e.position.column, 1u);
  EXPECT_NE(e.message.find("undeclared reference to 'devise'"), std::string::npos);
}

TEST(CompileErrors, WrongCallFormIsExplained) {
  Error e = CompileErrorOf("startsWith(device.driver, \"dra\")");
  EXPECT_NE(e.message.find("must be called as x.startsWith(...)"), std::string::npos) << e.message;
}

TEST(Limits, InputLengthIsBounded) {
  Environment env;
  env.max_source_bytes = 64;
  std::string expr = "device.driver == \"" + std::string(60, 'a') + "\"";
  Error e = CompileErrorOf(expr, env);
  EXPECT_NE(e.message.find("over the limit of 64"), std::string::npos) << e.message;
  // The default limit is the API's 10 KiB.
  EXPECT_NO_THROW(Compile(expr));
  EXPECT_THROW(Compile(std::string(10 * 1024 + 1, ' ')), CompileError);
}

TEST(Limits, NestingDepthIsBounded) {
  std::string deep = std::string(200, '(') + "true" + std::string(200, ')');
  Error e = CompileErrorOf(deep);
  EXPECT_NE(e.message.find("nested deeper than 64 levels"), std::string::npos) << e.message;
  std::string nots = std::string(500, '!') + "true";
  EXPECT_THROW(Compile(nots), CompileError);
  std::string lists = std::string(300, '[') + std::string(300, ']');
  EXPECT_THROW(Compile(lists), CompileError);
  std::string shallow = std::string(20, '(') + "true" + std::string(20, ')');
  EXPECT_TRUE(Compile(shallow).Evaluate(DeviceView{"dra.net", nullptr, nullptr}).matched);
}

TEST(Lexer, StringEscapesAndRawStrings) {
  DeviceView none{"dra.net", nullptr, nullptr};
  EXPECT_TRUE(Compile(R"("a\tb" == "a" + "\x09" + 'b')").Evaluate(none).matched);
  EXPECT_TRUE(Compile(R"("\u00e9" == "é" && "\101" == "A")").Evaluate(none).matched);
  EXPECT_TRUE(Compile(R"(r"\d" == "\\d")").Evaluate(none).matched);
  EXPECT_TRUE(Compile("true // trailing comment").Evaluate(none).matched);
  EXPECT_THROW(Compile(R"("\q")"), CompileError);
}

}  // namespace
}  // namespace dranet::cel

namespace dranet::cel {
namespace {

TEST(Lexer, StringLiteralRoundTrips) {
  const std::string tricky = "a\"b\\c\nd\te\x01" "é";
  EXPECT_EQ(StringLiteral("mlx5_0"), "\"mlx5_0\"");
  DeviceView none{"dra.net", nullptr, nullptr};
  EXPECT_TRUE(Compile(StringLiteral(tricky) + " == " + StringLiteral(tricky) + " && " + StringLiteral(tricky) +
                      ".size() == 11")
                  .Evaluate(none)
                  .matched);
}

}  // namespace
}  // namespace dranet::cel
