/*
 * dranet/plugin.h — the dranet plugin ABI, major version 1.
 *
 * A dranet plugin is a shared object loaded by dranetd (the DRA network
 * driver) from its plugin directory. It adds devices (discovery), adds
 * attributes to the devices the daemon publishes (attributes), or adds
 * container edits to a prepared claim (injection).
 *
 * Rules of this header (see docs/abi.md):
 *  - Plain C99; compiles alone as C99 and as C++17 with -pedantic.
 *  - Only fixed-width integers, pointers and char arrays in structs; no bool,
 *    enum or bitfield members. Constants are #defines.
 *  - Every struct that crosses the boundary starts with `uint32_t struct_size`
 *    (sizeof the struct as its writer was built) and is append-only within
 *    major 1. A reader touches a member newer than v1.0 only after
 *    DRANET_HAS_FIELD(). The only exception is dranet_match_t, an array
 *    element whose layout is frozen for the whole major.
 *  - One exported symbol: dranet_plugin_entry_v1 (DRANET_PLUGIN_DEFINE).
 *  - Borrow, don't transfer: every pointer passed into a call is valid only
 *    for that call, the receiver copies what it keeps, nobody frees the other
 *    side's memory. Sinks copy their arguments before returning.
 *  - No exception and no longjmp crosses the boundary in either direction.
 *  - Plugins never print and never hardcode /sys, /dev or /proc: they log and
 *    build paths through dranet_host_t.
 */
#ifndef DRANET_PLUGIN_H
#define DRANET_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                  */
/* ------------------------------------------------------------------------ */

#define DRANET_ABI_MAJOR 1
/* 1.0: the first release. 1.1: dranet_route_t, dranet_rule_t and the edit
 * sink's add_route / add_rule (per-netdev routes and policy rules).
 * 1.2: profiles (DRANET_CAP_PROFILES, get_profile / release_profile).
 * 1.3: owned attribute domains (attribute_domains), the sysfs files a
 * plugin reads (snapshot_paths), min_host_abi and the
 * entry's reasoned refusal (DRANET_PLUGIN_DEFINE_MIN_HOST), status names
 * (dranet_status_name); DRANET_FLAG_THREAD_SAFE is gone (it never had an
 * effect: calls into one plugin are always serialised).
 * 1.4: dranet_http_request_t.method (PUT, for the session tokens of AWS
 * IMDSv2 and Alibaba's metadata service). */
#define DRANET_ABI_MINOR 4
/* A version word: major in the high 16 bits, minor in the low 16 bits. */
#define DRANET_ABI_VERSION(maj, min) ((((uint32_t)(maj)) << 16) | ((uint32_t)(min) & 0xffffu))
#define DRANET_ABI_MAJOR_OF(v) (((uint32_t)(v)) >> 16)
#define DRANET_ABI_MINOR_OF(v) (((uint32_t)(v)) & 0xffffu)
#define DRANET_ABI_CURRENT DRANET_ABI_VERSION(DRANET_ABI_MAJOR, DRANET_ABI_MINOR)

/* Non-zero when the size-prefixed struct *s (of type T) is large enough to
 * hold member m, i.e. its writer was built with a header that had m. */
#define DRANET_HAS_FIELD(s, T, m) \
  ((s) != NULL && (s)->struct_size >= offsetof(T, m) + sizeof(((T *)0)->m))

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                   */
/* ------------------------------------------------------------------------ */

/* 0 = success, negative = failure. A code unknown to the reader (added by a
 * newer minor) is treated as a generic failure. Closed list within a minor. */
typedef int32_t dranet_status_t;
#define DRANET_OK 0
#define DRANET_ERR_UNSUPPORTED (-1)  /* op absent / not applicable here: skip, not a failure */
#define DRANET_ERR_INVALID_ARG (-2)  /* an argument is malformed */
#define DRANET_ERR_NOT_FOUND (-3)    /* key, device or resource does not exist */
#define DRANET_ERR_NO_MEMORY (-4)    /* allocation failed */
#define DRANET_ERR_IO (-5)           /* file, socket or HTTP failure */
#define DRANET_ERR_TIMED_OUT (-6)    /* a deadline passed */
#define DRANET_ERR_BUSY (-7)         /* transient: retry later */
#define DRANET_ERR_ABI_MISMATCH (-8) /* versions or struct sizes do not fit */
#define DRANET_ERR_INTERNAL (-9)     /* caught exception or broken invariant */
#define DRANET_ERR_OVERFLOW (-10)    /* the result did not fit the caller's buffer */

