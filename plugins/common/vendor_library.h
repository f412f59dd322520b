#pragma once
// plugins/common/vendor_library.h — a GPU vendor's management library
// (NVML, ROCm SMI) opened at run time when present, never linked: the
// plugins work on nodes without it. RAII: closed when the object goes away.
#include <dlfcn.h>

#include <string>

namespace dranet::plugins::common {

class VendorLibrary {
 public:
  // Opens `file`; on failure ok() is false and why() says what dlopen said.
  explicit VendorLibrary(const std::string& file) : handle_(dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (handle_ == nullptr) {
      const char* err = dlerror();
      why_ = "cannot load " + file + ": " + (err ? err : "unknown error");
    }
  }
  ~VendorLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  VendorLibrary(const VendorLibrary&) = delete;
  VendorLibrary& operator=(const VendorLibrary&) = delete;

  bool ok() const { return handle_ != nullptr; }
  const std::string& why() const { return why_; }

  // The entry point `name` as a function pointer of type Fn, or nullptr.
  template <typename Fn>
  Fn Symbol(const char* name) const {
    return handle_ == nullptr ? nullptr : reinterpret_cast<Fn>(dlsym(handle_, name));
  }

 private:
  void* handle_;
  std::string why_;
};

}  // namespace dranet::plugins::common
