// core/simulate/inputs.cpp — ResourceSlices, DeviceClasses and claim
// templates from YAML/JSON documents (yaml-cpp), and our inventory as slices.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>

#include "simulate/simulate.h"

namespace dranet::simulate {
namespace {

// n[path...] without creating or throwing: an undefined Node when absent.
YAML::Node At(const YAML::Node& n, std::initializer_list<const char*> path) {
  YAML::Node cur = n;
  for (const char* key : path) {
    const YAML::Node& view = cur;
    if (!view || !view.IsMap() || !view[key]) return YAML::Node(YAML::NodeType::Undefined);
    cur.reset(view[key]);
  }
  return cur;
}

std::vector<YAML::Node> LoadDocuments(std::string_view text, std::string_view what) {
  try {
    return YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    throw InputError((what.empty() ? std::string() : std::string(what) + ": ") + "invalid YAML/JSON at line " +
                     std::to_string(e.mark.line + 1) + ", column " + std::to_string(e.mark.column + 1) + ": " +
                     e.msg);
  }
}

// What ForEachObject saw besides the objects it visited.
struct WalkStats {
  int documents = 0;    // non-empty YAML documents
  int matched = 0;      // objects of the wanted kinds (List items included)
  int empty_lists = 0;  // List objects without items
  std::vector<std::string> others;  // the skipped objects, "DeviceClass gpu.nvidia.com"
};

std::string NameOf(const YAML::Node& obj) {
  std::string name = At(obj, {"metadata", "name"}).as<std::string>("");
  if (name.empty()) name = At(obj, {"metadata", "generateName"}).as<std::string>("");
  return name;
}

// Calls `visit` for every object of one of `kinds`, unwrapping lists: a
// `kind: List` (what kubectl prints; items carry their own kind), a typed
// `<Kind>List` (an API LIST response; items may omit kind and apiVersion)
// and a document that is an array of objects.
WalkStats ForEachObject(std::string_view text, std::string_view what, const std::vector<std::string>& kinds,
                        const std::function<void(const YAML::Node&, const std::string& label)>& visit) {
  const std::string prefix = what.empty() ? std::string() : std::string(what) + ": ";
  WalkStats stats;
  std::function<void(const YAML::Node&, const std::string&, const std::string&)> walk =
      [&](const YAML::Node& doc, const std::string& implied_kind, const std::string& where) {
        if (!doc || doc.IsNull()) return;
        if (!doc.IsMap()) throw InputError(prefix + where + " is not an object");
        std::string kind = doc["kind"] && doc["kind"].IsScalar() ? doc["kind"].as<std::string>() : "";
        if (kind.empty()) kind = implied_kind;
        const bool is_list = kind.size() >= 4 && kind.compare(kind.size() - 4, 4, "List") == 0;
        if (is_list) {
          const YAML::Node items = doc["items"];
          if (items && !items.IsNull() && !items.IsSequence())
            throw InputError(prefix + where + ": items is not a list");
          if (!items || items.size() == 0) {
            ++stats.empty_lists;
            return;
          }
          const std::string item_kind = kind.substr(0, kind.size() - 4);
          for (std::size_t i = 0; i < items.size(); ++i)
            walk(items[i], item_kind, where + " items[" + std::to_string(i) + "]");
          return;
        }
        std::string name = NameOf(doc);
        if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
          stats.others.push_back(kind.empty() ? "an object without kind (" + where + ")"
                                              : kind + (name.empty() ? "" : " " + name));
          return;
        }
        ++stats.matched;
        std::string label = kind + " " + (name.empty() ? "(" + where + ")" : name);
        try {
          visit(doc, label);
        } catch (const YAML::Exception& e) {
          throw InputError(label + ": " + e.msg);
        }
      };
  std::vector<YAML::Node> docs = LoadDocuments(text, what);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const YAML::Node& doc = docs[i];
    if (!doc || doc.IsNull()) continue;
    ++stats.documents;
    const std::string where = "document " + std::to_string(i + 1);
    if (!doc.IsSequence()) {
      walk(doc, "", where);
      continue;
    }
    // A bare array of objects (`jq .items`).
    for (std::size_t j = 0; j < doc.size(); ++j) walk(doc[j], "", where + " [" + std::to_string(j) + "]");
  }
  return stats;
}

