#include "nri/adjustment.h"

namespace dranet::nri {

void FillAdjustment(const inject::ContainerEdits& edits, api::ContainerAdjustment* adjust) {
  for (const auto& node : edits.device_nodes) {
    auto* linux_adj = adjust->mutable_linux();
    auto* dev = linux_adj->add_devices();
    dev->set_path(node.container_path);
    dev->set_type("c");
    dev->set_major(node.major);
    dev->set_minor(node.minor);
    dev->mutable_file_mode()->set_value(node.file_mode);
    dev->mutable_uid()->set_value(0);
    dev->mutable_gid()->set_value(0);
    auto* rule = linux_adj->mutable_resources()->add_devices();
    rule->set_allow(true);
    rule->set_type("c");
    rule->mutable_major()->set_value(node.major);
    rule->mutable_minor()->set_value(node.minor);
    rule->set_access(node.permissions.empty() ? "rw" : node.permissions);
  }
  for (const auto& [key, value] : edits.env) {
    auto* kv = adjust->add_env();
    kv->set_key(key);
    kv->set_value(value);
  }
  for (const auto& m : edits.mounts) {
    auto* mount = adjust->add_mounts();
    mount->set_destination(m.container_path);
    mount->set_source(m.host_path);
    mount->set_type("bind");
    if (m.options.empty()) {
      mount->add_options("rbind");
      mount->add_options("ro");
    }
    for (const auto& o : m.options) mount->add_options(o);
  }
}

}  // namespace dranet::nri
