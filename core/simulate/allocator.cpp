// core/simulate/allocator.cpp — selector verdicts per device and a small
// backtracking allocator for one claim on a node (empty, or holding what
// earlier claims took: one_node).
//
// Deterministic: devices are tried in (name, driver, pool) order, requests
// in claim order, firstAvailable entries in their order, so the same input
// always gives the same allocation (the scheduler's own choice may differ
// among equally valid ones).
//
// As kube-scheduler's allocator (k8s.io/dynamic-resource-allocation,
// structured): a selector that fails with a CEL runtime error on a device
// the search reaches fails the whole claim, not just that device; an
// allocationMode All request reaches every device before the search; a claim
// takes at most kMaxDevicesPerClaim devices. tests/cluster/oracle_test.sh
// compares the two on every node snapshot.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "inventory/inventory.h"
#include "simulate/simulate.h"

namespace dranet::simulate {
namespace {

struct CompiledSelector {
  std::string where;  // "DeviceClass dranet.net selector 1" / "selector 1"
  cel::Program program;
};

// One request choice with its candidates (indices into the sorted devices).
struct Choice {
  std::string label;  // "nic" or "nic/sub"
  std::string request;
  const DeviceChoice* spec = nullptr;
  std::vector<std::size_t> candidates;
  std::vector<bool> selectable;            // per device index: a candidate
  std::map<std::size_t, std::string> errors;  // per device index: its CEL runtime error
  bool usable = true;  // false: class or selectors failed to compile
  std::string unusable;  // why not usable
};

std::string LookupKey(const SliceDevice& d) { return d.driver + "/" + d.pool + "/" + d.name; }

// Capacity amounts by qualified key.
using Amounts = std::map<std::string, long double>;

// What the claims allocated so far hold on the node (one_node): devices held
// alone, and what shares consumed of devices allowing multiple allocations.
struct NodeState {
  std::set<std::size_t> held;            // device indices
  std::map<std::size_t, Amounts> consumed;
  bool empty() const { return held.empty() && consumed.empty(); }
};

std::string QualifiedKey(const std::string& key, const std::string& driver) {
  return key.find('/') == std::string::npos ? driver + "/" + key : key;
}

// What a request consumes of one capacity: what it asks, rounded up by the
// request policy (to the range's min and step, or the next valid value); or
// the policy's default; or else the whole value (the scheduler's
// calculateConsumedCapacity).
long double ConsumedOf(const std::optional<long double>& asked, long double value, const CapacityPolicy* policy) {
  if (!asked) return policy && policy->default_value ? *policy->default_value : value;
  if (!policy) return *asked;
  if (policy->min) {
    if (*asked < *policy->min) return *policy->min;
    if (!policy->step) return *asked;
    return *policy->min + std::ceil((*asked - *policy->min) / *policy->step) * *policy->step;
  }
  for (long double v : policy->valid_values)
    if (*asked <= v) return v;
  return *asked;
}

// Whether an amount breaks the request policy (above the range's max, off
// its steps, not a valid value); the default never does.
bool BreaksPolicy(long double amount, const CapacityPolicy* policy) {
  if (!policy) return false;
  if (policy->default_value && amount == *policy->default_value) return false;
  if (policy->min) {
    if (policy->max && amount > *policy->max) return true;
    return policy->step && std::fmod(amount - *policy->min, *policy->step) != 0;
  }
  if (!policy->valid_values.empty())
    return std::find(policy->valid_values.begin(), policy->valid_values.end(), amount) == policy->valid_values.end();
  return false;
}

// An amount as a Quantity string: whole numbers as they are, else milli.
std::string FormatAmount(long double amount) {
  if (amount == std::floor(amount)) return std::to_string(static_cast<long long>(amount));
  return std::to_string(static_cast<long long>(std::llround(amount * 1000))) + "m";
}

std::string DescribePolicy(const CapacityPolicy& policy) {
  if (policy.min)
    return "from " + FormatAmount(*policy.min) + (policy.max ? " to " + FormatAmount(*policy.max) : "") +
           (policy.step ? " in steps of " + FormatAmount(*policy.step) : "");
  std::string values;
  for (long double v : policy.valid_values) values += (values.empty() ? "" : ", ") + FormatAmount(v);
  return "one of " + values;
}

const inventory::AttributeValue* Attr(const SliceDevice& d, const std::string& key) {
  auto it = d.attributes.find(key);
  return it == d.attributes.end() ? nullptr : &it->second;
}

std::string AttrText(const inventory::AttributeValue& v) {
  const std::string text = inventory::FormatAttributeValue(v);
  return std::holds_alternative<std::string>(v) ? "\"" + text + "\"" : text;
}

// An int or int list as a sorted set; nullopt for the other kinds.
std::optional<inventory::IntList> IntegerSet(const inventory::AttributeValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return inventory::IntList{*i};
  const auto* list = std::get_if<inventory::IntList>(&v);
  if (!list) return std::nullopt;
  inventory::IntList set = *list;
  std::sort(set.begin(), set.end());
  set.erase(std::unique(set.begin(), set.end()), set.end());
  return set;
}

inventory::IntList Intersection(const inventory::IntList& a, const inventory::IntList& b) {
  inventory::IntList both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return both;
}

bool ConstraintCovers(const Constraint& c, const Choice& choice) {
  if (c.requests.empty()) return true;
  return std::any_of(c.requests.begin(), c.requests.end(),
                     [&](const std::string& r) { return r == choice.request || r == choice.label; });
}

std::string DescribeConstraint(const Constraint& c) {
  std::string out = c.match_attribute.empty() ? "distinctAttribute " + c.distinct_attribute
                                              : "matchAttribute " + c.match_attribute;
  out += " across [";
  for (std::size_t i = 0; i < c.requests.size(); ++i) out += (i ? ", " : "") + c.requests[i];
  return out + (c.requests.empty() ? "all requests]" : "]");
}

class Allocator {
 public:
  Allocator(const ClaimTemplate& t, const std::vector<const SliceDevice*>& devices,
            const std::vector<DeviceClass>& classes, const SimulateOptions& options, const NodeState& node)
      : template_(t), devices_(devices), classes_(classes), options_(options), node_(&node) {}