std::string Str(const YAML::Node& n, const std::string& label, const std::string& field) {
  if (!n) return "";
  if (!n.IsScalar()) throw InputError(label + ": " + field + " must be a string");
  return n.as<std::string>();
}

std::string Qualify(const std::string& key, const std::string& driver) {
  return key.find('/') == std::string::npos ? driver + "/" + key : key;
}

// A Quantity's value ("800", "1500m", "10Gi").
long double QuantityValue(const YAML::Node& node, const std::string& where) {
  const std::string text = node && node.IsScalar() ? node.as<std::string>() : "";
  const auto value = cel::QuantityValue(text);
  if (!value) throw InputError(where + ": \"" + text + "\" is not a quantity");
  return *value;
}

CapacityPolicy ParsePolicy(const YAML::Node& policy, const std::string& where) {
  CapacityPolicy p;
  if (policy["default"]) p.default_value = QuantityValue(policy["default"], where + ".default");
  if (const auto range = policy["validRange"]; range && range.IsMap()) {
    p.min = QuantityValue(range["min"], where + ".validRange.min");
    if (range["max"]) p.max = QuantityValue(range["max"], where + ".validRange.max");
    if (range["step"]) p.step = QuantityValue(range["step"], where + ".validRange.step");
    if (p.step && *p.step <= 0) throw InputError(where + ".validRange.step: must be positive");
  }
  if (const auto values = policy["validValues"]; values && values.IsSequence()) {
    for (const auto& v : values) p.valid_values.push_back(QuantityValue(v, where + ".validValues"));
    std::sort(p.valid_values.begin(), p.valid_values.end());
  }
  return p;
}

void ParseDevice(const YAML::Node& node, const std::string& driver, const std::string& pool, const std::string& label,
                 std::vector<SliceDevice>& out) {
  SliceDevice d;
  d.driver = driver;
  d.pool = pool;
  d.name = Str(node["name"], label, "devices[].name");
  if (d.name.empty()) throw InputError(label + ": a device has no name");
  // v1beta1 wraps the fields in "basic".
  YAML::Node body = node["basic"] ? node["basic"] : node;
  if (const auto attrs = body["attributes"]; attrs && attrs.IsMap()) {
    for (const auto& kv : attrs) {
      std::string key = Qualify(kv.first.as<std::string>(), driver);
      const YAML::Node& v = kv.second;
      std::string where = label + ": device " + d.name + " attribute " + key;
      if (!v.IsMap()) throw InputError(where + " must be an object like {string: ...}");
      if (v["string"]) d.attributes[key] = v["string"].as<std::string>();
      else if (v["int"]) d.attributes[key] = v["int"].as<int64_t>();
      else if (v["bool"]) d.attributes[key] = v["bool"].as<bool>();
      else if (v["version"]) d.attributes[key] = inventory::SemVer{v["version"].as<std::string>()};
      else if (v["ints"]) d.attributes[key] = v["ints"].as<inventory::IntList>();
      // The other list kinds (strings, bools, versions; alpha) are not modelled.
    }
  }
  if (const auto caps = body["capacity"]; caps && caps.IsMap()) {
    for (const auto& kv : caps) {
      std::string key = Qualify(kv.first.as<std::string>(), driver);
      const YAML::Node& v = kv.second;
      d.capacity[key] = v.IsMap() ? At(v, {"value"}).as<std::string>("") : v.as<std::string>("");
      if (v.IsMap() && v["requestPolicy"] && v["requestPolicy"].IsMap())
        d.request_policies[key] =
            ParsePolicy(v["requestPolicy"], label + ": device " + d.name + " capacity " + key + " requestPolicy");
    }
  }
  if (const auto multi = body["allowMultipleAllocations"]; multi && multi.IsScalar())
    d.allow_multiple_allocations = multi.as<bool>(false);
  out.push_back(std::move(d));
}