/* ABI 1.3: the name of a status code ("DRANET_ERR_IO"), for log lines and
 * error messages; "DRANET_ERR_UNKNOWN" for a code this header does not know.
 * The returned string is static. */
static inline const char *dranet_status_name(dranet_status_t status) {
  switch (status) {
    case DRANET_OK: return "DRANET_OK";
    case DRANET_ERR_UNSUPPORTED: return "DRANET_ERR_UNSUPPORTED";
    case DRANET_ERR_INVALID_ARG: return "DRANET_ERR_INVALID_ARG";
    case DRANET_ERR_NOT_FOUND: return "DRANET_ERR_NOT_FOUND";
    case DRANET_ERR_NO_MEMORY: return "DRANET_ERR_NO_MEMORY";
    case DRANET_ERR_IO: return "DRANET_ERR_IO";
    case DRANET_ERR_TIMED_OUT: return "DRANET_ERR_TIMED_OUT";
    case DRANET_ERR_BUSY: return "DRANET_ERR_BUSY";
    case DRANET_ERR_ABI_MISMATCH: return "DRANET_ERR_ABI_MISMATCH";
    case DRANET_ERR_INTERNAL: return "DRANET_ERR_INTERNAL";
    case DRANET_ERR_OVERFLOW: return "DRANET_ERR_OVERFLOW";
    default: return "DRANET_ERR_UNKNOWN";
  }
}

#define DRANET_ERROR_MSG_MAX 512

/* Caller-owned error details. The callee writes a NUL-terminated (possibly
 * truncated) message and optionally sys_errno on failure; it never keeps the
 * pointer. A caller may pass NULL when it does not want details. */
typedef struct dranet_error {
  uint32_t struct_size;               /* sizeof(dranet_error_t), set by the caller */
  int32_t sys_errno;                  /* errno, HTTP status or vendor code; 0 if none */
  char message[DRANET_ERROR_MSG_MAX]; /* human-readable, names the object at fault */
} dranet_error_t;

/* Fills *err (when non-NULL) and returns `code`, so that failures read
 *   return dranet_error_set(err, DRANET_ERR_IO, errno, "read %s failed", path);
 * `fmt` is a printf format; the message is truncated to fit. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline dranet_status_t dranet_error_set(dranet_error_t *err, dranet_status_t code,
                                               int32_t sys_errno, const char *fmt, ...) {
  if (err != NULL && err->struct_size >= sizeof(dranet_error_t)) {
    va_list ap;
    va_start(ap, fmt);
    err->sys_errno = sys_errno;
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
  }
  return code;
}

/* ------------------------------------------------------------------------ */
/* Host services (host -> plugin)                                            */
/* ------------------------------------------------------------------------ */

#define DRANET_LOG_ERROR 0
#define DRANET_LOG_WARN 1
#define DRANET_LOG_INFO 2
#define DRANET_LOG_DEBUG 3

/* An HTTP request for metadata services (Azure IMDS, GCE metadata, AWS
 * IMDSv2, OCI IMDS v2, Alibaba's metadata service). */
typedef struct dranet_http_request {
  uint32_t struct_size;       /* sizeof(dranet_http_request_t), set by the plugin */
  uint32_t timeout_ms;        /* whole-request deadline; 0 = the host default (2000 ms) */
  const char *url;            /* absolute http:// URL; borrowed for the call */
  const char *const *headers; /* "Name: value" strings, or NULL; borrowed */
  uint32_t n_headers;         /* number of entries in headers */
  /* ABI 1.4: "GET" (also when NULL, or when the struct ends before this
   * member) or "PUT" with an empty body (a metadata session token); any
   * other method is DRANET_ERR_INVALID_ARG. A host before 1.4 sends GET
   * whatever this says: a plugin that needs PUT declares min_host_abi 1.4. */
  const char *method;
} dranet_http_request_t;

/* Services the host offers. The struct and every string it points to are
 * owned by the host and stay valid from init() until fini() returns. All
 * callbacks are thread-safe and never throw. Always pass host_ctx back. */
