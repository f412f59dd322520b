// core/kube/resource_slice.cpp — building, validating, rendering and parsing ResourceSlices.
#include "kube/resource_slice.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "kube/json_fields.h"
#include "base/json.h"
#include "base/k8s_names.h"

namespace dranet::kube {
namespace {

std::string ValidateAttributeValue(const inventory::AttributeValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) {
    if (text->size() > kMaxAttributeValueBytes)
      return "string value is " + std::to_string(text->size()) + " bytes (limit 64)";
  } else if (const auto* version = std::get_if<inventory::SemVer>(&value)) {
    if (version->value.size() > kMaxAttributeValueBytes)
      return "version value is longer than 64 bytes";
    if (!IsSemVer(version->value)) return "version value \"" + version->value + "\" is not semver 2.0.0";
  } else if (const auto* list = std::get_if<inventory::IntList>(&value)) {
    if (list->empty()) return "int list is empty";
  }
  return {};
}

// What a value counts against kMaxAttributeValuesPerDevice: each list item, or 1.
std::size_t ValueCount(const inventory::AttributeValue& value) {
  const auto* list = std::get_if<inventory::IntList>(&value);
  return list ? list->size() : 1;
}

bool HasListAttribute(const inventory::Device& device) {
  return std::any_of(device.attributes.begin(), device.attributes.end(), [](const auto& attribute) {
    return std::holds_alternative<inventory::IntList>(attribute.second);
  });
}

// A stable 32-bit FNV-1a hash, used to keep shortened slice names unique per node.
uint32_t Fnv1a(std::string_view text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

void WriteString(rapidjson::Writer<rapidjson::StringBuffer>& writer, std::string_view text) {
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}

void WriteAttributeValue(rapidjson::Writer<rapidjson::StringBuffer>& writer,
                         const inventory::AttributeValue& value) {
  writer.StartObject();
  std::visit(
      [&writer](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          writer.Key("string");
          WriteString(writer, v);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          writer.Key("int");
          writer.Int64(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          writer.Key("bool");
          writer.Bool(v);
        } else if constexpr (std::is_same_v<T, inventory::SemVer>) {
          writer.Key("version");
          WriteString(writer, v.value);
        } else {
          static_assert(std::is_same_v<T, inventory::IntList>);
          writer.Key("ints");
          writer.StartArray();
          for (int64_t item : v) writer.Int64(item);
          writer.EndArray();
        }
      },
      value);
  writer.EndObject();
}

bool IsEmptyContainer(const rapidjson::Value& value) {
  return value.IsNull() || (value.IsObject() && value.MemberCount() == 0) ||
         (value.IsArray() && value.Empty());
}

// Reads one DeviceAttribute ({"string": …} etc.). Returns false for kinds we never write.
bool ParseAttributeValue(const rapidjson::Value& json, inventory::AttributeValue& out) {
  if (!json.IsObject() || json.MemberCount() != 1) return false;
  const auto& member = *json.MemberBegin();
  std::string_view kind(member.name.GetString(), member.name.GetStringLength());
  const auto& v = member.value;
  if (kind == "string" && v.IsString()) {
    out = std::string(v.GetString(), v.GetStringLength());
  } else if (kind == "int" && v.IsInt64()) {
    out = v.GetInt64();
  } else if (kind == "bool" && v.IsBool()) {
    out = v.GetBool();
  } else if (kind == "version" && v.IsString()) {
    out = inventory::SemVer{std::string(v.GetString(), v.GetStringLength())};
  } else if (kind == "ints" && v.IsArray() && !v.Empty()) {
    inventory::IntList list;
    for (const auto& item : v.GetArray()) {
      if (!item.IsInt64()) return false;
      list.push_back(item.GetInt64());
    }
    out = std::move(list);
  } else {
    return false;
  }
  return true;
}

// A Quantity we write: a whole number without suffix ("8"). The API server keeps that form.
bool ParseWholeQuantity(const rapidjson::Value& json, int64_t& out) {
  if (!json.IsString() || json.GetStringLength() == 0) return false;
  std::string_view text(json.GetString(), json.GetStringLength());
  if (text.size() > 1 && text[0] == '0') return false;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || value > (INT64_MAX - 9) / 10) return false;
    value = value * 10 + (c - '0');
  }
  out = value;
  return true;
}

