#include "ctl/simulate_command.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "ctl/node_view.h"
#include "simulate/simulate.h"

namespace dranet::ctl {
namespace {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct SimulateCommand {
  NodeViewFlags node;
  std::string templates_file, gpu_slices_file, classes_file;
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
      std::visit([&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) facts.push_back(name + "=" + v);
        else if constexpr (std::is_same_v<T, int64_t>) facts.push_back(name + "=" + std::to_string(v));
      }, it->second);
    }
    if (!facts.empty()) {
      s += " (";
      for (std::size_t i = 0; i < facts.size(); ++i) s += (i ? ", " : "") + facts[i];
      s += ")";
    }
  }
  return s;
}

int Run(const SimulateCommand& cmd) {
  NodeView view = BuildNodeView(cmd.node);
  auto templates = simulate::ParseClaimTemplates(ReadWholeFile(cmd.templates_file));
  auto devices = simulate::FromInventory(view.devices, view.node_name);
  if (!cmd.gpu_slices_file.empty())
    for (auto& d : simulate::ParseResourceSlices(ReadWholeFile(cmd.gpu_slices_file))) devices.push_back(std::move(d));
  std::vector<simulate::DeviceClass> classes;
  if (!cmd.classes_file.empty()) classes = simulate::ParseDeviceClasses(ReadWholeFile(cmd.classes_file));
  auto results = simulate::Simulate(templates, devices, classes);
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
  sub->add_option("-f,--file", cmd->templates_file, "ResourceClaimTemplates (YAML, several documents)")
      ->required()->check(CLI::ExistingFile);
  sub->add_option("--gpu-slices", cmd->gpu_slices_file, "Other drivers' ResourceSlices (e.g. the GPU driver's)")
      ->check(CLI::ExistingFile);
  sub->add_option("--device-classes", cmd->classes_file, "DeviceClasses (default: the well-known ones)")
      ->check(CLI::ExistingFile);
  sub->callback([cmd, &exit_code] { exit_code = Run(*cmd); });
}

void AddTemplatesCommand(CLI::App& app, int& exit_code) {
  struct TemplatesCommand {
    NodeViewFlags node;
    std::string gpu_slices_file, namespace_name, nic_class = "dranet.net";
    int nics_per_gpu = 0;
  };
  auto cmd = std::make_shared<TemplatesCommand>();
  auto* sub = app.add_subcommand("templates", "Generate aligned ResourceClaimTemplates (GPU + nearest NICs) for a node");
  AddNodeViewFlags(*sub, cmd->node);
  sub->add_option("--gpu-slices", cmd->gpu_slices_file, "The GPU driver's ResourceSlices for this node")
      ->required()->check(CLI::ExistingFile);
  sub->add_option("--namespace", cmd->namespace_name, "metadata.namespace of the templates");
  sub->add_option("--nic-class", cmd->nic_class, "DeviceClass of dranet's NICs");
  sub->add_option("--nics-per-gpu", cmd->nics_per_gpu, "NICs per template (0: every nearest NIC)");
  sub->callback([cmd, &exit_code] {
    NodeView view = BuildNodeView(cmd->node);
    simulate::AlignedTemplateOptions options;
    options.nic_class = cmd->nic_class;
    options.namespace_name = cmd->namespace_name;
    options.nics_per_gpu = cmd->nics_per_gpu;
    auto gpus = simulate::ParseResourceSlices(ReadWholeFile(cmd->gpu_slices_file));
    auto templates = simulate::GenerateAlignedTemplates(view.devices, gpus, options);
    for (const auto& t : templates)
      if (t.yaml.empty()) std::cerr << "no NIC found for " << t.gpu_driver << "/" << t.gpu_device << "\n";
    std::cout << simulate::RenderTemplates(templates);
    exit_code = 0;
  });
}

}  // namespace dranet::ctl
