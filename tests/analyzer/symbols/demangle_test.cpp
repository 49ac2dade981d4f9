// SPDX-License-Identifier: Apache-2.0
// C++ and Rust (legacy, v0) demangling.
#include "symbols/demangle.h"

#include <gtest/gtest.h>

#include "symbols/symbolizer.h"

namespace cuclimb::analysis {
namespace {

TEST(Demangle, Cxx) {
  EXPECT_EQ(Demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back(int const&)");
  EXPECT_EQ(Demangle("main"), "main");
  EXPECT_EQ(Demangle("_Znotmangled"), "_Znotmangled");
}

TEST(Demangle, RustLegacy) {
  EXPECT_EQ(Demangle("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
  EXPECT_EQ(
      Demangle("_ZN49_$LT$mycrate..Foo$u20$as$u20$core..fmt..Debug$GT$3fmt17h0123456789abcdefE"),
      "<mycrate::Foo as core::fmt::Debug>::fmt");
}

TEST(Demangle, RustV0Paths) {
  EXPECT_EQ(Demangle("_RNvC7mycrate3foo"), "mycrate::foo");
  EXPECT_EQ(Demangle("_RNvCs1234_7mycrate3foo"), "mycrate::foo");
  EXPECT_EQ(Demangle("_RNvNtC7mycrate3bar3baz"), "mycrate::bar::baz");
  EXPECT_EQ(Demangle("_RNCNvC7mycrate3foo0"), "mycrate::foo::{closure#0}");
  EXPECT_EQ(Demangle("_RNvC7mycrate3foo.llvm.123"), "mycrate::foo");
}

TEST(Demangle, RustV0ImplsGenericsBackrefs) {
  EXPECT_EQ(Demangle("_RNvMNtC7mycrate3fooNtB4_3Bar3new"), "<mycrate::Bar>::new");
  EXPECT_EQ(Demangle("_RNvXC7mycrateNtB2_3FooNtNtC4core3fmt7Display3fmt"),
            "<mycrate::Foo as core::fmt::Display>::fmt");
  EXPECT_EQ(Demangle("_RINvC7mycrate3fooyE"), "mycrate::foo::<u64>");
  EXPECT_EQ(Demangle("_RINvC7mycrate3fooRShTlbEE"), "mycrate::foo::<&[u8], (i32, bool)>");
  EXPECT_EQ(Demangle("_RINvC7mycrate3fooKj5_E"), "mycrate::foo::<5>");
}

// Symbols of a small program built with rustc 1.95 (-C symbol-mangling-version=v0 and legacy).
TEST(Demangle, RustcOutput) {
  EXPECT_EQ(Demangle("_RINvMCskgAsBSHsNBC_5leakyNtB3_7Trainer4stepmEB3_"),
            "<leaky::Trainer>::step::<u32>");
  EXPECT_EQ(Demangle("_RNvXs_CskgAsBSHsNBC_5leakyNtB4_7TrainerNtB4_5Alloc4grab"),
            "<leaky::Trainer as leaky::Alloc>::grab");
  EXPECT_EQ(Demangle("_RNSNvYNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0INtNtNtCsgEmfK2I1SDS_4core3"
                     "ops8function6FnOnceuE9call_once6vtableCskgAsBSHsNBC_5leaky"),
            "<std::rt::lang_start<()>::{closure#0} as core::ops::function::FnOnce<()>>::call_once::"
            "{shim:vtable#0}");
  EXPECT_EQ(Demangle("_RNvCskgAsBSHsNBC_5leaky4main"), "leaky::main");
  EXPECT_EQ(Demangle("_ZN5leaky7Trainer4step17h661ee895503fcaf7E"), "leaky::Trainer::step");
  EXPECT_EQ(
      Demangle("_ZN47_$LT$leaky..Trainer$u20$as$u20$leaky..Alloc$GT$4grab17he78b7c8d1d59dabdE"),
      "<leaky::Trainer as leaky::Alloc>::grab");
  EXPECT_EQ(Demangle("_ZN4core3ptr35drop_in_place$LT$leaky..Trainer$GT$17h8ebc4f5e45183083E"),
            "core::ptr::drop_in_place<leaky::Trainer>");
}

TEST(Demangle, CxxClonesAndNonNames) {
  EXPECT_EQ(Demangle("_ZN7cuclimb9workloads7Trainer4StepEv.cold"),
            "cuclimb::workloads::Trainer::Step() [clone .cold]");
  EXPECT_EQ(Demangle(""), "");
  EXPECT_EQ(Demangle("_Z"), "_Z");
  EXPECT_EQ(Demangle("_R"), "_R");
}

TEST(Demangle, RustV0Garbage) {
  EXPECT_EQ(Demangle("_RNvC"), "_RNvC");
  EXPECT_EQ(Demangle("_RB0_"), "_RB0_");  // a back-reference to itself
  EXPECT_EQ(Demangle("_RNvC999x"), "_RNvC999x");
  std::string deep = "_R";
  for (int i = 0; i < 1000; ++i) deep += "Nv";
  EXPECT_EQ(Demangle(deep), deep);  // bounded recursion
}

TEST(ShortFunctionName, KeepsTheLastTwoComponents) {
  EXPECT_EQ(ShortFunctionName("cubecl_runtime::memory_management::MemoryManagement::reserve"),
            "MemoryManagement::reserve");
  EXPECT_EQ(ShortFunctionName("ns::Pool<std::vector<int>>::Take(unsigned long) const"),
            "Pool<std::vector<int>>::Take");
  EXPECT_EQ(ShortFunctionName("main"), "main");
  EXPECT_EQ(ShortFunctionName("<leaky::model::Trainer>::step::<u32>"), "Trainer::step");
  EXPECT_EQ(ShortFunctionName("leaky::model::Trainer::step"), "Trainer::step");
  EXPECT_EQ(ShortFunctionName("<leaky::Trainer as leaky::Alloc>::grab"),
            "<leaky::Trainer as leaky::Alloc>::grab");
  EXPECT_EQ(ShortFunctionName("mycrate::foo::<&[u8], (i32, bool)>"), "mycrate::foo");
  EXPECT_EQ(ShortFunctionName("std::vector<int, std::allocator<int> >"),
            "std::vector<int, std::allocator<int> >");
  EXPECT_EQ(ShortFunctionName("operator<"), "operator<");
  EXPECT_EQ(ShortFunctionName("<svg onload=\"x()\">::alloc"), "<svg onload=\"x()\">::alloc")
      << "only Rust type paths lose their brackets";
}

}  // namespace
}  // namespace cuclimb::analysis