// Reads one DeviceCapacity of the shape we write: a value and, optionally, a request
// policy with a default and a validRange. Returns false for anything else.
bool ParseCapacity(const rapidjson::Value& json, inventory::DeviceCapacity& out) {
  if (!json.IsObject()) return false;
  for (const auto& member : json.GetObject()) {
    std::string_view key(member.name.GetString(), member.name.GetStringLength());
    if (key == "value") {
      if (!ParseWholeQuantity(member.value, out.value)) return false;
    } else if (key == "requestPolicy" && member.value.IsObject()) {
      inventory::CapacityRequestPolicy policy;
      bool has_default = false, has_range = false;
      for (const auto& field : member.value.GetObject()) {
        std::string_view name(field.name.GetString(), field.name.GetStringLength());
        if (name == "default") {
          if (!ParseWholeQuantity(field.value, policy.default_value)) return false;
          has_default = true;
        } else if (name == "validRange" && field.value.IsObject()) {
          bool has_min = false, has_max = false, has_step = false;
          for (const auto& bound : field.value.GetObject()) {
            std::string_view which(bound.name.GetString(), bound.name.GetStringLength());
            int64_t* target = which == "min" ? &policy.min : which == "max" ? &policy.max
                            : which == "step" ? &policy.step : nullptr;
            if (!target || !ParseWholeQuantity(bound.value, *target)) return false;
            (which == "min" ? has_min : which == "max" ? has_max : has_step) = true;
          }
          if (!has_min || !has_max || !has_step) return false;
          has_range = true;
        } else if (!IsEmptyContainer(field.value)) {
          return false;  // validValues
        }
      }
      if (!has_default || !has_range) return false;
      out.request_policy = policy;
    } else if (!IsEmptyContainer(member.value)) {
      return false;
    }
  }
  return true;
}

void WriteQuantity(rapidjson::Writer<rapidjson::StringBuffer>& writer, int64_t value) {
  WriteString(writer, std::to_string(value));
}

void WriteCapacities(rapidjson::Writer<rapidjson::StringBuffer>& writer, const inventory::Capacities& capacities) {
  writer.StartObject();
  for (const auto& [name, capacity] : capacities) {
    WriteString(writer, name);
    writer.StartObject();
    writer.Key("value");
    WriteQuantity(writer, capacity.value);
    if (capacity.request_policy) {
      const auto& policy = *capacity.request_policy;
      writer.Key("requestPolicy");
      writer.StartObject();
      writer.Key("default");
      WriteQuantity(writer, policy.default_value);
      writer.Key("validRange");
      writer.StartObject();
      writer.Key("min");
      WriteQuantity(writer, policy.min);
      writer.Key("max");
      WriteQuantity(writer, policy.max);
      writer.Key("step");
      WriteQuantity(writer, policy.step);
      writer.EndObject();
      writer.EndObject();
    }
    writer.EndObject();
  }
  writer.EndObject();
}

