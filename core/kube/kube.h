#pragma once
// core/kube/kube.h — the Kubernetes API side of dranet, front door of core/kube/.
//
//   cluster_config.h   where the API server is and how to authenticate (in-cluster, kubeconfig)
//   api_client.h       REST client: get/list/watch/create/update/delete/apply, retries, auth
//   list_watch.h       list-then-watch loop with relist on 410 Gone (used by the two below)
//   resource_slice.h   ResourceSlice model: BuildSlices, validation, SliceToJson, ParseSlice,
//                      semantic comparison (also used by `dranetctl inspect -o json`)
//   slice_publisher.h  keeps the node's slices equal to its inventory (diff, repair, backoff)
//   resource_claim.h   ResourceClaim model and reader for prepare (cache + GET, UID check)
//   claim_status.h     status.devices (conditions, networkData) via server-side apply
//   event_recorder.h   core/v1 Events for failures users must see
//   names.h            Kubernetes name/value rules checked before sending
//
// Errors are exceptions: ApiError (HTTP status, reason, verb + path), ClaimError, and
// std::runtime_error for configuration. docs/kubernetes.md describes the behaviour.
#include "kube/api_client.h"
#include "kube/claim_status.h"
#include "kube/cluster_config.h"
#include "kube/event_recorder.h"
#include "kube/list_watch.h"
#include "base/k8s_names.h"
#include "kube/resource_claim.h"
#include "kube/resource_slice.h"
#include "kube/slice_publisher.h"
