/* The v1 layouts, frozen: a change here is an ABI break (a new major).
 * Checked for LP64 targets (x86-64 and arm64, where dranet runs). */
#include <dranet/plugin.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define CHECK(cond) typedef char CAT(abi_frozen_, __LINE__)[(cond) ? 1 : -1]

#if defined(__LP64__)
CHECK(sizeof(dranet_error_t) == 520);
CHECK(offsetof(dranet_error_t, message) == 8);
CHECK(sizeof(dranet_http_request_t) == 40);
CHECK(offsetof(dranet_http_request_t, method) == 32); /* 1.4 */
CHECK(offsetof(dranet_http_request_t, url) == 8);
CHECK(offsetof(dranet_http_request_t, n_headers) == 24);
CHECK(sizeof(dranet_host_t) == 88);
CHECK(offsetof(dranet_host_t, host_ctx) == 8);
CHECK(offsetof(dranet_host_t, host_root) == 16);
CHECK(offsetof(dranet_host_t, node_name) == 48);
CHECK(offsetof(dranet_host_t, log_enabled) == 56);
CHECK(offsetof(dranet_host_t, http_get) == 80);
CHECK(sizeof(dranet_attr_t) == 32);
CHECK(offsetof(dranet_attr_t, name) == 8);
CHECK(offsetof(dranet_attr_t, int_value) == 24);
CHECK(sizeof(dranet_device_t) == 72);
CHECK(offsetof(dranet_device_t, name) == 8);
CHECK(offsetof(dranet_device_t, pci_vendor) == 48);
CHECK(offsetof(dranet_device_t, attrs) == 56);
CHECK(offsetof(dranet_device_t, n_attrs) == 64);
CHECK(sizeof(dranet_device_sink_t) == 24);
CHECK(sizeof(dranet_attr_sink_t) == 24);
CHECK(sizeof(dranet_inject_request_t) == 40);
CHECK(offsetof(dranet_inject_request_t, devices) == 32);
CHECK(sizeof(dranet_dev_node_t) == 48);
CHECK(offsetof(dranet_dev_node_t, major) == 16);
CHECK(offsetof(dranet_dev_node_t, permissions) == 40);
CHECK(sizeof(dranet_mount_t) == 32);
/* 1.0 ended the edit sink at 48 bytes (after add_annotation); 1.1 appended
 * add_route and add_rule. */
CHECK(offsetof(dranet_edit_sink_t, add_annotation) == 40);
CHECK(offsetof(dranet_edit_sink_t, add_route) == 48);
CHECK(offsetof(dranet_edit_sink_t, add_rule) == 56);
CHECK(sizeof(dranet_edit_sink_t) == 64);
/* 1.1: routes and rules, naturally aligned without implicit padding. */
CHECK(sizeof(dranet_route_t) == 40);
CHECK(offsetof(dranet_route_t, table) == 4);
CHECK(offsetof(dranet_route_t, metric) == 8);
CHECK(offsetof(dranet_route_t, scope) == 12);
CHECK(offsetof(dranet_route_t, destination) == 16);
CHECK(offsetof(dranet_route_t, gateway) == 24);
CHECK(offsetof(dranet_route_t, source) == 32);
CHECK(sizeof(dranet_rule_t) == 32);
CHECK(offsetof(dranet_rule_t, priority) == 4);
CHECK(offsetof(dranet_rule_t, table) == 8);
CHECK(offsetof(dranet_rule_t, reserved) == 12);
CHECK(offsetof(dranet_rule_t, source) == 16);
CHECK(offsetof(dranet_rule_t, destination) == 24);
CHECK(sizeof(dranet_match_t) == 16);
CHECK(offsetof(dranet_match_t, pattern) == 8);
CHECK(sizeof(dranet_config_key_t) == 32);
/* 1.2 appended get_profile and release_profile to the descriptor. */
CHECK(offsetof(dranet_plugin_t, get_profile) == 96);
CHECK(offsetof(dranet_plugin_t, release_profile) == 104);
/* 1.3 appended attribute_domains, min_host_abi, explicit padding and snapshot_paths. */
CHECK(offsetof(dranet_plugin_t, attribute_domains) == 112);
CHECK(offsetof(dranet_plugin_t, min_host_abi) == 120);
CHECK(offsetof(dranet_plugin_t, reserved) == 124);
CHECK(offsetof(dranet_plugin_t, snapshot_paths) == 128);
CHECK(sizeof(dranet_plugin_t) == 136);
CHECK(sizeof(dranet_profile_request_t) == 40);
CHECK(offsetof(dranet_profile_request_t, profile) == 8);
CHECK(offsetof(dranet_profile_request_t, claim_uid) == 16);
CHECK(offsetof(dranet_profile_request_t, config_json) == 24);
CHECK(offsetof(dranet_profile_request_t, device) == 32);
CHECK(sizeof(dranet_profile_sink_t) == 24);
CHECK(offsetof(dranet_plugin_t, name) == 8);
CHECK(offsetof(dranet_plugin_t, capabilities) == 32);
CHECK(offsetof(dranet_plugin_t, match_table) == 40);
CHECK(offsetof(dranet_plugin_t, init) == 56);
CHECK(offsetof(dranet_plugin_t, inject) == 88);
CHECK(DRANET_PLUGIN_V1_0_SIZE == 96);
#endif

/* Sizes as the C compiler sees them, compared with C++ in the test. */
size_t dranet_test_c_sizeof_plugin(void) { return sizeof(dranet_plugin_t); }
size_t dranet_test_c_sizeof_host(void) { return sizeof(dranet_host_t); }
size_t dranet_test_c_sizeof_device(void) { return sizeof(dranet_device_t); }
size_t dranet_test_c_sizeof_edit_sink(void) { return sizeof(dranet_edit_sink_t); }
size_t dranet_test_c_sizeof_route(void) { return sizeof(dranet_route_t); }
size_t dranet_test_c_sizeof_rule(void) { return sizeof(dranet_rule_t); }
size_t dranet_test_c_sizeof_profile_request(void) { return sizeof(dranet_profile_request_t); }