// Reads the fields of one device into `device`: `json` is the device, or (v1beta1) its
// `basic` object.
void ParseDeviceFields(const rapidjson::Value& json, const std::string& driver, bool nested, SliceDevice& device,
                       bool& foreign) {
  for (const auto& member : json.GetObject()) {
    std::string_view key(member.name.GetString(), member.name.GetStringLength());
    if (key == "name" && !nested) {
      device.name = StringField(json, "name");
    } else if (key == "basic" && !nested && member.value.IsObject()) {
      ParseDeviceFields(member.value, driver, true, device, foreign);
    } else if (key == "attributes" && member.value.IsObject()) {
      for (const auto& attribute : member.value.GetObject()) {
        std::string name(attribute.name.GetString(), attribute.name.GetStringLength());
        // Bare identifiers live in the driver's own domain (k8s.io/api resource/v1 QualifiedName).
        if (name.find('/') == std::string::npos) name = driver + "/" + name;
        inventory::AttributeValue value;
        if (ParseAttributeValue(attribute.value, value)) {
          device.attributes.emplace(std::move(name), std::move(value));
        } else {
          foreign = true;
        }
      }
    } else if (key == "taints" && member.value.IsArray()) {
      for (const auto& taint : member.value.GetArray()) {
        if (!taint.IsObject()) {
          foreign = true;
          continue;
        }
        inventory::DeviceTaint parsed;
        for (const auto& field : taint.GetObject()) {
          std::string_view name(field.name.GetString(), field.name.GetStringLength());
          const std::string text = field.value.IsString() ? field.value.GetString() : "";
          if (name == "key") parsed.key = text;
          else if (name == "value") parsed.value = text;
          else if (name == "effect") parsed.effect = text;
          else if (name != "timeAdded") foreign = true;  // the API server stamps timeAdded
        }
        device.taints.push_back(std::move(parsed));
      }
    } else if (key == "allowMultipleAllocations" && member.value.IsBool()) {
      device.allow_multiple_allocations = member.value.GetBool();
    } else if (key == "capacity" && member.value.IsObject()) {
      for (const auto& capacity : member.value.GetObject()) {
        std::string name(capacity.name.GetString(), capacity.name.GetStringLength());
        if (name.find('/') == std::string::npos) name = driver + "/" + name;
        inventory::DeviceCapacity parsed;
        if (ParseCapacity(capacity.value, parsed)) {
          device.capacity.emplace(std::move(name), parsed);
        } else {
          foreign = true;
        }
      }
    } else if (!IsEmptyContainer(member.value)) {
      foreign = true;  // counters, per-device node selection…
    }
  }
}

SliceDevice ParseDevice(const rapidjson::Value& json, const std::string& driver, bool& foreign) {
  SliceDevice device;
  if (!json.IsObject()) {
    foreign = true;
    return device;
  }
  ParseDeviceFields(json, driver, false, device, foreign);
  return device;
}

}  // namespace

std::string ValidateDevice(const inventory::Device& device) {
  if (!IsDnsLabel(device.name)) return "device name is not a DNS-1123 label (≤63 chars, [a-z0-9-])";
  if (device.attributes.size() > kMaxAttributesPerDevice)
    return "device has " + std::to_string(device.attributes.size()) + " attributes (limit 32)";
  std::size_t values = 0;
  for (const auto& [name, value] : device.attributes) {
    if (!IsQualifiedName(name)) return "attribute name \"" + name + "\" is not a qualified name";
    if (std::string reason = ValidateAttributeValue(value); !reason.empty())
      return "attribute " + name + ": " + reason;
    values += ValueCount(value);
  }
  if (values > kMaxAttributeValuesPerDevice)
    return "device has " + std::to_string(values) + " attribute values, list items counted (limit 48)";
  if (device.attributes.size() + device.capacity.size() > kMaxAttributesPerDevice)
    return "device has " + std::to_string(device.attributes.size() + device.capacity.size()) +
           " attributes and capacities (limit 32)";
  for (const auto& [name, capacity] : device.capacity) {
    if (!IsQualifiedName(name)) return "capacity name \"" + name + "\" is not a qualified name";
    if (capacity.value < 0) return "capacity " + name + " is negative";
    if (!capacity.request_policy) continue;
    // resource.k8s.io validation: a request policy only on a device that allows
    // multiple allocations; min <= default <= max <= value, step > 0.
    const auto& policy = *capacity.request_policy;
    if (!device.allow_multiple_allocations)
      return "capacity " + name + " has a request policy but the device does not allow multiple allocations";
    if (policy.step <= 0 || policy.min < 0 || policy.min > policy.max || policy.max > capacity.value ||
        policy.default_value < policy.min || policy.default_value > policy.max)
      return "capacity " + name + ": request policy outside 0 <= min <= default <= max <= value, step > 0";
  }
  return {};
}