typedef struct dranet_host {
  uint32_t struct_size;  /* sizeof(dranet_host_t) as the host was built */
  uint32_t abi_version;  /* DRANET_ABI_VERSION the host was built with */
  void *host_ctx;        /* opaque; first argument of every callback */
  const char *host_root; /* the node's root filesystem: "/" live, a snapshot dir in tests */
  const char *sysfs_root;  /* "<host_root>/sys" (no trailing slash) */
  const char *devfs_root;  /* "<host_root>/dev" */
  const char *procfs_root; /* "<host_root>/proc" */
  const char *node_name;   /* Kubernetes node name; "" when unknown */

  /* Non-zero when a message at `level` (DRANET_LOG_*) would be written;
   * lets plugins skip building expensive messages. */
  int32_t (*log_enabled)(void *host_ctx, int32_t level);
  /* Writes one log line attributed to this plugin. `file`/`line` locate the
   * call (may be NULL/0); `msg` is borrowed. Never fails. */
  void (*log)(void *host_ctx, int32_t level, const char *file, int32_t line, const char *msg);
  /* Looks up the plugin's configuration key `key` (one of its declared
   * config_keys). On success *value_out points to a host-owned string valid
   * until fini(). DRANET_ERR_NOT_FOUND when unset (use the default). */
  dranet_status_t (*config_get)(void *host_ctx, const char *key, const char **value_out);
  /* An HTTP request (GET; ABI 1.4: or PUT, see dranet_http_request_t)
   * with a deadline. The body is copied into the caller's buffer
   * body_buf[body_capacity]; DRANET_ERR_OVERFLOW when it does not fit.
   * *status_out gets the HTTP status and *body_len_out the body length, both
   * written only on DRANET_OK (any HTTP status counts as OK: check it).
   * Transport failures give DRANET_ERR_IO / DRANET_ERR_TIMED_OUT. Blocking:
   * call it from init()/discover()/annotate()/inject(), never from fini(). */
  dranet_status_t (*http_get)(void *host_ctx, const dranet_http_request_t *request,
                              char *body_buf, uint64_t body_capacity, int32_t *status_out,
                              uint64_t *body_len_out, dranet_error_t *err);
  /* ABI 1.1+: append new members below this line only. */
} dranet_host_t;

/* ------------------------------------------------------------------------ */
/* Devices and attributes                                                    */
/* ------------------------------------------------------------------------ */

/* Attribute value kinds, as resource.k8s.io/v1 DeviceAttribute. */
#define DRANET_ATTR_STRING 1  /* str_value, at most 64 bytes */
#define DRANET_ATTR_INT 2     /* int_value */
#define DRANET_ATTR_BOOL 3    /* int_value 0 or 1 */
#define DRANET_ATTR_VERSION 4 /* str_value, a semantic version */

typedef struct dranet_attr {
  uint32_t struct_size; /* sizeof(dranet_attr_t) as its writer was built */
  uint32_t type;        /* DRANET_ATTR_* */
  const char *name;     /* "<domain>/<identifier>", identifier <= 32 chars, e.g. "azure.dra.net/vmSize" */
  const char *str_value; /* STRING and VERSION; NULL otherwise */
  int64_t int_value;     /* INT; BOOL as 0 or 1 */
} dranet_attr_t;

/* One network device as the host sees it (annotate/inject input), or as a
 * discovery plugin reports it (discover output). Every string is borrowed
 * for the call and NUL-terminated; "" when unknown. */
typedef struct dranet_device {
  uint32_t struct_size;     /* sizeof(dranet_device_t) as its writer was built */
  int32_t numa_node;        /* -1 when unknown */
  const char *name;         /* published device name (DNS label), e.g. "pci-0000-8a-00-0" */
  const char *pci_address;  /* "0000:8a:00.0"; "" for virtual devices */
  const char *if_name;      /* host netdev name; "" for IB-only devices */
  const char *rdma_device;  /* "mlx5_0"; "" when not RDMA-capable */
  const char *driver;       /* bound kernel driver, e.g. "mlx5_core"; "" when none */
  uint32_t pci_vendor;      /* e.g. 0x15b3; 0 when not PCI */
  uint32_t pci_device;      /* e.g. 0x101e; 0 when not PCI */
  const dranet_attr_t *attrs; /* attributes known so far (annotate; list-valued ones are left
                               * out) or to publish (discover) */
  uint32_t n_attrs;           /* number of entries in attrs */
  /* ABI 1.1+: append new members below this line only. */
} dranet_device_t;

