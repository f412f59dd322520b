#pragma once
// core/daemon/dranet_flags.h — DRANET's command-line surface on dranetd, so
// DRANET's own manifests run us unchanged: the value syntaxes DRANET's Go
// flags use (durations, feature gates, the cloud hint, the bbolt file path)
// and what each maps to here. Pure functions; main.cpp wires them.
#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dranet::daemon {

// A Go time.Duration string ("2s", "1m30s", "500ms", "1.5h", "0"), to
// milliseconds (sub-millisecond parts round down). Throws
// std::invalid_argument naming the value.
std::chrono::milliseconds ParseGoDuration(std::string_view text);

// DRANET's feature gates (pkg/features), both alpha and off by default.
inline constexpr std::string_view kGateDraListTypeAttributes = "DRAListTypeAttributes";
inline constexpr std::string_view kGatePersistentResourceSliceAttributes = "PersistentResourceSliceAttributes";

// "Gate=true,Other=false" as Kubernetes' --feature-gates: every gate named
// must be known, every value a Go bool (true/false/1/0/t/f, any case).
// Returns every known gate with its value. Throws std::invalid_argument.
std::map<std::string, bool> ParseFeatureGates(std::string_view text);

// What --cloud-provider-hint means for the plugin host.
struct CloudHint {
  bool detect = true;                     // "": every cloud plugin probes its own node
  std::vector<std::string> deny;          // cloud plugins that must not load
  std::string plugin;                     // the one cloud plugin left, if any
  std::string note;                       // a warning to log, or ""
};
// AWS, GCE, AZURE, OKE, ALIBABA, webhook, NONE (any case; "" = detect).
// Throws std::invalid_argument for any other value.
CloudHint CloudPluginsForHint(std::string_view hint);

// The cloud plugins a hint chooses between (DRANET's providers).
const std::vector<std::string>& CloudPluginNames();

// dranetd's state directory for DRANET's --db-path (a bbolt file): the
// file's directory, so DRANET's default /var/run/dranet/dranet.db gives
// dranetd's default /var/run/dranet. "" (DRANET: in-memory state) gives "".
std::string StateDirForDbPath(const std::string& db_path);

// DRANET's manifests start the container args with the program itself
// ("/dranet"), which an image with an entrypoint passes on as argv[1]. The
// index of the first real argument: 2 when argv[1] is a path whose base name
// is dranet or dranetd, else 1.
int FirstArgument(int argc, const char* const* argv);

// `args` with every "--name=" (an empty value after the '=') split into
// "--name" and "": Go's flag package, DRANET's, takes "--name=" as the empty
// value, where CLI11 would take the next argument as the value (a DRANET
// chart rendering "--feature-gates=" then "--v=4" set the gates to "--v=4").
// Empty is then refused where Go refuses it: numbers (by CLI11) and
// booleans (by a check main.cpp puts on every boolean option).
std::vector<std::string> SplitEmptyValues(const std::vector<std::string>& args);

}  // namespace dranet::daemon
