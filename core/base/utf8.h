#pragma once
// core/base/utf8.h — text that must be valid UTF-8 on the wire.
//
// Protobuf `string` fields must hold UTF-8: the kubelet's Go client refuses
// a whole NodePrepareResources reply whose error text is not ("Exception
// deserializing response"), failing every claim of the batch. Error texts
// can carry bytes from claim configuration or the API server, so they pass
// through here before leaving.
#include <string>
#include <string_view>

namespace dranet {

// `text` with each byte that is not part of a well-formed UTF-8 sequence
// (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF) written
// as the four characters "\xNN". Valid text comes back unchanged.
std::string ToValidUtf8(std::string_view text);

}  // namespace dranet
