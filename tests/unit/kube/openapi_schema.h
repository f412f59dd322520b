#pragma once
// tests/unit/kube/openapi_schema.h — checks JSON we send against the resource.k8s.io/v1
// OpenAPI v3 document (tests/data/resource.k8s.io-v1.openapi.json, Kubernetes' own
// api/openapi-spec/v3 file; provenance in tests/data/README.md): every property we write exists
// in the schema, has the schema's type, and every required property is present. The API
// server's extra limits are checked by the model's own validation and its tests.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <rapidjson/document.h>

namespace dranet::kube::testing {

class OpenApiSchema {
 public:
  explicit OpenApiSchema(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    document_.Parse(text.str().c_str());
    loaded_ = !document_.HasParseError() && document_.IsObject() &&
              document_.HasMember("components");
  }
  bool loaded() const { return loaded_; }

  // Problems found in `value` checked against components.schemas[name]; empty when valid.
  std::vector<std::string> Validate(const rapidjson::Value& value, const std::string& name) const {
    std::vector<std::string> problems;
    const rapidjson::Value* schema = Named(name);
    if (schema == nullptr) {
      problems.push_back("no schema " + name);
      return problems;
    }
    Check(value, *schema, name, problems);
    return problems;
  }

 private:
  const rapidjson::Value* Named(const std::string& name) const {
    const auto& schemas = document_["components"]["schemas"];
    auto it = schemas.FindMember(name.c_str());
    return it == schemas.MemberEnd() ? nullptr : &it->value;
  }

  // Follows "$ref" and single-entry "allOf" wrappers to the schema that has the shape.
  const rapidjson::Value& Resolve(const rapidjson::Value& schema) const {
    if (schema.HasMember("$ref")) {
      std::string ref = schema["$ref"].GetString();
      const std::string prefix = "#/components/schemas/";
      if (const auto* named = Named(ref.substr(prefix.size()))) return Resolve(*named);
    }
    if (schema.HasMember("allOf") && schema["allOf"].Size() == 1) return Resolve(schema["allOf"][0]);
    return schema;
  }

  void Check(const rapidjson::Value& value, const rapidjson::Value& raw_schema,
             const std::string& where, std::vector<std::string>& problems) const {
    const rapidjson::Value& schema = Resolve(raw_schema);
    std::string type = schema.HasMember("type") ? schema["type"].GetString() : "";
    if (type == "string" && !value.IsString()) problems.push_back(where + ": not a string");
    if (type == "integer" && !value.IsInt64()) problems.push_back(where + ": not an integer");
    if (type == "boolean" && !value.IsBool()) problems.push_back(where + ": not a boolean");
    if (type == "array") {
      if (!value.IsArray()) {
        problems.push_back(where + ": not an array");
        return;
      }
      for (rapidjson::SizeType i = 0; i < value.Size(); ++i)
        Check(value[i], schema["items"], where + "[" + std::to_string(i) + "]", problems);
    }
    if (type == "object") {
      if (!value.IsObject()) {
        problems.push_back(where + ": not an object");
        return;
      }
      if (schema.HasMember("required")) {
        for (const auto& required : schema["required"].GetArray())
          if (!value.HasMember(required.GetString()))
            problems.push_back(where + ": missing required " + required.GetString());
      }
      for (const auto& member : value.GetObject()) {
        std::string key = member.name.GetString();
        if (schema.HasMember("properties") && schema["properties"].HasMember(key.c_str())) {
          Check(member.value, schema["properties"][key.c_str()], where + "." + key, problems);
        } else if (schema.HasMember("additionalProperties") &&
                   schema["additionalProperties"].IsObject()) {
          Check(member.value, schema["additionalProperties"], where + "[" + key + "]", problems);
        } else if (schema.HasMember("properties")) {
          problems.push_back(where + ": unknown property " + key);
        }
      }
    }
  }

  rapidjson::Document document_;
  bool loaded_ = false;
};

}  // namespace dranet::kube::testing
