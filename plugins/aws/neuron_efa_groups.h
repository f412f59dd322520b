// plugins/aws/neuron_efa_groups.h — which EFA function serves which
// Neuron device on EFA-enabled Trainium instances, for the
// resource.aws.com/devicegroupN_id attributes.
//
// Data (facts, not code) from aws-neuron/connected-device-maps-over-efa-for-neuron
// at commit 2eb56e48a3f8af8e13478e3d48df2a1874f04fd7: lookup/config/
// efa-enabled-instances.json, lookup/config/instance-family-mappings.json and
// lookup/neuron/<family>.json (Neuron device index -> EFA PCI address).
// The attribute values are defined there too: devicegroup1_id is the EFA's
// PCI address; devicegroupN_id (N = 4, 8, 16) is the first 16 hex digits of
// SHA-256 over the sorted, de-duplicated EFA addresses of the Neuron devices
// [k*N, (k+1)*N) that holds this EFA's first Neuron device, joined by ",".
#ifndef DRANET_PLUGINS_AWS_NEURON_EFA_GROUPS_H
#define DRANET_PLUGINS_AWS_NEURON_EFA_GROUPS_H

#include <string>
#include <vector>

namespace dranet::plugins::aws {

struct NeuronEfaGroups {
  std::vector<std::string> efa_of_neuron;  // index: Neuron device
};

// The map for an instance type ("trn2.48xlarge"), or nullptr when the type
// is not an EFA-enabled Trainium instance.
inline const NeuronEfaGroups* NeuronEfaGroupsFor(const std::string& instance_type) {
  static const NeuronEfaGroups kTrn1{{
      "0000:10:1a.0", "0000:10:1a.0", "0000:a0:1a.0", "0000:a0:1a.0",
      "0000:20:19.0", "0000:20:19.0", "0000:90:19.0", "0000:90:19.0",
      "0000:20:1a.0", "0000:20:1a.0", "0000:90:1a.0", "0000:90:1a.0",
      "0000:10:19.0", "0000:10:19.0", "0000:a0:19.0", "0000:a0:19.0",
  }};
  static const NeuronEfaGroups kTrn1n{{
      "0000:10:17.0", "0000:10:1a.0", "0000:a0:17.0", "0000:a0:1a.0",
      "0000:20:19.0", "0000:20:18.0", "0000:90:19.0", "0000:90:18.0",
      "0000:20:17.0", "0000:20:1a.0", "0000:90:17.0", "0000:90:1a.0",
      "0000:10:19.0", "0000:10:18.0", "0000:a0:19.0", "0000:a0:18.0",
  }};
  static const NeuronEfaGroups kTrn2{{
      "0000:c9:00.0", "0000:b4:00.0", "0000:b3:00.0", "0000:ca:00.0",
      "0000:6c:00.0", "0000:57:00.0", "0000:56:00.0", "0000:6d:00.0",
      "0000:98:00.0", "0000:83:00.0", "0000:82:00.0", "0000:99:00.0",
      "0000:f5:00.0", "0000:e0:00.0", "0000:df:00.0", "0000:f6:00.0",
  }};
  static const NeuronEfaGroups kTrn3{{
      "0000:be:00.0", "0000:a9:00.0", "0000:a8:00.0", "0000:bf:00.0",
      "0000:61:00.0", "0000:4c:00.0", "0000:4b:00.0", "0000:62:00.0",
      "0000:8d:00.0", "0000:78:00.0", "0000:77:00.0", "0000:8e:00.0",
      "0000:ea:00.0", "0000:d5:00.0", "0000:d4:00.0", "0000:eb:00.0",
  }};
  static const NeuronEfaGroups kTrn3Pds{{
      "0000:a9:00.0", "0000:a8:00.0", "0000:bf:00.0", "0000:be:00.0",
      "0000:d5:00.0", "0000:d4:00.0", "0000:eb:00.0", "0000:ea:00.0",
      "0000:4c:00.0", "0000:4b:00.0", "0000:62:00.0", "0000:61:00.0",
      "0000:78:00.0", "0000:77:00.0", "0000:8e:00.0", "0000:8d:00.0",
  }};
  struct Row {
    const char* instance_type;
    const NeuronEfaGroups* map;
  };
  static const Row kRows[] = {
      {"trn1.32xlarge", &kTrn1},
      {"trn1n.32xlarge", &kTrn1n},
      {"trn2.48xlarge", &kTrn2},
      {"trn2e.48xlarge", &kTrn2},
      {"trn2u.48xlarge", &kTrn2},
      {"trn3.48xlarge", &kTrn3},
      {"trn3p.48xlarge", &kTrn3},
      {"trn3pd98.48xlarge", &kTrn3},
      {"trn3s.48xlarge", &kTrn3},
      {"trn3-dev0.48xlarge", &kTrn3Pds},
      {"trn3-dev1.48xlarge", &kTrn3Pds},
  };
  for (const auto& row : kRows)
    if (instance_type == row.instance_type) return row.map;
  return nullptr;
}

}  // namespace dranet::plugins::aws

#endif  // DRANET_PLUGINS_AWS_NEURON_EFA_GROUPS_H