  // What the allocation takes from the node: devices held alone, and what
  // the shares consumed.
  void CommitTo(NodeState& node) const {
    for (std::size_t k = 0; k < chosen_.size(); ++k) {
      const std::size_t index = chosen_[k].second;
      if (!devices_[index]->allow_multiple_allocations) {
        node.held.insert(index);
        continue;
      }
      for (const auto& [key, amount] : chosen_consumed_[k]) node.consumed[index][key] += amount;
    }
  }

  TemplateResult Run() {
    result_.template_name = template_.name;
    for (const auto& req : template_.requests) {
      std::vector<Choice> choices;
      for (const auto& spec : req.choices) choices.push_back(Evaluate(req, spec));
      requests_.push_back(std::move(choices));
    }
    bool ok = CheckBeforeSearch() && Solve(0, constraints_all());
    if (ok) {
      result_.allocated = true;
      for (std::size_t k = 0; k < chosen_.size(); ++k) {
        const auto& [label, index] = chosen_[k];
        const SliceDevice& d = *devices_[index];
        AllocatedDevice allocated{label, d.driver, d.pool, d.name, &d, false, {}};
        allocated.share = d.allow_multiple_allocations;
        if (allocated.share)
          for (const auto& [key, amount] : chosen_consumed_[k]) allocated.consumed_capacity[key] = FormatAmount(amount);
        result_.allocation.push_back(std::move(allocated));
      }
      result_.pod = PodViewOf(result_.allocation);
      return result_;
    }
    ExplainFailure();
    return result_;
  }

 private:
  std::vector<const Constraint*> constraints_all() const {
    std::vector<const Constraint*> all;
    for (const auto& c : template_.constraints) all.push_back(&c);
    return all;
  }

  const DeviceClass* FindClass(const std::string& name) const {
    for (const auto& c : classes_) {
      if (c.name == name) return &c;
    }
    if (options_.use_well_known_classes) {
      for (const auto& c : WellKnownDeviceClasses()) {
        if (c.name == name) return &c;
      }
    }
    return nullptr;
  }

