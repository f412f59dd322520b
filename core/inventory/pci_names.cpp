#include "inventory/pci_names.h"

#include <malloc.h>

#include <unistd.h>

#include <csetjmp>
#include <cstdarg>
#include <cstdio>

extern "C" {
#include <pci/pci.h>
}

namespace dranet::inventory {
namespace {

// libpci reports a malformed pci.ids through pci_access::error, which must not
// return (its default calls exit()). A daemon must survive a corrupt file, so
// the handler jumps back to the lookup that triggered the parse. The jump
// target is per thread and only set while the database mutex is held.
thread_local std::jmp_buf* parse_error_target = nullptr;
thread_local char parse_error_message[256];

// GNU attributes, not [[noreturn]]: clang checks them against libpci's pointer type.
__attribute__((noreturn, format(printf, 1, 2))) void OnLibpciError(char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(parse_error_message, sizeof(parse_error_message), format, args);
  va_end(args);
  // libpci's messages end with a newline; log fields should not.
  for (char& c : parse_error_message) {
    if (c == '\n') c = '\0';
  }
  if (parse_error_target != nullptr) std::longjmp(*parse_error_target, 1);
  // Not reachable: libpci only reports errors from inside our guarded calls.
  _exit(70);
}

void IgnoreLibpciMessage(char*, ...) {}

// Calls pci_lookup_name with the error jump armed. Kept free of C++ objects
// with destructors, as longjmp skips them. Returns false after a parse error.
bool GuardedLookup(pci_access* access, char* buffer, int size, int flags, int vendor_id, int device_id,
                   char** result_out) {
  std::jmp_buf target;
  if (setjmp(target) != 0) {
    parse_error_target = nullptr;
    return false;
  }
  parse_error_target = &target;
  *result_out = pci_lookup_name(access, buffer, size, flags, vendor_id, device_id);
  parse_error_target = nullptr;
  return true;
}

}  // namespace

PciNameDatabase::PciNameDatabase(std::filesystem::path pci_ids_path, Logger& log)
    : path_(pci_ids_path.empty() ? std::filesystem::path(kDefaultPciIdsPath) : std::move(pci_ids_path)),
      log_(log) {}

PciNameDatabase::~PciNameDatabase() {
  if (access_ != nullptr && !unusable_) pci_cleanup(access_);
}

bool PciNameDatabase::EnsureLoaded() {
  if (unusable_) return false;
  if (access_ != nullptr) return true;
  // libpci crashes on a missing file when its cache fallback is off, so check
  // readability first.
  if (::access(path_.c_str(), R_OK) != 0) {
    log_.Warning("pci.ids not readable; pciVendor/pciDevice will be omitted", {{"path", path_.string()}});
    unusable_ = true;
    return false;
  }
  access_ = pci_alloc();
  access_->error = OnLibpciError;
  access_->warning = IgnoreLibpciMessage;
  access_->debug = IgnoreLibpciMessage;
  access_->id_lookup_mode = 0;  // no DNS, no ~/.pciids-cache: the file is the only source
  pci_set_name_list_path(access_, const_cast<char*>(path_.c_str()), 0);
  return true;
}

std::optional<std::string> PciNameDatabase::Lookup(int flags, uint16_t vendor_id, uint16_t device_id) {
  std::lock_guard lock(mu_);
  const auto key = std::make_tuple(flags, vendor_id, device_id);
  if (auto it = answers_.find(key); it != answers_.end()) return it->second;
  if (!EnsureLoaded()) return std::nullopt;
  char buffer[256];
  char* result = nullptr;
  if (!GuardedLookup(access_, buffer, sizeof(buffer), flags | PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB,
                     vendor_id, device_id, &result)) {
    // The half-parsed libpci state cannot be trusted, not even to free it:
    // it is abandoned (one small leak per process) and names are omitted.
    log_.Error("pci.ids is malformed; pciVendor/pciDevice will be omitted",
               {{"path", path_.string()}, {"error", parse_error_message}});
    unusable_ = true;
    return std::nullopt;
  }
  std::optional<std::string> answer;
  if (result != nullptr) answer = std::string(result);
  answers_.emplace(key, answer);
  return answer;
}

void PciNameDatabase::ReleaseDatabase() {
  std::lock_guard lock(mu_);
  if (access_ == nullptr || unusable_) return;
  pci_free_name_list(access_);
  malloc_trim(0);  // the list is thousands of small blocks: hand the pages back
}

std::optional<std::string> PciNameDatabase::VendorName(uint16_t vendor_id) {
  return Lookup(PCI_LOOKUP_VENDOR, vendor_id, 0);
}

std::optional<std::string> PciNameDatabase::DeviceName(uint16_t vendor_id, uint16_t device_id) {
  return Lookup(PCI_LOOKUP_DEVICE, vendor_id, device_id);
}

}  // namespace dranet::inventory
