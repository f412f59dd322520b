// tests/unit/inject/tc_test_programs.bpf.c — classic tc BPF programs that
// inject_bpf_tests attaches with `tc filter add ... bpf da obj <this>.o sec
// <section>`. Built with clang -target bpf when a clang is found.
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

// Lets every packet through.
__attribute__((section("tc"), used)) int pass_all(struct __sk_buff* skb) {
  (void)skb;
  return TC_ACT_OK;
}

// Drops every packet: while attached, nothing leaves the netdev.
__attribute__((section("classifier"), used)) int drop_all(struct __sk_buff* skb) {
  (void)skb;
  return TC_ACT_SHOT;
}

char program_license[] __attribute__((section("license"), used)) = "GPL";