  // Compiles the class and request selectors and records, per device,
  // whether it is selected and which clauses reject it.
  Choice Evaluate(const Request& req, const DeviceChoice& spec) {
    Choice choice;
    choice.request = req.name;
    choice.label = spec.name.empty() ? req.name : req.name + "/" + spec.name;
    choice.spec = &spec;
    ChoiceReport report;
    report.request = choice.label;
    std::vector<CompiledSelector> selectors;
    auto compile = [&](const std::string& where, const std::string& expr) {
      try {
        selectors.push_back(CompiledSelector{where, cel::Compile(expr)});
      } catch (const cel::CompileError& e) {
        report.problems.push_back(where + " does not compile: " + e.what());
        choice.unusable = report.problems.back();
        choice.usable = false;
      }
    };
    if (const DeviceClass* cls = FindClass(spec.device_class)) {
      for (std::size_t i = 0; i < cls->selectors.size(); ++i) {
        compile("DeviceClass " + cls->name + " selector " + std::to_string(i + 1), cls->selectors[i]);
      }
    } else {
      report.problems.push_back("DeviceClass " + spec.device_class + " not found");
      choice.unusable = report.problems.back();
      choice.usable = false;
    }
    for (std::size_t i = 0; i < spec.selectors.size(); ++i) {
      compile("selector " + std::to_string(i + 1), spec.selectors[i]);
    }
    if (choice.usable) {
      choice.selectable.assign(devices_.size(), false);
      for (std::size_t index = 0; index < devices_.size(); ++index) {
        const SliceDevice& d = *devices_[index];
        cel::DeviceView view{d.driver, &d.attributes, &d.capacity, d.allow_multiple_allocations};
        DeviceVerdict verdict{d.driver, d.name, true, {}};
        for (const auto& sel : selectors) {
          const cel::EvalResult whole = sel.program.Evaluate(view);
          if (whole.matched) continue;
          if (whole.error)
            choice.errors[index] = sel.where + " on device " + LookupKey(d) +
                                   ": CEL runtime error (the scheduler fails the claim on it; guard an attribute "
                                   "some devices lack with `\"name\" in device.attributes[\"domain\"]`): " +
                                   whole.error->ToString();
          verdict.selected = false;
          for (const auto& clause : sel.program.Conjuncts()) {
            cel::EvalResult r = clause.program.Evaluate(view);
            if (r.matched) continue;
            verdict.failures.push_back(
                ClauseFailure{sel.where, clause.text, r.error ? r.error->ToString() : "false"});
          }
          // Class selectors are checked first; stop at the first that rejects.
          break;
        }
        if (verdict.selected) {
          if (auto why = CapacityProblem(spec, d); !why.empty()) {
            verdict.selected = false;
            verdict.failures.push_back(ClauseFailure{"capacity.requests", CapacityRequestsText(spec), why});
          }
        }
        if (verdict.selected) {
          choice.candidates.push_back(index);
          choice.selectable[index] = true;
        }
        report.devices.push_back(std::move(verdict));
      }
      report.wanted = spec.mode == AllocationMode::kAll ? static_cast<int64_t>(choice.candidates.size()) : spec.count;
      if (spec.mode == AllocationMode::kAll && choice.candidates.empty()) {
        report.problems.push_back("allocationMode All: no device matches");
      } else if (static_cast<int64_t>(choice.candidates.size()) < report.wanted) {
        report.problems.push_back("needs " + std::to_string(report.wanted) + " device(s), " +
                                  std::to_string(choice.candidates.size()) + " match");
      }
    }
    result_.requests.push_back(std::move(report));
    return choice;
  }

  // What `spec` consumes of each capacity of `d`; nullopt when it asks for a
  // capacity `d` does not have.
  static std::optional<Amounts> Consumption(const DeviceChoice& spec, const SliceDevice& d) {
    std::map<std::string, long double> asked;
    for (const auto& [key, text] : spec.capacity_requests) {
      const std::string qualified = QualifiedKey(key, d.driver);
      if (!d.capacity.count(qualified)) return std::nullopt;
      if (const auto q = cel::QuantityValue(text)) asked[qualified] = *q;
    }
    Amounts out;
    for (const auto& [key, text] : d.capacity) {
      const auto value = cel::QuantityValue(text);
      if (!value) continue;
      const auto policy = d.request_policies.find(key);
      const auto a = asked.find(key);
      out[key] = ConsumedOf(a == asked.end() ? std::nullopt : std::optional<long double>(a->second), *value,
                            policy == d.request_policies.end() ? nullptr : &policy->second);
    }
    return out;
  }

