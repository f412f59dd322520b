#pragma once
// core/plugins/recorded_metadata.h — cloud metadata replayed from a node
// snapshot, so plugins run on a snapshot exactly as on the node and no
// request ever leaves the machine.
//
// Layout (docs/snapshots.md): <snapshot>/metadata/<cloud>/<url path>, query
// dropped, a path ending in '/' read from "<path>/index". The cloud is told
// by the header each service requires: "Metadata: true" → azure,
// "Metadata-Flavor: Google" → gce. Like the real services, a request
// without the header gets 400; an unrecorded path gets 404.
#include <filesystem>
#include <string>
#include <vector>

#include "plugins/host_services.h"

namespace dranet::plugins {

HttpResult ReplayRecordedMetadata(const std::filesystem::path& snapshot_root, const std::string& url,
                                  const std::vector<std::string>& headers);

// An HttpGetFunction serving `snapshot_root`'s recordings.
HttpGetFunction RecordedMetadataGetter(std::filesystem::path snapshot_root);

}  // namespace dranet::plugins