std::string SliceName(std::string_view node_name, std::string_view driver, std::size_t index) {
  std::string suffix = "-" + std::string(driver) + "-" + std::to_string(index);
  std::string name = std::string(node_name) + suffix;
  if (name.size() <= kMaxObjectNameLength) return name;
  char hash[16];
  std::snprintf(hash, sizeof hash, "-%08x", Fnv1a(node_name));
  std::size_t keep = kMaxObjectNameLength - suffix.size() - std::string_view(hash).size();
  std::string shortened(node_name.substr(0, keep));
  // A DNS label must not end in '-' and a subdomain part must not end in '.'.
  while (!shortened.empty() && (shortened.back() == '-' || shortened.back() == '.'))
    shortened.pop_back();
  return shortened + hash + suffix;
}

std::vector<ResourceSlice> BuildSlices(const SliceParams& params,
                                       const std::vector<inventory::Device>& devices,
                                       Logger& log) {
  std::vector<const inventory::Device*> valid;
  valid.reserve(devices.size());
  for (const auto& device : devices) {
    if (std::string reason = ValidateDevice(device); !reason.empty()) {
      log.Warning("device not published", {{"device", device.name}, {"reason", reason}});
      continue;
    }
    valid.push_back(&device);
  }
  // Sorted by name so that the same inventory always gives the same slices.
  std::stable_sort(valid.begin(), valid.end(),
                   [](const auto* a, const auto* b) { return a->name < b->name; });
  auto duplicate = std::adjacent_find(valid.begin(), valid.end(),
                                      [](const auto* a, const auto* b) { return a->name == b->name; });
  while (duplicate != valid.end()) {
    log.Warning("device not published", {{"device", (*duplicate)->name},
                                         {"reason", "duplicate device name in pool"}});
    valid.erase(duplicate + 1);
    duplicate = std::adjacent_find(duplicate, valid.end(),
                                   [](const auto* a, const auto* b) { return a->name == b->name; });
  }

  const std::string& pool = params.pool_name.empty() ? params.node_name : params.pool_name;
  std::vector<std::vector<SliceDevice>> chunks;
  bool chunk_has_list = false;  // the last chunk has a device with a list attribute
  for (const auto* device : valid) {
    // The API's 64-device cap covers a device with taints as one with a list attribute. A
    // shareable device counts too: its capacities make the slice as large per device.
    const bool has_list = HasListAttribute(*device) || !device->taints.empty() || device->allow_multiple_allocations;
    const std::size_t limit =
        chunk_has_list || has_list ? kMaxDevicesPerSliceWithListAttributes : kMaxDevicesPerSlice;
    if (chunks.empty() || chunks.back().size() >= limit) {
      chunks.emplace_back();
      chunk_has_list = false;
    }
    chunk_has_list |= has_list;
    chunks.back().push_back(
        {device->name, device->attributes, device->taints, device->allow_multiple_allocations, device->capacity});
  }

  std::vector<ResourceSlice> slices;
  slices.reserve(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    ResourceSlice slice;
    slice.name = SliceName(params.node_name, params.driver, i);
    slice.labels.emplace(kManagedByLabel, kManagedByValue);
    if (!params.node_uid.empty())
      slice.owner_references.push_back({"v1", "Node", params.node_name, params.node_uid, true});
    slice.driver = params.driver;
    slice.node_name = params.node_name;
    slice.pool_name = pool;
    slice.pool_generation = params.generation;
    slice.resource_slice_count = static_cast<int64_t>(chunks.size());
    slice.devices = std::move(chunks[i]);
    slices.push_back(std::move(slice));
  }
  return slices;
}

