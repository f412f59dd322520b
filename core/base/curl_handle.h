#pragma once
// core/base/curl_handle.h — RAII for the libcurl objects that every HTTP
// client of the core holds (the Kubernetes API client, the plugin host's
// http_get, the webhook profile provider), and the once-per-process global
// initialisation they all need.
//
// Header-only on purpose: dranet_base does not link libcurl, so only targets
// that link CURL::libcurl include this header.
#include <curl/curl.h>

#include <memory>
#include <new>
#include <string>

namespace dranet {

// curl_global_init is not thread-safe and must run once per process before
// any handle exists; the function-local static makes that happen exactly once.
inline void EnsureCurlGlobalInit() {
  static const bool initialised = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)initialised;
}

struct CurlHandleDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
using CurlHandle = std::unique_ptr<CURL, CurlHandleDeleter>;

// A fresh easy handle, after the global initialisation. Throws std::bad_alloc.
inline CurlHandle NewCurlHandle() {
  EnsureCurlGlobalInit();
  CurlHandle handle(curl_easy_init());
  if (!handle) throw std::bad_alloc();
  return handle;
}

struct CurlHeaderListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using CurlHeaderList = std::unique_ptr<curl_slist, CurlHeaderListDeleter>;

// Appends "Name: value" to `list`; on allocation failure the list is kept
// intact (and still owned) and std::bad_alloc is thrown.
inline void AppendCurlHeader(CurlHeaderList& list, const std::string& header) {
  curl_slist* grown = curl_slist_append(list.get(), header.c_str());
  if (grown == nullptr) throw std::bad_alloc();
  (void)list.release();
  list.reset(grown);
}

}  // namespace dranet