  // Why `spec` cannot have `d` for its capacity even on an empty node; "" when it can.
  static std::string CapacityProblem(const DeviceChoice& spec, const SliceDevice& d) {
    const auto consumption = Consumption(spec, d);
    if (!consumption) return "the device has no such capacity";
    for (const auto& [key, amount] : *consumption) {
      const auto policy = d.request_policies.find(key);
      if (BreaksPolicy(amount, policy == d.request_policies.end() ? nullptr : &policy->second))
        return key + " " + FormatAmount(amount) + " is outside the device's request policy (" +
               DescribePolicy(policy->second) + ")";
      if (const auto value = cel::QuantityValue(d.capacity.at(key)); value && amount > *value)
        return key + " " + FormatAmount(amount) + " is more than the device's " + d.capacity.at(key);
    }
    return "";
  }

  static std::string CapacityRequestsText(const DeviceChoice& spec) {
    std::string out;
    for (const auto& [key, text] : spec.capacity_requests) out += (out.empty() ? "" : ", ") + key + ": " + text;
    return out.empty() ? "(none: the policies' defaults)" : out;
  }

  // Whether device `index` can still be taken: a device held alone once,
  // one allowing multiple allocations while its capacity lasts.
  bool Available(std::size_t index) const {
    if (devices_[index]->allow_multiple_allocations) return true;
    return !used_.count(index) && !node_->held.count(index);
  }

  // Whether what `choice` consumes of device `index` fits beside what the
  // node's earlier claims and this claim's other requests consumed.
  bool CapacityLeft(const Choice& choice, std::size_t index) const {
    const SliceDevice& d = *devices_[index];
    if (!d.allow_multiple_allocations) return true;  // checked on the empty node already
    const auto consumption = Consumption(*choice.spec, d);
    if (!consumption) return false;
    const auto on_node = node_->consumed.find(index);
    const auto in_claim = claim_consumed_.find(index);
    for (const auto& [key, amount] : *consumption) {
      long double total = amount;
      if (on_node != node_->consumed.end())
        if (auto it = on_node->second.find(key); it != on_node->second.end()) total += it->second;
      if (in_claim != claim_consumed_.end())
        if (auto it = in_claim->second.find(key); it != in_claim->second.end()) total += it->second;
      if (const auto value = cel::QuantityValue(d.capacity.at(key)); value && total > *value) return false;
    }
    return true;
  }

  // Would adding device `index` for `choice` keep every constraint true?
  bool Fits(const Choice& choice, std::size_t index, const std::vector<const Constraint*>& constraints) const {
    const SliceDevice& d = *devices_[index];
    for (const Constraint* c : constraints) {
      if (!ConstraintCovers(*c, choice)) continue;
      const std::string& key = c->match_attribute.empty() ? c->distinct_attribute : c->match_attribute;
      const auto* mine = Attr(d, key);
      if (!mine) return false;  // a constrained device must carry the attribute
      std::vector<const inventory::AttributeValue*> values{mine};
      for (std::size_t k = 0; k < chosen_.size(); ++k) {
        if (!ConstraintCovers(*c, *chosen_choice_[k])) continue;
        const auto* other = Attr(*devices_[chosen_[k].second], key);
        if (!other) return false;
        if (c->match_attribute.empty() && !AttributeValuesDistinct(*other, *mine)) return false;
        values.push_back(other);
      }
      if (!c->match_attribute.empty() && !AttributeValuesMatch(values)) return false;
    }
    return true;
  }

  bool Step() {
    if (++steps_ > options_.max_search_steps) {
      aborted_ = true;
      return false;
    }
    return true;
  }

