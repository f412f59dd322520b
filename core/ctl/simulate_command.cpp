#include "ctl/simulate_command.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <set>

#include "base/files.h"
#include "ctl/node_view.h"
#include "simulate/simulate.h"

namespace dranet::ctl {
namespace {

// A cluster's ResourceSlices as YAML are a few MiB; the cap only bounds
// a wrong file.
constexpr std::size_t kMaxInputFileBytes = std::size_t{256} << 20;

// The whole content of the file an option names (a regular file, or a pipe
// such as <(kubectl get ...)). Errors name the option, the file and the
// reason: "--gpu-slices x.yaml: cannot read: Is a directory".
std::string ReadInputFile(const std::string& option, const std::string& path) {
  auto failure = [&](int err) {
    return std::runtime_error(option + " " + path + ": cannot read: " + std::strerror(err));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw failure(errno);
  auto text = ReadFdCapped(fd, kMaxInputFileBytes);  // closes fd; errno tells why on failure
  if (!text) throw failure(errno);
  if (text->size() >= kMaxInputFileBytes)
    throw std::runtime_error(option + " " + path + ": larger than " + std::to_string(kMaxInputFileBytes >> 20) +
                             " MiB");
  return *std::move(text);
}

// `parse` applied to the file an option names; its InputErrors name the
// option and the file too.
template <typename Parse>
auto ParseInputFile(const std::string& option, const std::string& path, Parse parse) {
  const std::string text = ReadInputFile(option, path);
  try {
    return parse(text);
  } catch (const simulate::InputError& e) {
    throw std::runtime_error(option + " " + path + ": " + e.what());
  }
}

// Up to three entries of `names`, then how many more.
std::string FirstFew(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > 3) out += " and " + std::to_string(names.size() - 3) + " more";
  return out;
}

// Other drivers' devices from --gpu-slices, for `simulate` and `templates`
// alike. A file that yields no device is an error (a simulation would only
// report "0 match" for every GPU request). dra.net devices in the file are
// dropped: ours come from the node itself. When the file holds slices of
// several nodes (`kubectl get resourceslices` of a whole cluster), only
// those of `node_name` and those bound to no node are kept.
std::vector<simulate::SliceDevice> LoadGpuSlices(const std::string& path, const std::string& node_name) {
  const std::string source = "--gpu-slices " + path;
  const std::string text = ReadInputFile("--gpu-slices", path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw std::runtime_error(source + ": no ResourceSlice objects in it (empty file)");
  simulate::SliceInput in = simulate::ReadResourceSlices(text, source);
  if (in.slices == 0) {
    std::string what = in.documents == 0   ? "no YAML documents, only comments"
                       : !in.others.empty() ? "found " + FirstFew(in.others)
                                            : "an empty list";
    throw std::runtime_error(source + ": no ResourceSlice objects in it (" + what + ")");
  }
  if (in.devices.empty())
    throw std::runtime_error(source + ": " + std::to_string(in.slices) + " ResourceSlice object" +
                             (in.slices == 1 ? "" : "s") + " but no devices in them");

  std::vector<simulate::SliceDevice> theirs;
  std::size_t ours = 0;
  std::set<std::string> nodes;
  for (auto& d : in.devices) {
    if (d.driver == "dra.net") {
      ++ours;
      continue;
    }
    if (!d.node_name.empty()) nodes.insert(d.node_name);
    theirs.push_back(std::move(d));
  }
  if (theirs.empty())
    throw std::runtime_error(source + ": only dra.net devices in it (" + std::to_string(ours) +
                             "); it takes other drivers' slices, such as the GPU driver's (dranet's own "
                             "devices come from the node)");
  std::size_t other_nodes = 0;
  if (nodes.size() > 1) {
    if (nodes.count(node_name) == 0)
      throw std::runtime_error(source + ": slices of " + std::to_string(nodes.size()) + " nodes (" +
                               FirstFew({nodes.begin(), nodes.end()}) + ") but none of this node (" + node_name +
                               "): pass --node-name, or list one node's slices (kubectl get resourceslices "
                               "--field-selector spec.nodeName=NODE -o yaml)");
    auto elsewhere = [&](const simulate::SliceDevice& d) { return !d.node_name.empty() && d.node_name != node_name; };
    other_nodes = static_cast<std::size_t>(std::count_if(theirs.begin(), theirs.end(), elsewhere));
    theirs.erase(std::remove_if(theirs.begin(), theirs.end(), elsewhere), theirs.end());
  }
  if (nodes.size() == 1 && *nodes.begin() != node_name)
    std::cerr << "dranetctl: " << source << ": its slices are of node " << *nodes.begin() << ", used for node "
              << node_name << "\n";
  if (ours > 0 || other_nodes > 0) {
    std::string skipped;
    if (ours > 0) skipped = std::to_string(ours) + " dra.net devices (dranet's own come from the node)";
    if (other_nodes > 0)
      skipped += (skipped.empty() ? "" : " and ") + std::to_string(other_nodes) + " devices of other nodes";
    std::cerr << "dranetctl: " << source << ": using " << theirs.size() << " devices, skipped " << skipped << "\n";
  }
  return theirs;
}

struct SimulateCommand {
  NodeViewFlags node;
  std::string templates_file, gpu_slices_file, classes_file;
  bool one_node = false;
};

std::string Describe(const simulate::AllocatedDevice& a) {
  std::string s = a.request + ": " + a.driver + "/" + a.device;
  if (a.slice_device != nullptr) {
    const auto& attrs = a.slice_device->attributes;
    std::vector<std::string> facts;
    for (const char* key : {"dra.net/rdmaDevice", "dra.net/ifName", "resource.kubernetes.io/pciBusID",
                            "resource.kubernetes.io/numaNode", "dra.net/numaNode"}) {
      auto it = attrs.find(key);
      if (it == attrs.end()) continue;
      std::string name = std::string(key).substr(std::string(key).find('/') + 1);
      if (name == "numaNode" && !facts.empty() && facts.back().rfind("numaNode", 0) == 0) continue;
      facts.push_back(name + "=" + inventory::FormatAttributeValue(it->second));
    }
    if (!facts.empty()) {
      s += " (";
      for (std::size_t i = 0; i < facts.size(); ++i) s += (i ? ", " : "") + facts[i];
      s += ")";
    }
  }
  if (a.share) {
    s += " [a share";
    std::string consumed;
    for (const auto& [key, amount] : a.consumed_capacity) consumed += (consumed.empty() ? "" : ", ") + key + " " + amount;
    s += (consumed.empty() ? "" : ", consumes " + consumed) + "]";
  }
  return s;
}

int Run(const SimulateCommand& cmd) {
  auto templates = ParseInputFile("-f", cmd.templates_file, simulate::ParseClaimTemplates);
  if (templates.empty())
    throw std::runtime_error("-f " + cmd.templates_file + ": no ResourceClaimTemplate or ResourceClaim objects in it");
  std::vector<simulate::DeviceClass> classes;
  if (!cmd.classes_file.empty())
    classes = ParseInputFile("--device-classes", cmd.classes_file, simulate::ParseDeviceClasses);
  NodeView view = BuildNodeView(cmd.node);
  auto devices = simulate::FromInventory(view.devices, view.node_name);
  if (!cmd.gpu_slices_file.empty())
    for (auto& d : LoadGpuSlices(cmd.gpu_slices_file, view.node_name)) devices.push_back(std::move(d));
  simulate::SimulateOptions options;
  options.one_node = cmd.one_node;
  auto results = simulate::Simulate(templates, devices, classes, options);
  bool all_allocated = true;
  for (const auto& r : results) {
    std::cout << "template " << r.template_name << ": " << (r.allocated ? "allocated" : "NOT allocated") << "\n";
    if (r.allocated) {
      std::vector<inventory::Device> ours;
      for (const auto& a : r.allocation) {
        std::cout << "  " << Describe(a) << "\n";
        if (a.slice_device != nullptr && a.slice_device->ours != nullptr) ours.push_back(*a.slice_device->ours);
      }
      std::cout << "  pod receives:\n";
      std::string nodes;
      for (const auto& c : r.pod.char_devices)
        nodes += "    /dev/" + c.path + " (" + std::to_string(c.major) + ":" + std::to_string(c.minor) + ")\n";
      std::cout << (nodes.empty() ? "    no device nodes\n" : nodes);
      for (const auto& n : r.pod.netdevs) std::cout << "    netdev " << n << " (moved into the pod network namespace)\n";
      for (const auto& n : r.pod.child_parents)
        std::cout << "    a child interface of netdev " << n << " (IPVLAN, or macvlan as the claim's config says; " << n
                  << " stays on the host)\n";
      // Env comes from the injection plugins themselves, as at prepare.
      auto edits = view.plugins->Inject({"simulate", r.template_name, "simulated-" + r.template_name}, ours);
      for (const auto& [k, v] : edits.env) std::cout << "    env " << k << "=" << v << "  (plugin " << edits.env_owner[k] << ")\n";
      for (const auto& e : edits.errors) std::cout << "    injection error: " << e << "\n";
      continue;
    }
    all_allocated = false;
    for (const auto& p : r.problems) std::cout << "  problem: " << p << "\n";
    for (const auto& req : r.requests) {
      std::cout << "  request " << req.request << " (wants " << req.wanted << ")\n";
      for (const auto& p : req.problems) std::cout << "    problem: " << p << "\n";
      for (const auto& d : req.devices) {
        if (d.selected) {
          std::cout << "    " << d.driver << "/" << d.device << ": matches\n";
          continue;
        }
        for (const auto& f : d.failures)
          std::cout << "    " << d.driver << "/" << d.device << ": " << f.where << " `" << f.clause << "` -> " << f.reason << "\n";
      }
    }
  }
  return all_allocated ? 0 : 3;
}

}  // namespace

void AddSimulateCommand(CLI::App& app, int& exit_code) {
  auto cmd = std::make_shared<SimulateCommand>();
  auto* sub = app.add_subcommand("simulate", "Allocate ResourceClaimTemplates on a node and show what pods would get");
  AddNodeViewFlags(*sub, cmd->node);
  // Files are checked when read, with one kind of message for every failure.
  sub->add_option("-f,--file", cmd->templates_file, "ResourceClaimTemplates (YAML or JSON, several documents)")
      ->required()->type_name("FILE");
  sub->add_option("--gpu-slices", cmd->gpu_slices_file,
                  "Other drivers' ResourceSlices (e.g. the GPU driver's): kubectl get -o yaml|json, "
                  "a List, or YAML documents")
      ->type_name("FILE");
  sub->add_option("--device-classes", cmd->classes_file, "DeviceClasses (default: the well-known ones)")
      ->type_name("FILE");
  sub->add_flag("--one-node", cmd->one_node,
                "Allocate the templates in order on one node, each taking what the earlier left (as pods created "
                "one after the other); default: each on an empty node");
  sub->callback([cmd, &exit_code] { exit_code = Run(*cmd); });
}

void AddTemplatesCommand(CLI::App& app, int& exit_code) {
  struct TemplatesCommand {
    NodeViewFlags node;
    std::string gpu_slices_file, namespace_name, nic_class = "dranet.net", api_version = "v1";
    int nics_per_gpu = 0;
  };
  auto cmd = std::make_shared<TemplatesCommand>();
  auto* sub = app.add_subcommand("templates", "Generate aligned ResourceClaimTemplates (GPU + nearest NICs) for a node");
  AddNodeViewFlags(*sub, cmd->node);
  sub->add_option("--gpu-slices", cmd->gpu_slices_file,
                  "The GPU driver's ResourceSlices for this node: kubectl get -o yaml|json, a List, "
                  "or YAML documents")
      ->required()->type_name("FILE");
  sub->add_option("--namespace", cmd->namespace_name, "metadata.namespace of the templates");
  sub->add_option("--nic-class", cmd->nic_class, "DeviceClass of dranet's NICs");
  sub->add_option("--nics-per-gpu", cmd->nics_per_gpu, "NICs per template (0: every nearest NIC)");
  sub->add_option("--api-version", cmd->api_version,
                  "resource.k8s.io version of the templates: v1 (Kubernetes 1.34+), v1beta2 (1.33) or v1beta1 "
                  "(1.32, 1.33)")
      ->check(CLI::IsMember({"v1", "v1beta2", "v1beta1"}));
  sub->callback([cmd, &exit_code] {
    NodeView view = BuildNodeView(cmd->node);
    simulate::AlignedTemplateOptions options;
    options.nic_class = cmd->nic_class;
    options.namespace_name = cmd->namespace_name;
    options.nics_per_gpu = cmd->nics_per_gpu;
    options.api_version = cmd->api_version;
    auto gpus = LoadGpuSlices(cmd->gpu_slices_file, view.node_name);
    auto templates = simulate::GenerateAlignedTemplates(view.devices, gpus, options);
    for (const auto& t : templates)
      if (t.yaml.empty()) std::cerr << "no NIC found for " << t.gpu_driver << "/" << t.gpu_device << "\n";
    std::cout << simulate::RenderTemplates(templates);
    exit_code = 0;
  });
}

}  // namespace dranet::ctl
