#include "ctl/doctor_command.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "base/files.h"
#include "ctl/node_view.h"
#include "daemon/capabilities.h"
#include "inventory/sysfs_tree.h"
#include "plugins/plugin_flags.h"
#include "plugins/plugin_host.h"

namespace dranet::ctl {
namespace fs = std::filesystem;

namespace {

struct DoctorCommand {
  std::string host_root = "/";
  std::string kubelet_root_dir = "/var/lib/kubelet";
  std::string nri_socket = "/var/run/nri/nri.sock";
  std::string cdi_dir = "/var/run/cdi";
  std::string state_dir = "/var/run/dranet";
  std::string driver_name = "dra.net";
  bool nri = true;
  bool cdi = false;
  plugins::PluginFlags plugins;
};

// The process's own capabilities (not the node root's).
constexpr const char* kSelfStatus = "/proc/self/status";

class Report {
 public:
  void Ok(const std::string& what) { std::cout << "[ok]   " << what << "\n"; }
  void Warn(const std::string& what, const std::string& fix) {
    std::cout << "[warn] " << what << "\n       fix: " << fix << "\n";
    ++warnings_;
  }
  void Fail(const std::string& what, const std::string& fix) {
    std::cout << "[fail] " << what << "\n       fix: " << fix << "\n";
    ++failures_;
  }
  int ExitCode() const {
    std::cout << "\n" << failures_ << " problem(s), " << warnings_ << " warning(s)\n";
    return failures_ > 0 ? 1 : 0;
  }

