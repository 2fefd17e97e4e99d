// The kernel registry: ISA names, the implementation policy, and the choice
// rule of a kernel list (first runnable kernel that does not decline).
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

#include "ops/kernel_list.hpp"
#include "test_util.hpp"

namespace npukit {
namespace test_kernels {
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

// The level NPUKIT_MAX_ISA leaves this process (the host's without it).
Isa process_ceiling() {
  const char* env = std::getenv("NPUKIT_MAX_ISA");
  const Isa cap = env != nullptr && *env != '\0' ? isa_from_name(env) : Isa::avx512_vnni;
  return std::min(cap, host_isa());
}

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

TEST(Kernels, MaxIsaNeverExceedsTheHostOrTheEnvironmentsCap) {
  test::SettingsRestore restore;
  set_max_isa(Isa::avx512_vnni);
  EXPECT_EQ(max_isa(), process_ceiling());
  set_max_isa(Isa::portable);
  EXPECT_EQ(max_isa(), Isa::portable);
}

TEST(Kernels, ChoosesTheFirstKernelThatAccepts) {
  test::SettingsRestore restore;
  set_impl(Impl::fast);
  set_max_isa(Isa::avx512_vnni);
  const bool has_avx512 = process_ceiling() >= Isa::avx512;
  EXPECT_EQ(run_toy(12), has_avx512 ? "avx512" : "portable");
  EXPECT_EQ(run_toy(4), "portable");   // the avx512 kernel declines
  EXPECT_EQ(run_toy(3), "reference");  // both fast kernels decline
  set_max_isa(Isa::avx2);
  EXPECT_EQ(run_toy(12), "portable");  // capped below avx512
}

TEST(Kernels, ReferencePolicyRunsOnlyTheSpecification) {
  test::SettingsRestore restore;
  set_impl(Impl::reference);
  EXPECT_EQ(run_toy(12), "reference");
  EXPECT_EQ(run_toy(4), "reference");
  for (const auto& v : toy_kernels().variants)
    EXPECT_EQ(KernelList<ToyProblem>::runnable(v), v.reference) << v.name;
}

// A variant may run when the settings allow its level: tests that iterate a
// list (KernelList::runnable) follow the cap exactly as dispatch does.
TEST(Kernels, RunnableFollowsTheCapAtEveryLevel) {
  test::SettingsRestore restore;
  set_impl(Impl::fast);
  for (Isa cap : {Isa::portable, Isa::avx2, Isa::avx512, Isa::avx512_vnni}) {
    set_max_isa(cap);
    for (const auto& v : toy_kernels().variants)
      EXPECT_EQ(KernelList<ToyProblem>::runnable(v),
                v.reference || v.isa <= std::min(cap, process_ceiling()))
          << v.name << " under cap " << isa_name(cap);
  }
}

// The shared guard gives back the level, policy and thread count it found,
// not the host's level, so a capped run stays capped for later tests.
TEST(Kernels, SettingsRestoreGivesBackWhatItFound) {
  test::SettingsRestore outer;
  set_max_isa(Isa::portable);
  set_impl(Impl::reference);
  set_num_threads(2);
  {
    test::SettingsRestore inner;
    set_max_isa(Isa::avx512_vnni);
    set_impl(Impl::fast);
    set_num_threads(3);
  }
  EXPECT_EQ(max_isa(), Isa::portable);
  EXPECT_EQ(impl(), Impl::reference);
  EXPECT_EQ(num_threads(), 2);
}

// NPUKIT_MAX_ISA is a ceiling that set_max_isa cannot lift. Under the
// variable the test checks it in this process; without it, it runs itself
// again under NPUKIT_MAX_ISA=portable and reads the child's verdict.
TEST(Kernels, EnvironmentCapIsACeilingForSetMaxIsa) {
  const char* env = std::getenv("NPUKIT_MAX_ISA");
  if (env != nullptr && *env != '\0') {
    test::SettingsRestore restore;
    set_impl(Impl::fast);
    set_max_isa(Isa::avx512_vnni);
    ASSERT_EQ(max_isa(), process_ceiling()) << "NPUKIT_MAX_ISA=" << env;
    for (const auto& v : toy_kernels().variants)
      EXPECT_EQ(KernelList<ToyProblem>::runnable(v), v.reference || v.isa <= process_ceiling())
          << v.name;
    std::printf("ceiling held at %s\n", isa_name(max_isa()));
    return;
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = "NPUKIT_MAX_ISA=portable '" + self +
                              "' --gtest_filter=Kernels.EnvironmentCapIsACeilingForSetMaxIsa 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> child(popen(command.c_str(), "r"), pclose);
  ASSERT_NE(child, nullptr) << command;
  std::string out;
  std::array<char, 256> buf{};
  while (std::fgets(buf.data(), buf.size(), child.get()) != nullptr) out += buf.data();
  EXPECT_NE(out.find("ceiling held at portable"), std::string::npos) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
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
}  // namespace test_kernels
}  // namespace npukit