/* Discovery output: the host copies *device (and its attrs) before
 * add_device returns. Valid only during the discover() call. */
typedef struct dranet_device_sink {
  uint32_t struct_size;
  void *sink_ctx; /* opaque; pass back */
  dranet_status_t (*add_device)(void *sink_ctx, const dranet_device_t *device);
} dranet_device_sink_t;

/* Attribute output for the device being annotated: the host validates
 * (name form, value limits), namespaces and copies. A rejected attribute
 * returns DRANET_ERR_INVALID_ARG and is logged; the others still count.
 * Valid only during the annotate() call. */
typedef struct dranet_attr_sink {
  uint32_t struct_size;
  void *sink_ctx;
  dranet_status_t (*add_attr)(void *sink_ctx, const dranet_attr_t *attr);
} dranet_attr_sink_t;

/* ------------------------------------------------------------------------ */
/* Injection (mirrors CDI containerEdits)                                    */
/* ------------------------------------------------------------------------ */

/* What is being prepared: one claim's devices on this node that match the
 * plugin's match table. Borrowed for the call. */
typedef struct dranet_inject_request {
  uint32_t struct_size;
  uint32_t n_devices;
  const char *claim_namespace;
  const char *claim_name;
  const char *claim_uid;
  const dranet_device_t *devices; /* the allocated devices, n_devices entries */
} dranet_inject_request_t;

/* A device node to create in the container. */
typedef struct dranet_dev_node {
  uint32_t struct_size;
  uint32_t type;           /* 'c' (character) or 'b' (block) */
  const char *path;        /* path inside the container, e.g. "/dev/infiniband/uverbs0" */
  int64_t major;           /* -1: the host stats the node under devfs_root */
  int64_t minor;           /* -1: as major */
  uint32_t file_mode;      /* 0: the host default (0666) */
  const char *permissions; /* device-cgroup access, subset of "rwm"; NULL = "rw" */
} dranet_dev_node_t;

/* A bind mount into the container. */
typedef struct dranet_mount {
  uint32_t struct_size;
  uint32_t n_options;
  const char *host_path;      /* absolute, on the node */
  const char *container_path; /* absolute, in the container */
  const char *const *options; /* e.g. {"ro", "nosuid", "bind"}; NULL when n_options is 0 */
} dranet_mount_t;

/* ABI 1.1: a route to install on one netdev of the claim once it is in the
 * pod's network namespace (e.g. a cloud's per-NIC policy routing table).
 * Every string is borrowed for the add_route call; addresses are textual
 * (inet_pton forms), and all addresses of one route are of one family. */
#define DRANET_ROUTE_SCOPE_UNIVERSE 0 /* RT_SCOPE_UNIVERSE: via a gateway */
#define DRANET_ROUTE_SCOPE_LINK 253   /* RT_SCOPE_LINK: directly on the link */

typedef struct dranet_route {
  uint32_t struct_size;    /* sizeof(dranet_route_t), set by the plugin */
  uint32_t table;          /* routing table id; 0 = main; 255 (local) is refused */
  uint32_t metric;         /* route priority; 0 = the kernel default */
  uint32_t scope;          /* DRANET_ROUTE_SCOPE_UNIVERSE or DRANET_ROUTE_SCOPE_LINK */
  const char *destination; /* CIDR with the host bits clear, e.g. "10.0.0.0/24";
                              "0.0.0.0/0" or "::/0" for a default route. Required. */
  const char *gateway;     /* next-hop address, e.g. "10.0.0.1"; NULL or "" = on-link,
                              which needs scope LINK. A LINK route has no gateway. */
  const char *source;      /* preferred source address (no prefix); NULL or "" = none */
} dranet_route_t;

/* ABI 1.1: a policy-routing rule for one netdev of the claim, added in the
 * pod's network namespace: "from <source> to <destination> lookup <table>".
 * Strings are borrowed for the add_rule call; source and destination, when
 * both are given, are of one family (a rule with neither is IPv4). */
