#pragma once
// core/kube/json_fields.h — safe reads of optional fields from API objects. The API server's
// JSON is input we do not control: a missing or mistyped field reads as empty, never crashes.
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace dranet::kube {

// The member `key` of `object`, or nullptr when `object` is not an object or lacks it.
inline const rapidjson::Value* Member(const rapidjson::Value& object, const char* key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

inline std::string StringField(const rapidjson::Value& object, const char* key) {
  const auto* value = Member(object, key);
  return value && value->IsString() ? std::string(value->GetString(), value->GetStringLength())
                                    : std::string();
}

inline int64_t IntField(const rapidjson::Value& object, const char* key) {
  const auto* value = Member(object, key);
  return value && value->IsInt64() ? value->GetInt64() : 0;
}

inline bool BoolField(const rapidjson::Value& object, const char* key) {
  const auto* value = Member(object, key);
  return value && value->IsBool() && value->GetBool();
}

// metadata.<key> of an API object.
inline std::string MetadataField(const rapidjson::Value& object, const char* key) {
  const auto* metadata = Member(object, "metadata");
  return metadata ? StringField(*metadata, key) : std::string();
}

}  // namespace dranet::kube