  // What the scheduler checks before it searches, in claim order: every
  // request and firstAvailable entry has its class and compiles; an
  // allocationMode All entry, evaluated on every device, hits no CEL runtime
  // error; the fewest devices each request can take add up to at most
  // kMaxDevicesPerClaim. False (with the problem) fails the claim.
  bool CheckBeforeSearch() {
    int64_t claim_devices = 0;
    for (std::size_t r = 0; r < requests_.size(); ++r) {
      int64_t fewest = std::numeric_limits<int64_t>::max();
      for (const Choice& choice : requests_[r]) {
        if (!choice.usable) {
          failure_ = "request " + choice.label + ": " + choice.unusable;
          return false;
        }
        if (choice.spec->mode == AllocationMode::kAll && !choice.errors.empty()) {
          failure_ = "request " + choice.label + ": " + choice.errors.begin()->second;
          return false;
        }
        fewest = std::min<int64_t>(fewest, DevicesOf(choice));
      }
      if (fewest > kMaxDevicesPerClaim - claim_devices) {
        failure_ = "request " + template_.requests[r].name + ": adding " + std::to_string(fewest) +
                   " devices exceeds the claim limit of " + std::to_string(kMaxDevicesPerClaim) + ", with " +
                   std::to_string(claim_devices) + " already accounted for";
        return false;
      }
      claim_devices += fewest;
    }
    return true;
  }

  static int64_t DevicesOf(const Choice& choice) {
    return choice.spec->mode == AllocationMode::kAll ? static_cast<int64_t>(choice.candidates.size())
                                                     : choice.spec->count;
  }

  bool Solve(std::size_t request, const std::vector<const Constraint*>& constraints) {
    if (request == requests_.size()) return true;
    for (const Choice& choice : requests_[request]) {
      if (!choice.usable || aborted_ || failure_) continue;
      // The claim's limit, counted with what earlier requests took: the next
      // firstAvailable entry may ask for fewer.
      if (DevicesOf(choice) > kMaxDevicesPerClaim - static_cast<int64_t>(chosen_.size())) continue;
      if (choice.spec->mode == AllocationMode::kAll) {
        if (choice.candidates.empty()) continue;
        std::size_t mark = chosen_.size();
        bool ok = true;
        for (std::size_t index : choice.candidates) {
          if (!Step() || !Available(index) || !CapacityLeft(choice, index) || !Fits(choice, index, constraints)) {
            ok = false;
            break;
          }
          Push(choice, index);
        }
        if (ok && Solve(request + 1, constraints)) return true;
        PopTo(mark);
      } else if (Pick(request, choice, 0, choice.spec->count, constraints)) {
        return true;
      }
    }
    return false;
  }

  // Chooses `remaining` more devices from device `from` on (name order). As
  // the scheduler, it walks the devices themselves: one taken already is
  // passed over, and one whose selectors fail with a CEL runtime error stops
  // the whole claim when the walk reaches it.
  bool Pick(std::size_t request, const Choice& choice, std::size_t from, int64_t remaining,
            const std::vector<const Constraint*>& constraints) {
    if (remaining == 0) return Solve(request + 1, constraints);
    for (std::size_t index = from; index < devices_.size(); ++index) {
      if (!Available(index)) continue;
      if (auto error = choice.errors.find(index); error != choice.errors.end()) {
        failure_ = "request " + choice.label + ": " + error->second;
        return false;
      }
      if (!choice.selectable[index]) continue;
      if (!Step()) return false;
      if (!CapacityLeft(choice, index) || !Fits(choice, index, constraints)) continue;
      Push(choice, index);
      if (Pick(request, choice, index + 1, remaining - 1, constraints)) return true;
      PopTo(chosen_.size() - 1);
      if (failure_) return false;
    }
    return false;
  }

  void Push(const Choice& choice, std::size_t index) {
    chosen_.emplace_back(choice.label, index);
    chosen_choice_.push_back(&choice);
    Amounts consumed;
    if (devices_[index]->allow_multiple_allocations) {
      consumed = Consumption(*choice.spec, *devices_[index]).value_or(Amounts{});
      for (const auto& [key, amount] : consumed) claim_consumed_[index][key] += amount;
    }
    chosen_consumed_.push_back(std::move(consumed));
    used_.insert(index);
  }
  void PopTo(std::size_t size) {
    while (chosen_.size() > size) {
      const std::size_t index = chosen_.back().second;
      for (const auto& [key, amount] : chosen_consumed_.back()) claim_consumed_[index][key] -= amount;
      if (std::none_of(chosen_.begin(), chosen_.end() - 1, [&](const auto& c) { return c.second == index; })) {
        used_.erase(index);
        claim_consumed_.erase(index);
      }
      chosen_.pop_back();
      chosen_choice_.pop_back();
      chosen_consumed_.pop_back();
    }
  }

