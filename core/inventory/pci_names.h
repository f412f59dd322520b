#pragma once
// core/inventory/pci_names.h — PCI vendor/device names from pci.ids via libpci.
//
// libpci parses the whole database on first use (about 10 ms and several
// MiB of memory for hwdata's pci.ids). A node has a handful of distinct PCI
// ids, so answers are cached per id and the parsed database is released
// after each scan (ReleaseDatabase): a daemon keeps a few names resident,
// not the whole list, and re-parses only when a new id appears (hot-plug).
// Thread-safe.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <map>
#include <mutex>
#include <tuple>
#include <optional>
#include <string>

#include "base/log.h"

struct pci_access;

namespace dranet::inventory {

// Where libpci looks by default (Debian's hwdata / pciutils location).
inline constexpr const char* kDefaultPciIdsPath = "/usr/share/misc/pci.ids";

class PciNameDatabase {
 public:
  // `pci_ids_path` empty selects kDefaultPciIdsPath. Nothing is read until
  // the first lookup. `log` must outlive the database.
  PciNameDatabase(std::filesystem::path pci_ids_path, Logger& log);
  ~PciNameDatabase();
  PciNameDatabase(const PciNameDatabase&) = delete;
  PciNameDatabase& operator=(const PciNameDatabase&) = delete;

  // nullopt when the id is not in the database or the database is unusable
  // (missing or malformed file: logged once).
  std::optional<std::string> VendorName(uint16_t vendor_id);
  std::optional<std::string> DeviceName(uint16_t vendor_id, uint16_t device_id);

  const std::filesystem::path& path() const { return path_; }

  // Frees libpci's parsed list (cached answers stay) and returns the memory
  // to the system.
  void ReleaseDatabase();

 private:
  // Loads the database on first use; false when it is unusable.
  bool EnsureLoaded();
  std::optional<std::string> Lookup(int flags, uint16_t vendor_id, uint16_t device_id);

  std::filesystem::path path_;
  Logger& log_;
  std::mutex mu_;
  pci_access* access_ = nullptr;  // owned; leaked on purpose after a parse error (see .cpp)
  bool unusable_ = false;
  std::map<std::tuple<int, uint16_t, uint16_t>, std::optional<std::string>> answers_;
};

}  // namespace dranet::inventory
