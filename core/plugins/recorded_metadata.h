#pragma once
// core/plugins/recorded_metadata.h — cloud metadata replayed from a node
// snapshot, so plugins run on a snapshot exactly as on the node and no
// request ever leaves the machine.
//
// Layout (docs/snapshots.md): <snapshot>/metadata/<cloud>/<url path>, query
// dropped, a path ending in '/' read from "<path>/index". The cloud is told
// by the header each service requires: "Metadata: true" → azure,
// "Metadata-Flavor: Google" → gce, "Authorization: Bearer Oracle" → oci,
// the session token this replay issued → aws ("X-aws-ec2-metadata-token")
// or alibaba ("X-aliyun-ecs-metadata-token"). Tokens come from a PUT
// carrying the service's TTL header, as from the real services. A request
// without its header gets 400 (a token not issued here 401); an unrecorded
// path gets 404.
#include <filesystem>
#include <string>
#include <vector>

#include "plugins/host_services.h"

namespace dranet::plugins {

inline constexpr const char* kRecordedAwsToken = "recorded-aws-imdsv2-token";
inline constexpr const char* kRecordedAlibabaToken = "recorded-alibaba-metadata-token";

HttpResult ReplayRecordedMetadata(const std::filesystem::path& snapshot_root, const HttpRequest& request);

// An HttpFunction serving `snapshot_root`'s recordings.
HttpFunction RecordedMetadataGetter(std::filesystem::path snapshot_root);

}  // namespace dranet::plugins