void WriteSlice(rapidjson::Writer<rapidjson::StringBuffer>& writer, const ResourceSlice& slice,
                ResourceApiVersion version) {
  writer.StartObject();
  writer.Key("apiVersion");
  WriteString(writer, GroupVersion(version));
  writer.Key("kind");
  writer.String("ResourceSlice");

  writer.Key("metadata");
  writer.StartObject();
  writer.Key("name");
  WriteString(writer, slice.name);
  if (!slice.resource_version.empty()) {
    writer.Key("resourceVersion");
    WriteString(writer, slice.resource_version);
  }
  if (!slice.labels.empty()) {
    writer.Key("labels");
    writer.StartObject();
    for (const auto& [key, value] : slice.labels) {
      WriteString(writer, key);
      WriteString(writer, value);
    }
    writer.EndObject();
  }
  if (!slice.owner_references.empty()) {
    writer.Key("ownerReferences");
    writer.StartArray();
    for (const auto& owner : slice.owner_references) {
      writer.StartObject();
      writer.Key("apiVersion");
      WriteString(writer, owner.api_version);
      writer.Key("kind");
      WriteString(writer, owner.kind);
      writer.Key("name");
      WriteString(writer, owner.name);
      writer.Key("uid");
      WriteString(writer, owner.uid);
      writer.Key("controller");
      writer.Bool(owner.controller);
      writer.EndObject();
    }
    writer.EndArray();
  }
  writer.EndObject();

  writer.Key("spec");
  writer.StartObject();
  writer.Key("driver");
  WriteString(writer, slice.driver);
  writer.Key("nodeName");
  WriteString(writer, slice.node_name);
  writer.Key("pool");
  writer.StartObject();
  writer.Key("name");
  WriteString(writer, slice.pool_name);
  writer.Key("generation");
  writer.Int64(slice.pool_generation);
  writer.Key("resourceSliceCount");
  writer.Int64(slice.resource_slice_count);
  writer.EndObject();
  writer.Key("devices");
  writer.StartArray();
  for (const auto& device : slice.devices) {
    writer.StartObject();
    writer.Key("name");
    WriteString(writer, device.name);
    const bool basic = WrapsDevicesInBasic(version);
    if (basic) {
      writer.Key("basic");
      writer.StartObject();
    }
    writer.Key("attributes");
    writer.StartObject();
    for (const auto& [name, value] : device.attributes) {
      WriteString(writer, name);
      WriteAttributeValue(writer, value);
    }
    writer.EndObject();
    if (!device.taints.empty()) {
      writer.Key("taints");
      writer.StartArray();
      for (const auto& taint : device.taints) {
        writer.StartObject();
        writer.Key("key");
        WriteString(writer, taint.key);
        if (!taint.value.empty()) {
          writer.Key("value");
          WriteString(writer, taint.value);
        }
        writer.Key("effect");
        WriteString(writer, taint.effect);
        writer.EndObject();
      }
      writer.EndArray();
    }
    if (!device.capacity.empty()) {
      writer.Key("capacity");
      WriteCapacities(writer, device.capacity);
    }
    if (device.allow_multiple_allocations) {
      writer.Key("allowMultipleAllocations");
      writer.Bool(true);
    }
    if (basic) writer.EndObject();
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  writer.EndObject();
}

std::string SliceToJson(const ResourceSlice& slice, ResourceApiVersion version) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  WriteSlice(writer, slice, version);
  return {buffer.GetString(), buffer.GetSize()};
}

std::string SlicesToJson(const std::vector<ResourceSlice>& slices, ResourceApiVersion version) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartArray();
  for (const auto& slice : slices) WriteSlice(writer, slice, version);
  writer.EndArray();
  return {buffer.GetString(), buffer.GetSize()};
}

std::vector<inventory::Device> WithScalarAttributes(std::vector<inventory::Device> devices) {
  for (auto& device : devices)
    for (auto& [name, value] : device.attributes)
      if (const auto* list = std::get_if<inventory::IntList>(&value); list && !list->empty()) {
        const int64_t first = list->front();  // copied: the assignment destroys the list
        value = first;
      }
  return devices;
}

bool AnyListAttribute(const std::vector<inventory::Device>& devices) {
  return std::any_of(devices.begin(), devices.end(), [](const auto& d) { return HasListAttribute(d); });
}

std::string AttributesToJson(const inventory::Attributes& attributes) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  for (const auto& [name, value] : attributes) {
    WriteString(writer, name);
    WriteAttributeValue(writer, value);
  }
  writer.EndObject();
  return buffer.GetString();
}