std::vector<std::string> Selectors(const YAML::Node& list, const std::string& label) {
  std::vector<std::string> out;
  if (!list) return out;
  if (!list.IsSequence()) throw InputError(label + ": selectors must be a list");
  for (const auto& s : list) {
    YAML::Node expr = At(s, {"cel", "expression"});
    if (!expr) throw InputError(label + ": a selector has no cel.expression");
    out.push_back(expr.as<std::string>());
  }
  return out;
}

DeviceChoice ParseChoice(const YAML::Node& n, const std::string& label) {
  DeviceChoice c;
  c.device_class = Str(n["deviceClassName"], label, "deviceClassName");
  if (c.device_class.empty()) throw InputError(label + ": deviceClassName is required");
  c.selectors = Selectors(n["selectors"], label);
  std::string mode = Str(n["allocationMode"], label, "allocationMode");
  if (mode == "All") {
    c.mode = AllocationMode::kAll;
  } else if (mode.empty() || mode == "ExactCount") {
    c.mode = AllocationMode::kExactCount;
  } else {
    throw InputError(label + ": allocationMode must be ExactCount or All, not " + mode);
  }
  if (n["count"]) {
    c.count = n["count"].as<int64_t>();
    if (c.count < 1) throw InputError(label + ": count must be at least 1");
  }
  if (const auto requests = At(n, {"capacity", "requests"}); requests && requests.IsMap()) {
    for (const auto& kv : requests) {
      const std::string key = kv.first.as<std::string>();
      QuantityValue(kv.second, label + ": capacity.requests." + key);  // must be a quantity
      c.capacity_requests[key] = kv.second.as<std::string>();
    }
  }
  return c;
}

ClaimTemplate ParseClaimSpec(const YAML::Node& devices, std::string name, std::string ns, const std::string& label) {
  ClaimTemplate t;
  t.name = std::move(name);
  t.namespace_name = std::move(ns);
  if (!devices || !devices.IsMap()) throw InputError(label + ": no devices section");
  int index = 0;
  for (const auto& r : At(devices, {"requests"})) {
    std::string where = label + ": requests[" + std::to_string(index++) + "]";
    Request req;
    req.name = Str(r["name"], where, "name");
    if (req.name.empty()) throw InputError(where + ": name is required");
    where = label + ": request " + req.name;
    if (r["exactly"]) {
      req.choices.push_back(ParseChoice(r["exactly"], where));
    } else if (r["firstAvailable"]) {
      req.first_available = true;
      for (const auto& sub : At(r, {"firstAvailable"})) {
        DeviceChoice c = ParseChoice(sub, where);
        c.name = Str(sub["name"], where, "firstAvailable[].name");
        if (c.name.empty()) throw InputError(where + ": every firstAvailable entry needs a name");
        req.choices.push_back(std::move(c));
      }
      if (req.choices.empty()) throw InputError(where + ": firstAvailable is empty");
    } else if (r["deviceClassName"]) {  // v1beta1 shape
      req.choices.push_back(ParseChoice(r, where));
    } else {
      throw InputError(where + ": needs exactly or firstAvailable");
    }
    t.requests.push_back(std::move(req));
  }
  if (t.requests.empty()) throw InputError(label + ": no requests");
  for (const auto& c : At(devices, {"constraints"})) {
    Constraint con;
    for (const auto& r : At(c, {"requests"})) con.requests.push_back(r.as<std::string>());
    con.match_attribute = Str(c["matchAttribute"], label, "constraints[].matchAttribute");
    con.distinct_attribute = Str(c["distinctAttribute"], label, "constraints[].distinctAttribute");
    t.constraints.push_back(std::move(con));
  }
  return t;
}

}  // namespace