 private:
  int failures_ = 0, warnings_ = 0;
};

bool IsWritableDir(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && ::access(p.c_str(), W_OK) == 0;
}

// Whether something accepts connections on the unix socket `path`.
bool Connects(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    ::close(fd);
    return false;
  }
  path.copy(addr.sun_path, path.size());
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

void CheckKubelet(const DoctorCommand& cmd, Report& r) {
  fs::path registry = fs::path(cmd.kubelet_root_dir) / "plugins_registry";
  fs::path plugins = fs::path(cmd.kubelet_root_dir) / "plugins";
  if (IsWritableDir(registry) && IsWritableDir(plugins)) {
    r.Ok("kubelet plugin directories " + registry.string() + " and " + plugins.string() + " are writable");
  } else {
    r.Fail("kubelet plugin directories missing or not writable under " + cmd.kubelet_root_dir,
           "mount " + registry.string() + " and " + plugins.string() +
               " at identical paths into the pod (hostPath), or set --kubelet-root-dir to kubelet's --root-dir");
  }
  // Other registrations that publish network devices compete for the same NICs.
  std::error_code ec;
  for (fs::directory_iterator it(registry, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name == cmd.driver_name + "-reg.sock") {
      r.Ok("registered: " + name + (Connects(it->path().string()) ? " (answering)" : " (stale: nothing listens)"));
      continue;
    }
    for (const char* hint : {"sriov", "rdma", "dranet", "network", "nic"}) {
      if (name.find(hint) != std::string::npos) {
        r.Warn("another plugin that may manage network devices is registered: " + name,
               "make sure it does not hand out the NICs dra.net publishes (exclude them there, or use --filter here)");
        break;
      }
    }
  }
}

void CheckNri(const DoctorCommand& cmd, Report& r) {
  if (!cmd.nri) {
    r.Warn("NRI disabled (--nri=false): pods get no device nodes and no netdevs from dra.net",
           "enable NRI unless the CDI strategy (--cdi) covers what your pods need");
    return;
  }
  struct stat st {};
  if (::stat(cmd.nri_socket.c_str(), &st) != 0) {
    r.Fail("NRI socket " + cmd.nri_socket + " does not exist",
           "enable NRI in the runtime (containerd ≥ 1.7: [plugins.\"io.containerd.nri.v1.nri\"] disable = false; "
           "CRI-O: enable_nri = true) and mount /var/run/nri into the pod");
  } else if (!S_ISSOCK(st.st_mode)) {
    r.Fail(cmd.nri_socket + " is not a socket", "point --nri-socket at the runtime's NRI socket");
  } else if (!Connects(cmd.nri_socket)) {
    r.Fail("nothing accepts connections on " + cmd.nri_socket, "start or restart the container runtime with NRI on");
  } else {
    r.Ok("NRI socket " + cmd.nri_socket + " accepts connections");
  }
  const uint64_t caps = daemon::EffectiveCapabilities(ReadFileCapped(kSelfStatus).value_or(""));
  auto missing = daemon::MissingCapabilities(caps, true);
  if (missing.empty()) {
    r.Ok("capabilities CAP_NET_ADMIN and CAP_SYS_ADMIN present");
  }
  for (const auto& m : missing)
    r.Fail(std::string("missing ") + m.name + " (needed for " + m.why + ")",
           std::string("add ") + (m.name + 4) + " to securityContext.capabilities.add (no privileged: true needed)");
}

void CheckFiles(const DoctorCommand& cmd, Report& r) {
  if (cmd.cdi) {
    if (IsWritableDir(cmd.cdi_dir)) r.Ok("CDI directory " + cmd.cdi_dir + " is writable");
    else r.Fail("CDI directory " + cmd.cdi_dir + " missing or not writable", "mount it (hostPath, DirectoryOrCreate)");
  } else if (fs::is_directory(cmd.cdi_dir)) {
    r.Ok("CDI directory " + cmd.cdi_dir + " exists (CDI strategy off)");
  }
  if (IsWritableDir(cmd.state_dir)) r.Ok("state directory " + cmd.state_dir + " is writable");
  else r.Fail("state directory " + cmd.state_dir + " missing or not writable",
              "mount a hostPath (e.g. /var/run/dranet): prepared claims must survive a restart of dranetd");
  // Read like discovery reads it: a snapshot's links cannot lead outside it.
  inventory::HostPaths paths(cmd.host_root);
  inventory::SysfsDirectory sysfs(inventory::SysfsDirectory::OpenRoot(paths.root), "sys");
  fs::path ib = paths.sysfs / "class/infiniband";
  bool has_rdma = !sysfs.List("class/infiniband").empty();
  if (has_rdma) {
    // The kernel registers rdma_cm as a misc device once rdma_ucm is loaded.
    const fs::path rdma_cm = paths.sysfs / "class/misc/rdma_cm";
    if (sysfs.FileType("class/misc/rdma_cm")) r.Ok("RDMA devices present, rdma_cm registered");
    else r.Warn("RDMA devices present but rdma_cm is not registered (" + rdma_cm.string() + ")",
                "load rdma_ucm (modprobe rdma_ucm) so pods can use RDMA CM");
    auto mode = sysfs.Read("module/ib_core/parameters/netns_mode");
    if (mode) r.Ok(std::string("RDMA netns mode: ") + (*mode == "0" || *mode == "N" ? "exclusive" : "shared") +
                   " (dranetd --rdma-exclusive must match)");
  } else {
    r.Ok("no RDMA devices under " + ib.string() + " (netdevs only)");
  }
}

void CheckPlugins(const DoctorCommand& cmd, Report& r) {
  plugins::PluginHostOptions options;
  plugins::ApplyPluginFlags(cmd.plugins, options);
  options.host_root = cmd.host_root;
  // Probing plugins must not reach a metadata service from here.
  options.http = [](const plugins::HttpRequest&) {
    return plugins::HttpResult{503, "not queried by doctor"};
  };
  std::ostringstream discard;
  Logger quiet(discard);
  plugins::PluginHost host(options, quiet);
  for (const auto& rep : host.reports()) {
    std::string who = rep.name.empty() ? rep.file : rep.name;
    switch (rep.outcome) {
      case plugins::PluginOutcome::kLoaded:
        r.Ok("plugin " + who + " loads");
        break;
      case plugins::PluginOutcome::kNotApplicable:
      case plugins::PluginOutcome::kSkipped:
        r.Ok("plugin " + who + " " + plugins::OutcomeName(rep.outcome) + ": " + rep.reason);
        break;
      default:
        if (rep.name.empty() && fs::path(rep.file).extension() != ".so")
          r.Fail(rep.reason, "mount the plugin volume there (root-owned, mode 0755) or point --plugin-dir at it");
        else
          r.Fail("plugin " + who + " " + plugins::OutcomeName(rep.outcome) + ": " + rep.reason,
                 "rebuild it against this SDK (dranet_add_plugin) or remove it from the plugin directory");
    }
  }
}

}  // namespace

void AddDoctorCommand(CLI::App& app, int& exit_code) {
  auto cmd = std::make_shared<DoctorCommand>();
  auto* sub = app.add_subcommand("doctor", "Check this node for what dranetd needs, and say how to fix what is wrong");
  AddHostRootOption(*sub, cmd->host_root, "Node root");
  sub->add_option("--kubelet-root-dir", cmd->kubelet_root_dir, "Kubelet's root directory");
  sub->add_option("--nri-socket", cmd->nri_socket, "The runtime's NRI socket");
  sub->add_option("--nri", cmd->nri, "Whether dranetd runs its NRI plugin");
  sub->add_option("--cdi-dir", cmd->cdi_dir, "CDI spec directory");
  sub->add_option("--cdi", cmd->cdi, "Whether dranetd uses the CDI strategy");
  sub->add_option("--state-dir", cmd->state_dir, "dranetd's state directory");
  sub->add_option("--driver-name", cmd->driver_name, "DRA driver name");
  plugins::AddPluginFlags(*sub, cmd->plugins);
  sub->callback([cmd, &exit_code] {
    Report report;
    CheckKubelet(*cmd, report);
    CheckNri(*cmd, report);
    CheckFiles(*cmd, report);
    CheckPlugins(*cmd, report);
    exit_code = report.ExitCode();
  });
}

}  // namespace dranet::ctl