typedef struct dranet_rule {
  uint32_t struct_size;    /* sizeof(dranet_rule_t), set by the plugin */
  uint32_t priority;       /* rule preference; 0 = the kernel chooses */
  uint32_t table;          /* table to look up: not 0 (unspecified) and not 255 (local) */
  uint32_t reserved;       /* must be 0 (explicit padding; the host refuses other values) */
  const char *source;      /* CIDR with the host bits clear, or NULL / "" = from all */
  const char *destination; /* CIDR with the host bits clear, or NULL / "" = to all */
} dranet_rule_t;

/* Edits for every container of the pods using the claim. The host copies,
 * checks conflicts across plugins (two values for one env name fail the
 * claim with an error naming both plugins), and never overrides env a
 * container sets itself. Valid only during the inject() call.
 *
 * A rejected edit returns DRANET_ERR_INVALID_ARG; the host logs why and the
 * claim's preparation fails with that message, so plugins should only emit
 * what they know to be valid. */
typedef struct dranet_edit_sink {
  uint32_t struct_size; /* sizeof(dranet_edit_sink_t) as the host was built */
  void *sink_ctx;
  dranet_status_t (*add_dev_node)(void *sink_ctx, const dranet_dev_node_t *node);
  dranet_status_t (*add_mount)(void *sink_ctx, const dranet_mount_t *mount);
  dranet_status_t (*add_env)(void *sink_ctx, const char *name, const char *value);
  dranet_status_t (*add_annotation)(void *sink_ctx, const char *key, const char *value);
  /* ABI 1.1. A host built for 1.0 hands a shorter sink: check
   * DRANET_HAS_FIELD(sink, dranet_edit_sink_t, add_route) first, or call
   * dranet_sink_add_route(), which does. `device_name` is the published
   * name (dranet_device_t.name) of one of this request's devices that has a
   * netdev (non-empty if_name); anything else is refused. The route is
   * installed on that netdev in the pod. Both borrowed for the call. */
  dranet_status_t (*add_route)(void *sink_ctx, const char *device_name, const dranet_route_t *route);
  /* ABI 1.1, as add_route: a policy rule that belongs to that netdev (added
   * with it in the pod, removed with it). */
  dranet_status_t (*add_rule)(void *sink_ctx, const char *device_name, const dranet_rule_t *rule);
  /* Append new members below this line only. */
} dranet_edit_sink_t;

/* sink->add_route(...) when the host offers it (ABI 1.1+);
 * DRANET_ERR_UNSUPPORTED from a 1.0 host, whose sink ends before add_route. */
static inline dranet_status_t dranet_sink_add_route(const dranet_edit_sink_t *sink, const char *device_name,
                                                    const dranet_route_t *route) {
  if (!DRANET_HAS_FIELD(sink, dranet_edit_sink_t, add_route) || sink->add_route == NULL)
    return DRANET_ERR_UNSUPPORTED;
  return sink->add_route(sink->sink_ctx, device_name, route);
}

/* sink->add_rule(...) when the host offers it (ABI 1.1+); as above. */
static inline dranet_status_t dranet_sink_add_rule(const dranet_edit_sink_t *sink, const char *device_name,
                                                   const dranet_rule_t *rule) {
  if (!DRANET_HAS_FIELD(sink, dranet_edit_sink_t, add_rule) || sink->add_rule == NULL)
    return DRANET_ERR_UNSUPPORTED;
  return sink->add_rule(sink->sink_ctx, device_name, rule);
}

/* ------------------------------------------------------------------------ */
/* Profiles (ABI 1.2)                                                        */
/* ------------------------------------------------------------------------ */

/* A claim config may name a profile ("profile": "rdma-rail") that the node
 * resolves into more network configuration: an address from an IPAM, a
 * cloud's routes. With --profile-provider=cloud the host asks the plugins
 * that declare DRANET_CAP_PROFILES, in load order, for each allocated device
 * whose config names a profile. Borrowed for the call. */
typedef struct dranet_profile_request {
  uint32_t struct_size;
  uint32_t reserved;           /* 0 */
  const char *profile;         /* the config's "profile" value, non-empty */
  const char *claim_uid;       /* the ResourceClaim's metadata.uid */
  const char *config_json;     /* the merged NetworkConfig JSON object, "profile" included */
  const dranet_device_t *device; /* the allocated device. At get_profile every member is
                                    filled; at release_profile only name, pci_address and
                                    the dra.net/mac and dra.net/pciAddress attributes are,
                                    since the netdev may sit in a pod by then. */
} dranet_profile_request_t;