std::vector<SliceDevice> FromInventory(const std::vector<inventory::Device>& devices, std::string_view node_name) {
  std::vector<SliceDevice> out;
  out.reserve(devices.size());
  for (const auto& d : devices) {
    SliceDevice s;
    s.driver = "dra.net";
    s.pool = std::string(node_name);
    s.name = d.name;
    s.attributes = d.attributes;
    s.allow_multiple_allocations = d.allow_multiple_allocations;
    for (const auto& [key, capacity] : d.capacity) {
      s.capacity[key] = std::to_string(capacity.value);
      if (!capacity.request_policy) continue;
      const auto& rp = *capacity.request_policy;
      CapacityPolicy policy;
      policy.default_value = static_cast<long double>(rp.default_value);
      policy.min = static_cast<long double>(rp.min);
      policy.max = static_cast<long double>(rp.max);
      policy.step = static_cast<long double>(rp.step);
      s.request_policies[key] = policy;
    }
    s.ours = &d;
    out.push_back(std::move(s));
  }
  return out;
}

SliceInput ReadResourceSlices(std::string_view text, std::string_view source) {
  SliceInput in;
  WalkStats stats;
  try {
    stats = ForEachObject(text, "", {"ResourceSlice"}, [&](const YAML::Node& doc, const std::string& label) {
      const YAML::Node spec = doc["spec"];
      if (!spec || !spec.IsMap()) throw InputError(label + ": no spec");
      std::string driver = Str(spec["driver"], label, "spec.driver");
      if (driver.empty()) throw InputError(label + ": spec.driver is required");
      std::string pool = Str(At(spec, {"pool", "name"}), label, "spec.pool.name");
      std::string node = Str(spec["nodeName"], label, "spec.nodeName");
      const YAML::Node devices = spec["devices"];
      if (devices && !devices.IsNull() && !devices.IsSequence())
        throw InputError(label + ": spec.devices is not a list");
      std::size_t first = in.devices.size();
      for (const auto& dev : devices) ParseDevice(dev, driver, pool, label, in.devices);
      for (std::size_t i = first; i < in.devices.size(); ++i) in.devices[i].node_name = node;
    });
  } catch (const InputError& e) {
    throw InputError(source.empty() ? std::string(e.what()) : std::string(source) + ": " + e.what());
  }
  in.documents = stats.documents;
  in.slices = stats.matched;
  in.empty_lists = stats.empty_lists;
  in.others = std::move(stats.others);
  std::sort(in.devices.begin(), in.devices.end(), [](const SliceDevice& a, const SliceDevice& b) {
    return std::tie(a.driver, a.pool, a.name) < std::tie(b.driver, b.pool, b.name);
  });
  return in;
}

std::vector<SliceDevice> ParseResourceSlices(std::string_view yaml) {
  return ReadResourceSlices(yaml).devices;
}

std::vector<DeviceClass> ParseDeviceClasses(std::string_view yaml) {
  std::vector<DeviceClass> out;
  ForEachObject(yaml, "DeviceClasses", {"DeviceClass"}, [&](const YAML::Node& doc, const std::string& label) {
    DeviceClass c;
    c.name = Str(At(doc, {"metadata", "name"}), label, "metadata.name");
    if (c.name.empty()) throw InputError(label + ": metadata.name is required");
    c.selectors = Selectors(At(doc, {"spec", "selectors"}), label);
    out.push_back(std::move(c));
  });
  return out;
}

std::vector<ClaimTemplate> ParseClaimTemplates(std::string_view yaml) {
  std::vector<ClaimTemplate> out;
  ForEachObject(yaml, "claim templates", {"ResourceClaimTemplate", "ResourceClaim"},
                [&](const YAML::Node& doc, const std::string& label) {
                  std::string name = Str(At(doc, {"metadata", "name"}), label, "metadata.name");
                  std::string ns = Str(At(doc, {"metadata", "namespace"}), label, "metadata.namespace");
                  bool is_template = doc["kind"].as<std::string>() == "ResourceClaimTemplate";
                  YAML::Node devices = is_template ? At(doc, {"spec", "spec", "devices"})
                                                   : At(doc, {"spec", "devices"});
                  out.push_back(ParseClaimSpec(devices, name, ns, label));
                });
  return out;
}

}  // namespace dranet::simulate
