/* hello-c: the smallest useful dranet plugin, in plain C99.
 * Adds hello-c.dra.net/greeting to every RDMA-capable device. */
#include <dranet/plugin.h>
#include <stdlib.h>
#include <string.h>

struct hello_state {
  const dranet_host_t *host; /* valid until fini */
  char greeting[64];
};

static dranet_status_t hello_init(const dranet_host_t *host, void **state_out, dranet_error_t *err) {
  const char *value = "hello";
  struct hello_state *s = calloc(1, sizeof *s);
  if (s == NULL) return dranet_error_set(err, DRANET_ERR_NO_MEMORY, 0, "hello-c: out of memory");
  s->host = host;
  if (host->config_get(host->host_ctx, "greeting", &value) != DRANET_OK) value = "hello";
  strncpy(s->greeting, value, sizeof s->greeting - 1);
  DRANET_LOG(host, DRANET_LOG_INFO, "greeting is %s", s->greeting);
  *state_out = s;
  return DRANET_OK;
}

static void hello_fini(void *state) { free(state); }

static dranet_status_t hello_annotate(void *state, const dranet_device_t *device,
                                      const dranet_attr_sink_t *sink, dranet_error_t *err) {
  struct hello_state *s = state;
  dranet_attr_t attr;
  (void)device; /* the match table already chose RDMA devices */
  memset(&attr, 0, sizeof attr);
  attr.struct_size = sizeof attr;
  attr.type = DRANET_ATTR_STRING;
  attr.name = "hello-c.dra.net/greeting";
  attr.str_value = s->greeting;
  if (sink->add_attr(sink->sink_ctx, &attr) != DRANET_OK)
    return dranet_error_set(err, DRANET_ERR_INVALID_ARG, 0, "host refused the greeting");
  return DRANET_OK;
}

static const dranet_match_t hello_matches[] = {
    {DRANET_MATCH_RDMA, 0, 0, NULL},
    {DRANET_MATCH_END, 0, 0, NULL},
};

static const dranet_config_key_t hello_config[] = {
    {sizeof(dranet_config_key_t), "greeting", "hello", "value of hello-c.dra.net/greeting"},
    {0, NULL, NULL, NULL},
};

static const dranet_plugin_t hello_plugin = {
    sizeof(dranet_plugin_t),
    DRANET_ABI_CURRENT,
    "hello-c",
    "1.0.0",
    "example C plugin: a greeting on every RDMA device",
    DRANET_CAP_ATTRIBUTES,
    0,
    hello_matches,
    hello_config,
    hello_init,
    hello_fini,
    NULL, /* discover */
    hello_annotate,
    NULL, /* inject */
};

DRANET_PLUGIN_DEFINE(hello_plugin)