inventory::Attributes AttributesFromJson(std::string_view json) {
  rapidjson::Document doc;
  if (auto error = ParseJson(doc, json); !error.empty()) throw std::invalid_argument("device attributes: " + error);
  if (!doc.IsObject()) throw std::invalid_argument("device attributes: not a JSON object");
  inventory::Attributes out;
  for (const auto& member : doc.GetObject()) {
    std::string name(member.name.GetString(), member.name.GetStringLength());
    inventory::AttributeValue value;
    if (!ParseAttributeValue(member.value, value))
      throw std::invalid_argument("device attribute " + name + ": not a value this driver writes");
    out.emplace(std::move(name), std::move(value));
  }
  return out;
}

ResourceSlice ParseSlice(const rapidjson::Value& object) {
  if (!object.IsObject()) throw std::invalid_argument("ResourceSlice is not a JSON object");
  auto metadata = object.FindMember("metadata");
  auto spec = object.FindMember("spec");
  if (metadata == object.MemberEnd() || !metadata->value.IsObject() || spec == object.MemberEnd() ||
      !spec->value.IsObject())
    throw std::invalid_argument("ResourceSlice without metadata or spec");
  const auto& meta = metadata->value;
  ResourceSlice slice;
  slice.name = StringField(meta, "name");
  if (slice.name.empty()) throw std::invalid_argument("ResourceSlice without metadata.name");
  slice.uid = StringField(meta, "uid");
  slice.resource_version = StringField(meta, "resourceVersion");
  if (auto labels = meta.FindMember("labels"); labels != meta.MemberEnd() && labels->value.IsObject()) {
    for (const auto& label : labels->value.GetObject())
      if (label.value.IsString()) slice.labels.emplace(label.name.GetString(), label.value.GetString());
  }
  if (auto owners = meta.FindMember("ownerReferences");
      owners != meta.MemberEnd() && owners->value.IsArray()) {
    for (const auto& owner : owners->value.GetArray()) {
      if (!owner.IsObject()) {  // not an owner reference we wrote: overwrite the slice
        slice.has_foreign_content = true;
        continue;
      }
      OwnerReference ref{StringField(owner, "apiVersion"), StringField(owner, "kind"),
                         StringField(owner, "name"), StringField(owner, "uid"), false};
      if (auto c = owner.FindMember("controller"); c != owner.MemberEnd() && c->value.IsBool())
        ref.controller = c->value.GetBool();
      slice.owner_references.push_back(std::move(ref));
    }
  }

  // The driver first: bare attribute keys of the devices are qualified with it.
  slice.driver = StringField(spec->value, "driver");
  const std::string key_domain = slice.driver.empty() ? std::string(kDefaultDriverName) : slice.driver;
  for (const auto& member : spec->value.GetObject()) {
    std::string_view key(member.name.GetString(), member.name.GetStringLength());
    const auto& v = member.value;
    if (key == "driver") {
      continue;
    } else if (key == "nodeName") {
      slice.node_name = StringField(spec->value, "nodeName");
    } else if (key == "pool") {
      slice.pool_name = StringField(v, "name");
      slice.pool_generation = IntField(v, "generation");
      slice.resource_slice_count = IntField(v, "resourceSliceCount");
    } else if (key == "devices") {
      if (!v.IsArray()) {
        slice.has_foreign_content |= !v.IsNull();
        continue;
      }
      for (const auto& device : v.GetArray())
        slice.devices.push_back(ParseDevice(device, key_domain, slice.has_foreign_content));
    } else if (!IsEmptyContainer(v)) {
      slice.has_foreign_content = true;
    }
  }
  return slice;
}

bool SemanticallyEqual(const ResourceSlice& desired, const ResourceSlice& stored) {
  if (stored.has_foreign_content) return false;
  if (desired.driver != stored.driver || desired.node_name != stored.node_name ||
      desired.pool_name != stored.pool_name || desired.pool_generation != stored.pool_generation ||
      desired.resource_slice_count != stored.resource_slice_count ||
      desired.devices != stored.devices)
    return false;
  for (const auto& [key, value] : desired.labels) {
    auto it = stored.labels.find(key);
    if (it == stored.labels.end() || it->second != value) return false;
  }
  for (const auto& owner : desired.owner_references) {
    if (std::find(stored.owner_references.begin(), stored.owner_references.end(), owner) ==
        stored.owner_references.end())
      return false;
  }
  return true;
}

}  // namespace dranet::kube