  // Names what stands in the way: too few devices, or which constraint.
  void ExplainFailure() {
    if (failure_) {
      result_.problems.push_back(*failure_);
      return;
    }
    if (aborted_) {
      result_.problems.push_back("search stopped after " + std::to_string(options_.max_search_steps) + " steps");
      return;
    }
    for (std::size_t r = 0; r < requests_.size(); ++r) {
      bool any = std::any_of(requests_[r].begin(), requests_[r].end(), [](const Choice& c) {
        return c.usable && (c.spec->mode == AllocationMode::kAll
                                ? !c.candidates.empty()
                                : static_cast<int64_t>(c.candidates.size()) >= c.spec->count);
      });
      if (!any) {
        result_.problems.push_back("request " + template_.requests[r].name + ": not enough matching devices");
      }
    }
    if (!result_.problems.empty()) return;
    if (!node_->empty()) {
      // Would it fit on an empty node? Then the earlier claims took it.
      static const NodeState kEmptyNode;
      const NodeState* node = node_;
      node_ = &kEmptyNode;
      PopTo(0);
      steps_ = 0;
      const bool alone = Solve(0, constraints_all());
      failure_.reset();
      PopTo(0);
      node_ = node;
      if (alone) {
        result_.problems.push_back(
            "the matching devices are held by the claims allocated before it, or have too little capacity left");
        return;
      }
    }
    auto fresh = [&](const std::vector<const Constraint*>& cs) {
      PopTo(0);
      steps_ = 0;
      const bool solved = Solve(0, cs);
      failure_.reset();  // only the first search's failure speaks for the claim
      return solved;
    };
    if (!fresh({})) {
      result_.problems.push_back("the requests cannot all be satisfied at once (they compete for the same devices)");
    } else {
      for (const auto& c : template_.constraints) {
        if (!fresh({&c})) result_.problems.push_back("constraint cannot be met: " + DescribeConstraint(c) + Values(c));
      }
      if (result_.problems.size() == 0) result_.problems.push_back("the constraints cannot be met together");
    }
    PopTo(0);
  }

  // The constrained attribute's value on each candidate, for the message.
  std::string Values(const Constraint& c) const {
    const std::string& key = c.match_attribute.empty() ? c.distinct_attribute : c.match_attribute;
    std::string out;
    for (const auto& choices : requests_) {
      for (const auto& choice : choices) {
        if (!ConstraintCovers(c, choice)) continue;
        for (std::size_t index : choice.candidates) {
          const auto* v = Attr(*devices_[index], key);
          out += (out.empty() ? "" : ", ") + choice.label + ":" + devices_[index]->name + "=" +
                 (v ? AttrText(*v) : "(missing)");
        }
      }
    }
    return out.empty() ? "" : " (" + out + ")";
  }

