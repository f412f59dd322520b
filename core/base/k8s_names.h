#pragma once
// core/base/k8s_names.h — the Kubernetes name and value rules the API server enforces on what we
// send (kubernetes/kubernetes pkg/apis/resource/validation). Checked before sending, so that
// one bad device is dropped with a clear log line instead of the API server rejecting the
// whole slice.
#include <string_view>

namespace dranet {

// DNS-1123 label: 1–63 chars of [a-z0-9-], starting and ending alphanumeric.
bool IsDnsLabel(std::string_view text);
// DNS-1123 subdomain: ≤253 chars, dot-separated DNS labels.
bool IsDnsSubdomain(std::string_view text);
// C identifier [A-Za-z_][A-Za-z0-9_]* of at most 32 chars (the id part of an attribute key).
bool IsAttributeId(std::string_view text);
// Attribute/capacity key: "<id>" or "<domain>/<id>" with a DNS-subdomain domain ≤63 chars.
bool IsQualifiedName(std::string_view text);
// Semantic version 2.0.0: MAJOR.MINOR.PATCH[-pre][+build], no leading zeros in numbers.
bool IsSemVer(std::string_view text);

}  // namespace dranet
