#pragma once
// tests/support/bpf_test_programs.h — tiny BPF programs for root tests of
// interface.disableEbpfPrograms and the dra.net/ebpf attributes, loaded with
// bpf(2) directly (inventory/bpf_programs.h's BpfSyscall): tcx attaching needs
// no object file. Header-only; link dranet_inventory.
#include <linux/bpf.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "inventory/bpf_programs.h"

namespace dranet::testing {

inline constexpr int kTcxPass = 0;  // TCX_PASS
inline constexpr int kTcxDrop = 2;  // TCX_DROP

// A loaded SCHED_CLS program "r0 = verdict; exit" named `name` (at most 15
// bytes); invalid (errno set) when the kernel refuses it.
inline inventory::BpfObjectFd LoadTcxProgram(const std::string& name, int verdict) {
  bpf_insn instructions[2] = {};
  instructions[0].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r0 = verdict
  instructions[0].dst_reg = BPF_REG_0;
  instructions[0].imm = verdict;
  instructions[1].code = BPF_JMP | BPF_EXIT;
  static const char kLicense[] = "GPL";
  union bpf_attr attr {};
  attr.prog_type = BPF_PROG_TYPE_SCHED_CLS;
  attr.insn_cnt = 2;
  attr.insns = reinterpret_cast<uintptr_t>(instructions);
  attr.license = reinterpret_cast<uintptr_t>(kLicense);
  std::strncpy(attr.prog_name, name.c_str(), sizeof(attr.prog_name) - 1);
  return inventory::BpfObjectFd(static_cast<int>(inventory::BpfSyscall(BPF_PROG_LOAD, &attr, sizeof(attr))));
}

// Attaches `program` to the tcx hook `attach_type` (inventory::kBpfTcxIngress
// or kBpfTcxEgress) of `ifindex` in the calling thread's namespace without a
// bpf_link (BPF_PROG_ATTACH): it stays until detached. Returns 0 or an errno.
inline int AttachTcxProgram(const inventory::BpfObjectFd& program, unsigned ifindex, uint32_t attach_type) {
  union bpf_attr attach {};
  attach.target_fd = ifindex;
  attach.attach_bpf_fd = static_cast<uint32_t>(program.get());
  attach.attach_type = attach_type;
  return inventory::BpfSyscall(BPF_PROG_ATTACH, &attach, sizeof(attach)) < 0 ? errno : 0;
}

}  // namespace dranet::testing
