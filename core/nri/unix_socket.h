#pragma once
// core/nri/unix_socket.h — the unix stream
// socket calls the NRI trunk needs (connect for the plugin, listen/accept
// for the test runtime).
#include <chrono>
#include <string>
#include <utility>

#include "base/unique_fd.h"

namespace dranet::nri {

// The fd type of the NRI trunk (base/unique_fd.h).
using UniqueFd = dranet::UniqueFd;

// Connects to the unix stream socket at `path`. Throws std::system_error
// naming the path.
UniqueFd ConnectUnixSocket(const std::string& path);

// Binds and listens on `path`, replacing a stale socket file. Throws
// std::system_error naming the path.
UniqueFd ListenUnixSocket(const std::string& path);

// Waits up to `timeout` for a connection. An invalid fd on timeout; throws
// std::system_error on a listening-socket error.
UniqueFd AcceptUnixSocket(const UniqueFd& listener, std::chrono::milliseconds timeout);

}  // namespace dranet::nri