/* The answer of get_profile. Valid only during the call. */
#define DRANET_PROFILE_CONFIG_MAX 65536
typedef struct dranet_profile_sink {
  uint32_t struct_size;
  void *sink_ctx;
  /* The NetworkConfig JSON object (the claim config's schema, e.g.
   * {"interface":{"addresses":["10.0.0.5/24"]}}) that the profile resolves
   * to; it is merged on top of the claim's config (it wins for scalars, its
   * lists are appended). At most DRANET_PROFILE_CONFIG_MAX bytes; the host
   * copies it. The last call wins. DRANET_ERR_INVALID_ARG when it is not a
   * JSON object or too long. */
  dranet_status_t (*set_config)(void *sink_ctx, const char *network_config_json);
} dranet_profile_sink_t;

/* ------------------------------------------------------------------------ */
/* Declarative matching (evaluated by the host)                              */
/* ------------------------------------------------------------------------ */

#define DRANET_MATCH_END 0    /* terminates the table */
#define DRANET_MATCH_PCI 1    /* pci_vendor and pci_device; 0xffff matches any */
#define DRANET_MATCH_DRIVER 2 /* bound kernel driver equals pattern */
#define DRANET_MATCH_IFNAME 3 /* fnmatch(3) glob pattern on the netdev name */
#define DRANET_MATCH_RDMA 4   /* the device has an RDMA device */
#define DRANET_MATCH_ALWAYS 5 /* every device (node-level plugins, e.g. cloud metadata) */
#define DRANET_MATCH_ANY_ID 0xffffu

/* One entry of a match table: a device is handed to annotate()/inject() when
 * any entry matches it. A NULL table means DRANET_MATCH_ALWAYS. Array
 * element: no struct_size, layout frozen for major 1. Static data. */
typedef struct dranet_match {
  uint32_t kind;       /* DRANET_MATCH_* */
  uint16_t pci_vendor; /* DRANET_MATCH_PCI */
  uint16_t pci_device; /* DRANET_MATCH_PCI */
  const char *pattern; /* DRANET_MATCH_DRIVER / DRANET_MATCH_IFNAME; NULL otherwise */
} dranet_match_t;

/* A configuration key the plugin reads through config_get. Used by the host
 * to reject unknown keys and by `dranetctl plugins` to document them.
 * Array terminated by an entry whose name is NULL. Static data. */
typedef struct dranet_config_key {
  uint32_t struct_size;
  const char *name;          /* [a-z0-9-]{1,63}, e.g. "imds-endpoint" */
  const char *default_value; /* documented default; NULL when none */
  const char *description;   /* one line */
} dranet_config_key_t;

/* ------------------------------------------------------------------------ */
/* The plugin descriptor                                                     */
/* ------------------------------------------------------------------------ */

#define DRANET_CAP_DISCOVERY (1u << 0)  /* discover() */
#define DRANET_CAP_ATTRIBUTES (1u << 1) /* annotate() */
#define DRANET_CAP_INJECTION (1u << 2)  /* inject() */
/* The three ops of ABI 1.0; frozen, so a descriptor written with it keeps
 * meaning the same thing under every later header. */
#define DRANET_CAP_ALL (DRANET_CAP_DISCOVERY | DRANET_CAP_ATTRIBUTES | DRANET_CAP_INJECTION)
#define DRANET_CAP_PROFILES (1u << 3)   /* ABI 1.2: get_profile() and release_profile() */

/* No DRANET_FLAG_* is defined: `flags` must be 0. The host calls into one
 * plugin from one thread at a time (its worker), so a plugin never needs to
 * be thread-safe. (Bit 0, DRANET_FLAG_THREAD_SAFE up to 1.2, never changed
 * that; it was removed in 1.3 and is ignored.) */

/* Static, immutable data owned by the plugin; valid until it is unloaded.
 * Lifecycle: entry -> (host validates) -> init -> (discover | annotate |
 * inject)* -> fini. The host unloads plugins only at shutdown, after fini. */
