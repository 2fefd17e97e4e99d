// The kernel registry: ISA names, the implementation policy, and the choice
// rule of a kernel list (first runnable kernel that does not decline).
#include <set>

#include "ops/kernel_list.hpp"
#include "test_util.hpp"

namespace npukit {
namespace {

struct ToyProblem {
  int size;
  mutable std::string ran;
};

const KernelList<ToyProblem>& toy_kernels() {
  static const KernelList<ToyProblem> list{
      "toy",
      {{"toy-big-avx512", Isa::avx512, "size >= 10",
        [](const ToyProblem& p) -> const char* { return p.size >= 10 ? nullptr : "size < 10"; },
        [](const ToyProblem& p) { p.ran = "avx512"; }},
       {"toy-any-portable", Isa::portable, "size is even",
        [](const ToyProblem& p) -> const char* { return p.size % 2 == 0 ? nullptr : "odd size"; },
        [](const ToyProblem& p) { p.ran = "portable"; }},
       {"toy-reference", Isa::portable, "always", nullptr,
        [](const ToyProblem& p) { p.ran = "reference"; }, true}}};
  return list;
}

// Restores the global settings a test changes.
struct SettingsGuard {
  Impl impl_ = impl();
  Isa isa_ = max_isa();
  ~SettingsGuard() {
    set_impl(impl_);
    set_max_isa(Isa::avx512_vnni);
    if (isa_ < host_isa()) set_max_isa(isa_);
  }
};

std::string run_toy(int size) {
  ToyProblem p{size, ""};
  toy_kernels().run(p);
  return p.ran;
}

TEST(Kernels, IsaNamesRoundTrip) {
  for (Isa isa : {Isa::portable, Isa::avx2, Isa::avx512, Isa::avx512_vnni})
    EXPECT_EQ(isa_from_name(isa_name(isa)), isa);
  EXPECT_TRUE(test::raises([] { isa_from_name("sse9"); }, "npukit::isa_from_name", "name", "sse9"));
}

TEST(Kernels, MaxIsaNeverExceedsTheHost) {
  SettingsGuard guard;
  set_max_isa(Isa::avx512_vnni);
  EXPECT_EQ(max_isa(), host_isa());
  set_max_isa(Isa::portable);
  EXPECT_EQ(max_isa(), Isa::portable);
}

TEST(Kernels, ChoosesTheFirstKernelThatAccepts) {
  SettingsGuard guard;
  set_impl(Impl::fast);
  set_max_isa(Isa::avx512_vnni);
  const bool has_avx512 = host_isa() >= Isa::avx512;
  EXPECT_EQ(run_toy(12), has_avx512 ? "avx512" : "portable");
  EXPECT_EQ(run_toy(4), "portable");   // the avx512 kernel declines
  EXPECT_EQ(run_toy(3), "reference");  // both fast kernels decline
  set_max_isa(Isa::avx2);
  EXPECT_EQ(run_toy(12), "portable");  // capped below avx512
}

TEST(Kernels, ReferencePolicyRunsOnlyTheSpecification) {
  SettingsGuard guard;
  set_impl(Impl::reference);
  EXPECT_EQ(run_toy(12), "reference");
  EXPECT_EQ(run_toy(4), "reference");
  for (const auto& v : toy_kernels().variants)
    EXPECT_EQ(KernelList<ToyProblem>::runnable(v), v.reference) << v.name;
}

// Every registered family lists its kernels best first and ends with exactly
// one reference kernel, which is what the dispatch falls back on.
TEST(Kernels, EveryFamilyEndsWithItsReference) {
  const auto all = list_kernels();
  std::set<std::string> families, names;
  for (size_t i = 0; i < all.size(); ++i) {
    families.insert(all[i].family);
    EXPECT_TRUE(names.insert(all[i].name).second) << "duplicate kernel name " << all[i].name;
    const bool last_of_family = i + 1 == all.size() || all[i + 1].family != all[i].family;
    EXPECT_EQ(all[i].reference, last_of_family) << all[i].family << " / " << all[i].name;
    EXPECT_FALSE(all[i].applies.empty()) << all[i].name;
  }
  for (const auto& f : families) {
    size_t runs = 0;  // a family's kernels are listed together
    for (size_t i = 0; i < all.size(); ++i)
      runs += all[i].family == f && (i == 0 || all[i - 1].family != f);
    EXPECT_EQ(runs, 1u) << f;
  }
}

}  // namespace
}  // namespace npukit
