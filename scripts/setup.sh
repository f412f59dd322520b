#!/usr/bin/env bash
# Installs every build, test and runtime dependency of dranet from Debian's
# package archive (bookworm). A bare machine needs nothing else.
#   sudo scripts/setup.sh            # build + test dependencies
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  # plugin loading
  libboost-dev libboost-filesystem-dev
  # kubelet gRPC + NRI messages
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  # HTTP client, JSON, YAML, CLI; SHA-256 (plugins/aws); CRC-32 (checkpoint)
  libcurl4-openssl-dev rapidjson-dev libyaml-cpp-dev libcli11-dev libssl-dev zlib1g-dev
  # netlink, RDMA, PCI names
  libnl-3-dev libnl-route-3-dev libnl-genl-3-dev libibverbs-dev libpci-dev pci.ids
  # AMD GPU topology (loaded at run time by plugins/amd)
  librocm-smi-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev iproute2 util-linux python3
  # claim-configuration tests: a real DHCP server, ethtool to read features back
  dnsmasq-base ethtool
  # dranet_install_ready: a TLS front for the fake API server (socat), its CA and
  # certificate (openssl), the probes on :9177 (curl)
  socat openssl curl
  # packaging: render.py and its tests (YAML, the OpenAPI and values schemas); the
  # kustomize test unpacks kubectl from the Debian archive itself (scripts/debian_fetch.sh)
  python3-yaml python3-jsonschema debian-archive-keyring
  # sanitizer and fuzzing builds (scripts/sanitize.sh): libFuzzer ships with
  # clang; clang 15+ is needed for std::source_location
  ninja-build clang-16 libclang-rt-16-dev
)

if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${packages[@]}"