typedef struct dranet_plugin {
  uint32_t struct_size;  /* sizeof(dranet_plugin_t) as the plugin was built */
  uint32_t abi_version;  /* DRANET_ABI_CURRENT as the plugin was built */
  const char *name;      /* [a-z0-9-]{1,32}; the file must be dranet-plugin-<name>.so */
  const char *version;   /* the plugin's own version (informational), e.g. "1.2.0" */
  const char *description; /* one line for `dranetctl plugins` */
  uint32_t capabilities; /* DRANET_CAP_*: each bit set <=> its op is non-NULL */
  uint32_t flags;        /* DRANET_FLAG_* */
  const dranet_match_t *match_table;     /* NULL or DRANET_MATCH_END-terminated */
  const dranet_config_key_t *config_keys; /* NULL or terminated by a NULL name */

  /* Prepares the plugin; cheap probes only (seconds at most). Returns
   * DRANET_ERR_UNSUPPORTED when it does not apply to this node (e.g. not on
   * Azure): the host then skips it without calling fini(). `host` is valid
   * until fini() returns. *state_out is written only on success. */
  dranet_status_t (*init)(const dranet_host_t *host, void **state_out, dranet_error_t *err);
  /* Releases the plugin's state. Must not fail; logs instead. */
  void (*fini)(void *state);
  /* DRANET_CAP_DISCOVERY: reports extra devices through sink->add_device. */
  dranet_status_t (*discover)(void *state, const dranet_device_sink_t *sink, dranet_error_t *err);
  /* DRANET_CAP_ATTRIBUTES: adds attributes to one matching device. */
  dranet_status_t (*annotate)(void *state, const dranet_device_t *device,
                              const dranet_attr_sink_t *sink, dranet_error_t *err);
  /* DRANET_CAP_INJECTION: adds container edits for a claim being prepared. */
  dranet_status_t (*inject)(void *state, const dranet_inject_request_t *request,
                            const dranet_edit_sink_t *sink, dranet_error_t *err);
  /* ABI 1.2, DRANET_CAP_PROFILES (both ops non-NULL, or neither): resolves
   * request->profile for one device through sink->set_config. Returns
   * DRANET_ERR_NOT_FOUND when this plugin does not know the profile (the
   * host then asks the next plugin); any other failure fails the claim's
   * preparation with err's message. The kubelet retries prepare, so the
   * answer must be idempotent per (device name, claim_uid). Blocking is
   * allowed within the host's call deadline. */
  dranet_status_t (*get_profile)(void *state, const dranet_profile_request_t *request,
                                 const dranet_profile_sink_t *sink, dranet_error_t *err);
  /* ABI 1.2: frees what get_profile allocated for this device and claim.
   * Called at unprepare on every profile plugin with the request get_profile
   * saw (device reduced as documented above); answer DRANET_OK or
   * DRANET_ERR_NOT_FOUND for what it never gave or already freed. */
  dranet_status_t (*release_profile)(void *state, const dranet_profile_request_t *request,
                                     dranet_error_t *err);
  /* ABI 1.3: attribute domains this plugin owns besides its own
   * "<name>.dra.net", e.g. {"gce.dra.net", NULL} or {"acme.com", NULL}.
   * NULL or a NULL-terminated array (at most 16 entries) of DNS subdomains;
   * static data. Attributes a plugin may publish: its own domain and these.
   * A domain two plugins declare belongs to neither; a declared
   * "<other>.dra.net" is refused when a plugin called <other> is present;
   * the core's domains (dra.net, resource.kubernetes.io) are never a
   * plugin's. Plugins built for 1.0-1.2 may also write domains no plugin
   * owns (docs/abi.md "Attribute domains"). */
  const char *const *attribute_domains;
  /* ABI 1.3: the oldest host ABI version (DRANET_ABI_VERSION) this plugin
   * works with; 0 = any 1.x host. A 1.3+ host older than this refuses the
   * plugin with a message naming both versions; older hosts are refused by
   * the entry itself (DRANET_PLUGIN_DEFINE_MIN_HOST). */
  uint32_t min_host_abi;
  uint32_t reserved; /* 0 (explicit padding) */
  /* ABI 1.3: the sysfs files this plugin reads beyond what the host's own
   * discovery reads, so that `dranetctl snapshot` captures them and the
   * plugin works on a snapshot as on the node. NULL or a NULL-terminated
   * array (at most 32 entries) of paths relative to the sysfs root, each at
   * most 255 characters, in which a component may be a glob (fnmatch(3):
   * `*`, `?`, `[...]`, within one component), e.g.
   * {"class/net/STAR/speed", "class/infiniband/STAR/ports/STAR/rate", NULL}
   * (with * for STAR). Links on the way are followed as the kernel's are.
   * No absolute paths, no "." or ".." components. Static data. */
  const char *const *snapshot_paths;
  /* Append new members below this line only. */
} dranet_plugin_t;