  const ClaimTemplate& template_;
  const std::vector<const SliceDevice*>& devices_;
  const std::vector<DeviceClass>& classes_;
  const SimulateOptions& options_;
  const NodeState* node_;
  std::vector<std::vector<Choice>> requests_;
  std::vector<std::pair<std::string, std::size_t>> chosen_;
  std::vector<const Choice*> chosen_choice_;
  std::vector<Amounts> chosen_consumed_;  // per chosen device: what it consumed (shares only)
  std::map<std::size_t, Amounts> claim_consumed_;  // per device: what this claim's shares consumed
  std::set<std::size_t> used_;
  int64_t steps_ = 0;
  bool aborted_ = false;
  std::optional<std::string> failure_;  // what failed the whole claim, as the scheduler fails it
  TemplateResult result_;
};

}  // namespace

bool AttributeValuesMatch(const std::vector<const inventory::AttributeValue*>& values) {
  if (values.empty()) return true;
  std::optional<inventory::IntList> common = IntegerSet(*values[0]);
  for (const auto* value : values) {
    if (!common) {
      if (!(*value == *values[0])) return false;
      continue;
    }
    auto set = IntegerSet(*value);
    if (!set) return false;
    common = Intersection(*common, *set);
    if (common->empty()) return false;
  }
  return true;
}

bool AttributeValuesDistinct(const inventory::AttributeValue& a, const inventory::AttributeValue& b) {
  auto x = IntegerSet(a), y = IntegerSet(b);
  if (!x || !y) return !(a == b);
  return Intersection(*x, *y).empty();
}

const std::vector<DeviceClass>& WellKnownDeviceClasses() {
  static const std::vector<DeviceClass> kClasses{
      {"dranet.net", {R"(device.driver == "dra.net")"}},
      {"dra.net", {R"(device.driver == "dra.net")"}},
      // The chart's own classes (packaging/helm).
      {"dranet", {R"(device.driver == "dra.net")"}},
      {"dranet-rdma", {R"(device.driver == "dra.net" && device.attributes["dra.net"].rdma == true)"}},
      {"gpu.nvidia.com",
       {R"(device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu")"}},
      {"mig.nvidia.com",
       {R"(device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "mig")"}},
      {"gpu.amd.com", {R"(device.driver == "gpu.amd.com")"}},
  };
  return kClasses;
}

PodView PodViewOf(const std::vector<AllocatedDevice>& allocation) {
  PodView pod;
  for (const auto& a : allocation) {
    const inventory::Device* d = a.slice_device ? a.slice_device->ours : nullptr;
    if (!d) continue;
    if (!d->rdma_device.empty())
      for (const auto& dev : d->char_devices)
        if (inventory::PodReceives(dev)) pod.char_devices.push_back(dev);
    if (a.share) {
      // A share leaves the netdev on the host; an Ethernet one gives the pod a child of it.
      if (inventory::NetdevTakesChildren(*d)) pod.child_parents.push_back(d->if_name);
    } else if (!d->if_name.empty()) {
      pod.netdevs.push_back(d->if_name);
    }
    if (!d->rdma_device.empty()) pod.rdma_devices.push_back(d->rdma_device);
  }
  auto by_path = [](const inventory::CharDevice& x, const inventory::CharDevice& y) { return x.path < y.path; };
  std::sort(pod.char_devices.begin(), pod.char_devices.end(), by_path);
  pod.char_devices.erase(std::unique(pod.char_devices.begin(), pod.char_devices.end(),
                                     [](const auto& x, const auto& y) { return x.path == y.path; }),
                         pod.char_devices.end());
  std::sort(pod.netdevs.begin(), pod.netdevs.end());
  std::sort(pod.child_parents.begin(), pod.child_parents.end());
  std::sort(pod.rdma_devices.begin(), pod.rdma_devices.end());
  pod.rdma_devices.erase(std::unique(pod.rdma_devices.begin(), pod.rdma_devices.end()), pod.rdma_devices.end());
  if (!pod.rdma_devices.empty()) {
    // As the nvidia/amd plugins inject it: "=" makes NCCL match names exactly.
    std::string hca = "=";
    for (std::size_t i = 0; i < pod.rdma_devices.size(); ++i) hca += (i ? "," : "") + pod.rdma_devices[i];
    pod.env["NCCL_IB_HCA"] = hca;
  }
  return pod;
}

std::vector<TemplateResult> Simulate(const std::vector<ClaimTemplate>& templates,
                                     const std::vector<SliceDevice>& devices,
                                     const std::vector<DeviceClass>& classes, const SimulateOptions& options) {
  std::vector<const SliceDevice*> sorted;
  sorted.reserve(devices.size());
  std::set<std::string> seen;
  for (const auto& d : devices) {
    if (seen.insert(LookupKey(d)).second) sorted.push_back(&d);
  }
  std::sort(sorted.begin(), sorted.end(), [](const SliceDevice* a, const SliceDevice* b) {
    return std::tie(a->name, a->driver, a->pool) < std::tie(b->name, b->driver, b->pool);
  });
  std::vector<TemplateResult> results;
  results.reserve(templates.size());
  NodeState node;
  for (const auto& t : templates) {
    if (!options.one_node) node = {};
    Allocator allocator(t, sorted, classes, options, node);
    results.push_back(allocator.Run());
    if (results.back().allocated) allocator.CommitTo(node);
  }
  return results;
}

}  // namespace dranet::simulate