/* The smallest descriptor a v1 host accepts: everything up to inject. */
#define DRANET_PLUGIN_V1_0_SIZE \
  (offsetof(dranet_plugin_t, inject) + sizeof(((dranet_plugin_t *)0)->inject))

/* ------------------------------------------------------------------------ */
/* The single exported symbol                                                */
/* ------------------------------------------------------------------------ */

#define DRANET_PLUGIN_ENTRY_SYMBOL "dranet_plugin_entry_v1"

/* The host passes the version it was built with; the plugin returns its
 * static descriptor in *plugin_out or DRANET_ERR_ABI_MISMATCH when it cannot
 * work with that host. Does no other work. ABI 1.3: a refusing entry may
 * still point *plugin_out at its descriptor, so that the host can say why
 * (it then reads only struct_size, abi_version, name, version and
 * min_host_abi); otherwise *plugin_out is written only on success. */
typedef dranet_status_t dranet_plugin_entry_fn(uint32_t host_abi_version,
                                               const dranet_plugin_t **plugin_out);

#if defined(__GNUC__)
#define DRANET_EXPORT __attribute__((visibility("default")))
#else
#define DRANET_EXPORT
#endif

DRANET_EXPORT dranet_plugin_entry_fn dranet_plugin_entry_v1;

/* In exactly one source file of a plugin:  DRANET_PLUGIN_DEFINE(my_descriptor)
 * where my_descriptor is a static const dranet_plugin_t. */
#define DRANET_PLUGIN_DEFINE(descriptor)                                              \
  DRANET_EXPORT dranet_status_t dranet_plugin_entry_v1(uint32_t host_abi_version,     \
                                                       const dranet_plugin_t **out) { \
    if (out == NULL || DRANET_ABI_MAJOR_OF(host_abi_version) != DRANET_ABI_MAJOR)     \
      return DRANET_ERR_ABI_MISMATCH;                                                 \
    *out = &(descriptor);                                                             \
    return DRANET_OK;                                                                 \
  }

/* As DRANET_PLUGIN_DEFINE, for a plugin that needs host ABI 1.<min_minor> or
 * newer (e.g. 2 for profiles): an older host is refused, and the entry
 * leaves its descriptor in *out so that the host can name both versions.
 * Set the descriptor's min_host_abi to DRANET_ABI_VERSION(1, min_minor). */
#define DRANET_PLUGIN_DEFINE_MIN_HOST(descriptor, min_minor)                            \
  DRANET_EXPORT dranet_status_t dranet_plugin_entry_v1(uint32_t host_abi_version,       \
                                                       const dranet_plugin_t **out) {   \
    if (out == NULL || DRANET_ABI_MAJOR_OF(host_abi_version) != DRANET_ABI_MAJOR)       \
      return DRANET_ERR_ABI_MISMATCH;                                                   \
    *out = &(descriptor);                                                               \
    /* minor + 1 <= min_minor: no comparison with a constant 0 (-Wtype-limits) */    \
    return DRANET_ABI_MINOR_OF(host_abi_version) + 1u <= (uint32_t)(min_minor)          \
               ? DRANET_ERR_ABI_MISMATCH : DRANET_OK;                                   \
  }

/* Logging helper for C plugins: formats and forwards to host->log when the
 * level is enabled. Preserves nothing else; never fails. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static inline void dranet_logf(const dranet_host_t *host, int32_t level, const char *file,
                               int32_t line, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  if (host == NULL || host->log == NULL) return;
  if (host->log_enabled != NULL && !host->log_enabled(host->host_ctx, level)) return;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  host->log(host->host_ctx, level, file, line, buf);
}
#define DRANET_LOG(host, level, ...) dranet_logf((host), (level), __FILE__, __LINE__, __VA_ARGS__)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DRANET_PLUGIN_H */
