// SPDX-License-Identifier: Apache-2.0
// Frame classes from the built-in table and --frames-internal patterns; Python frame decoding;
// call-site labels that merge stacks differing only inside framework frames.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interposer/format/trace_format.h"
#include "symbols/frame.h"
#include "symbols/frame_classifier.h"
#include "symbols/symbolizer.h"

namespace cuclimb::analysis {
namespace {

Frame Native(std::string function, std::string module = "", std::string path = "") {
  Frame f;
  f.function = std::move(function);
  f.module = std::move(module);
  f.module_path = path.empty() ? "/opt/lib/" + f.module : std::move(path);
  f.symbolized = true;
  return f;
}

Frame Unsymbolized(std::string module, std::string path) {
  Frame f = Native(module + "+0x1234", module, std::move(path));
  f.symbolized = false;
  return f;
}

Frame Python(std::string_view text) {
  Frame f;
  EXPECT_TRUE(ParsePythonFrame(text, &f)) << text;
  return f;
}

FrameClass Classify(const Frame& f) {
  return FrameClassifier::Builtin().Classify(f);
}

TEST(FrameClasses, BuiltinTableParses) {
  auto c = FrameClassifier::Create();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_GT(c->rule_count(), 100u);
  EXPECT_EQ(c->rule_count(), FrameClassifier::Builtin().rule_count());
}

TEST(FrameClasses, CudaRuntimeDriverCuptiAndCuclimb) {
  EXPECT_EQ(Classify(Unsymbolized("libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so.13")),
            FrameClass::kCuda);
  EXPECT_EQ(Classify(Native("cuMemAllocAsync", "libcuda.so.1")), FrameClass::kCuda);
  EXPECT_EQ(Classify(Native("cudaMallocAsync", "python3.11")), FrameClass::kCuda)
      << "static cudart inside another module is matched by symbol";
  EXPECT_EQ(Classify(Native("cudart::cudaApiMallocAsync", "cuclimb-adam")), FrameClass::kCuda);
  EXPECT_EQ(Classify(Native("nvtxRangePushA", "libtorch_cuda.so")), FrameClass::kCuda);
  EXPECT_EQ(Classify(Native("cuclimb::interposer::OnCallback", "libcuclimb.so")),
            FrameClass::kCuda);
  EXPECT_EQ(Classify(Native("cuclimb::workloads::Trainer::Step", "cuclimb-adam")),
            FrameClass::kUser)
      << "cuclimb's own workloads are a user program";
}

TEST(FrameClasses, FrameworksByModuleAndBySymbol) {
  EXPECT_EQ(
      Classify(Native("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc",
                      "libc10_cuda.so")),
      FrameClass::kFramework);
  EXPECT_EQ(Classify(Unsymbolized("libtorch_cuda.so",
                                  "/venv/lib/python3.11/site-packages/torch/"
                                  "lib/libtorch_cuda.so")),
            FrameClass::kFramework);
  EXPECT_EQ(Classify(Unsymbolized("_C.cpython-311-x86_64-linux-gnu.so",
                                  "/venv/lib/python3.11/site-packages/torch/"
                                  "_C.cpython-311-x86_64-linux-gnu.so")),
            FrameClass::kFramework)
      << "torch's extension module, by path";
  EXPECT_EQ(Classify(Unsymbolized("memory.cpython-311-x86_64-linux-gnu.so",
                                  "/usr/lib/python3/dist-packages/cupy/cuda/"
                                  "memory.cpython-311-x86_64-linux-gnu.so")),
            FrameClass::kFramework);
  EXPECT_EQ(Classify(Native("xla::gpu::GpuExecutable::ExecuteAsyncOnStream", "xla_extension.so")),
            FrameClass::kFramework);
  // Statically linked Rust runtimes are known by their symbols.
  EXPECT_EQ(
      Classify(Native("cubecl_runtime::memory_management::MemoryManagement::reserve", "trainer")),
      FrameClass::kFramework);
  EXPECT_EQ(Classify(Native("<cubecl_cuda::compute::server::CudaServer as "
                            "cubecl_runtime::server::ComputeServer>::create",
                            "trainer")),
            FrameClass::kFramework);
  EXPECT_EQ(Classify(Native("cudarc::driver::safe::core::CudaDevice::alloc", "trainer")),
            FrameClass::kFramework);
  EXPECT_EQ(Classify(Native("cublasLtMatmul", "libcublasLt.so.13")), FrameClass::kFramework);
  EXPECT_EQ(Classify(Native("ncclAllReduce", "libnccl.so.2")), FrameClass::kFramework);
  EXPECT_EQ(Classify(Native("trainer::model::Mlp::forward", "trainer")), FrameClass::kUser);
  EXPECT_EQ(Classify(Unsymbolized("__triton_launcher.so",
                                  "/root/.triton/cache/ab12/__triton_launcher.so")),
            FrameClass::kFramework);
  EXPECT_EQ(Classify(Python("py:call@/tmp/torchinductor_root/xy/cxyz.py:120")),
            FrameClass::kFramework);
}

TEST(FrameClasses, RuntimesAndInterpreter) {
  EXPECT_EQ(Classify(Native("__libc_start_call_main", "libc.so.6")), FrameClass::kSystem);
  EXPECT_EQ(Classify(Native("operator new(unsigned long)", "libstdc++.so.6")), FrameClass::kSystem);
  EXPECT_EQ(Classify(Native("std::vector<int, std::allocator<int> >::_M_realloc_insert", "app")),
            FrameClass::kSystem);
  EXPECT_EQ(Classify(Native("<alloc::vec::Vec<u8>>::push", "trainer")), FrameClass::kSystem);
  EXPECT_EQ(Classify(Native("std::rt::lang_start_internal", "trainer")), FrameClass::kSystem);
  EXPECT_EQ(Classify(Native("_PyEval_EvalFrameDefault", "python3.11", "/usr/bin/python3.11")),
            FrameClass::kPython);
  EXPECT_EQ(Classify(Unsymbolized("libpython3.12.so.1.0", "/opt/conda/lib/libpython3.12.so.1.0")),
            FrameClass::kPython);
  EXPECT_EQ(Classify(Native("method_vectorcall_O", "python3.11", "/usr/bin/python3.11")),
            FrameClass::kPython)
      << "the interpreter's static functions, by module";
  Frame raw;
  raw.function = "0x7f0012345678";
  EXPECT_EQ(Classify(raw), FrameClass::kUnknown);
  raw.frame_class = FrameClass::kUnknown;
  EXPECT_TRUE(IsInternalFrame(raw));
  EXPECT_FALSE(IsInternalFrame(Frame()));
}

TEST(FrameClasses, PythonFramesByFile) {
  EXPECT_EQ(Classify(Python("py:Module._call_impl@/venv/lib/python3.11/site-packages/torch/nn/"
                            "modules/module.py:1527")),
            FrameClass::kFramework);
  EXPECT_EQ(Classify(Python("py:_new_array@/usr/lib/python3/dist-packages/cupy/_creation/"
                            "basic.py:30")),
            FrameClass::kFramework);
  EXPECT_EQ(Classify(Python("py:cache_miss@/venv/lib/python3.12/site-packages/jax/_src/pjit.py:"
                            "250")),
            FrameClass::kFramework);
  EXPECT_EQ(Classify(Python("py:_call_with_frames_removed@<frozen importlib._bootstrap>:241")),
            FrameClass::kPython);
  EXPECT_EQ(Classify(Python("py:wrapper@/usr/lib/python3.11/functools.py:55")),
            FrameClass::kPython);
  EXPECT_EQ(Classify(Python("py:train@train.py:42")), FrameClass::kUser);
  EXPECT_EQ(Classify(Python("py:Trainer.fit@/home/me/proj/trainer.py:88")), FrameClass::kUser);
  EXPECT_EQ(Classify(Python("py:Accelerator.backward@/venv/lib/python3.11/site-packages/"
                            "accelerate/accelerator.py:1900")),
            FrameClass::kUser)
      << "packages outside the table are the user's, not the standard library";
  // No built-in symbol rule applies to a Python function that happens to look like one.
  EXPECT_EQ(Classify(Python("py:PyTorchModule.clone@model.py:3")), FrameClass::kUser);
  EXPECT_EQ(Classify(Python("py:cuSolve@model.py:9")), FrameClass::kUser);
}

TEST(FrameClasses, UserPatternsComeFirst) {
  auto c = FrameClassifier::Create(
      {"mylib::*", "file:*/mypkg/*", "module:libmine.so", "function:helpers.make_buffer", "main"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->Classify(Native("mylib::Pool::grab", "app")), FrameClass::kFramework);
  EXPECT_EQ(c->Classify(Python("py:alloc@/src/mypkg/buffers.py:7")), FrameClass::kFramework);
  EXPECT_EQ(c->Classify(Native("grab", "libmine.so")), FrameClass::kFramework);
  EXPECT_EQ(c->Classify(Python("py:helpers.make_buffer@util.py:3")), FrameClass::kFramework);
  EXPECT_EQ(c->Classify(Native("main", "app")), FrameClass::kFramework);
  EXPECT_EQ(c->Classify(Native("other::f", "app")), FrameClass::kUser);
  // A user pattern may reclassify what the table calls user code, e.g. a third-party package.
  auto hf = FrameClassifier::Create({"*/site-packages/transformers/*"});
  ASSERT_TRUE(hf.ok());
  EXPECT_EQ(hf->Classify(Python("py:Trainer.training_step@/v/lib/python3.11/site-packages/"
                                "transformers/trainer.py:3000")),
            FrameClass::kFramework);
}

TEST(FrameClasses, BadPatternsAndTablesAreRefused) {
  EXPECT_FALSE(FrameClassifier::Create({""}).ok());
  EXPECT_FALSE(FrameClassifier::Create({"module:"}).ok());
  auto bad_class = FrameClassifier::FromTable("cuda module:libcuda*\nkernel symbol:x\n");
  ASSERT_FALSE(bad_class.ok());
  EXPECT_NE(bad_class.status().message().find("line 2"), std::string::npos) << bad_class.status();
  EXPECT_FALSE(FrameClassifier::FromTable("framework\n").ok());
  EXPECT_FALSE(FrameClassifier::FromTable("unknown module:x\n").ok());
  auto ok = FrameClassifier::FromTable("# comment\n\n  system   symbol:abort  \n");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->rule_count(), 1u);
}

TEST(PythonFrames, Parse) {
  Frame f;
  ASSERT_TRUE(ParsePythonFrame("py:Trainer.step@/home/u/train.py:17", &f));
  EXPECT_TRUE(f.python);
  EXPECT_EQ(f.function, "Trainer.step");
  EXPECT_EQ(f.file, "/home/u/train.py");
  EXPECT_EQ(f.line, 17);
  EXPECT_EQ(FormatFrame(f), "Trainer.step (/home/u/train.py:17)");
  EXPECT_EQ(FrameLabel(f), "Trainer.step (train.py:17)");
  ASSERT_TRUE(ParsePythonFrame("py:<lambda>@/tmp/a@b/x.py:3", &f));
  EXPECT_EQ(f.function, "<lambda>");
  EXPECT_EQ(f.file, "/tmp/a@b/x.py") << "an '@' in the path";
  ASSERT_TRUE(ParsePythonFrame("py:<module>@<frozen runpy>", &f));
  EXPECT_EQ(f.file, "<frozen runpy>");
  EXPECT_EQ(f.line, 0);
  EXPECT_EQ(FrameLabel(f), "<module>");
  ASSERT_TRUE(ParsePythonFrame("py:f@C:\\x.py:9", &f));
  EXPECT_EQ(f.file, "C:\\x.py");
  EXPECT_FALSE(ParsePythonFrame("cudaMalloc", &f));
  EXPECT_FALSE(ParsePythonFrame("py:", &f));
  EXPECT_FALSE(ParsePythonFrame("py:@x.py:3", &f));
  EXPECT_FALSE(ParsePythonFrame("py:nofile", &f));
}

TEST(FrameForms, NativeAndUnsymbolized) {
  Frame f = Native("ns::Pool<std::vector<int> >::Take(unsigned long) const", "app");
  f.file = "/src/pool.h";
  f.line = 12;
  f.inlined = true;
  EXPECT_EQ(FormatFrame(f),
            "ns::Pool<std::vector<int> >::Take(unsigned long) const (/src/pool.h:12) "
            "[inlined]");
  EXPECT_EQ(FrameLabel(f), "Pool<std::vector<int> >::Take (pool.h:12)");
  Frame u = Unsymbolized("libfoo.so", "/opt/libfoo.so");
  u.missing = "file missing";
  EXPECT_EQ(FormatFrame(u), "libfoo.so+0x1234 [file missing]");
  EXPECT_EQ(FrameLabel(u), "libfoo.so+0x1234");
}

// Stacks as the interposer records them: innermost first, string frames here.
class SiteLabels : public ::testing::Test {
 protected:
  uint64_t F(std::string_view text) { return format::StringFrame(strings_.Intern(text)); }
  std::string Label(std::initializer_list<std::string_view> frames) {
    std::vector<uint64_t> stack;
    for (std::string_view f : frames) stack.push_back(F(f));
    return symbolizer_.SiteLabel(stack, strings_);
  }
  trace::StringTable strings_;
  Symbolizer symbolizer_;
};

TEST_F(SiteLabels, PyTorchAllocatorPathsMergeAtTheUsersLine) {
  // Three cudaMallocAsync paths through the allocator, as seen on the H200 (stacks 29, 42, 48).
  const std::string a = Label({
      "cudaMallocAsync",
      "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous namespace)::mallocAsync",
      "c10::cuda::CUDACachingAllocator::CudaMallocAsync::CudaMallocAsyncAllocator::allocate",
      "at::native::empty_cuda",
      "at::_ops::empty_memory_format::call",
      "_PyEval_EvalFrameDefault",
      "py:Module._call_impl@/v/lib/python3.11/site-packages/torch/nn/modules/module.py:1527",
      "py:train_step@/home/u/train.py:31",
      "py:main@/home/u/train.py:60",
      "py:<module>@/home/u/train.py:64",
      "Py_RunMain",
      "__libc_start_call_main",
  });
  const std::string b = Label({
      "cudaMallocAsync",
      "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous namespace)::mallocAsync",
      "c10::cuda::CUDACachingAllocator::CudaMallocAsync::CudaMallocAsyncAllocator::raw_alloc",
      "at::native::(anonymous namespace)::addmm_out_cuda_impl",
      "torch::autograd::VariableType::(anonymous namespace)::addmm",
      "py:Linear.forward@/v/lib/python3.11/site-packages/torch/nn/modules/linear.py:116",
      "py:Module._call_impl@/v/lib/python3.11/site-packages/torch/nn/modules/module.py:1527",
      "_PyEval_EvalFrameDefault",
      "py:train_step@/home/u/train.py:31",
      "py:main@/home/u/train.py:60",
  });
  const std::string c = Label({
      "cuMemAllocAsync",
      "cudart::cudaApiMallocAsync",
      "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous namespace)::mallocAsync",
      "py:train_step@/home/u/train.py:31",
      "py:main@/home/u/train.py:60",
  });
  EXPECT_EQ(a, "train_step (train.py:31) <- main (train.py:60)");
  EXPECT_EQ(b, a);
  EXPECT_EQ(c, a);
  // Another line of the user's code is another site.
  EXPECT_NE(Label({"cudaMallocAsync", "c10::cuda::CUDACachingAllocator::Native::malloc",
                   "py:train_step@/home/u/train.py:35", "py:main@/home/u/train.py:60"}),
            a);
}

TEST_F(SiteLabels, RustAndNativePrograms) {
  EXPECT_EQ(Label({"cuMemAllocAsync", "cudarc::driver::result::malloc_async",
                   "<cubecl_cuda::compute::storage::gpu::GpuStorage as "
                   "cubecl_runtime::storage::base::ComputeStorage>::alloc",
                   "cubecl_runtime::memory_management::MemoryManagement::reserve",
                   "burn_optim::adam::Adam::step", "trainer::train_loop", "trainer::main",
                   "std::rt::lang_start_internal", "main", "__libc_start_call_main"}),
            "trainer::train_loop <- trainer::main");
  // No user frame at all (a cut stack): the two outermost framework frames, nearest the user.
  EXPECT_EQ(Label({"cudaMallocAsync",
                   "c10::cuda::CUDACachingAllocator::CudaMallocAsync::(anonymous "
                   "namespace)::mallocAsync",
                   "c10::cuda::CUDACachingAllocator::CudaMallocAsync::CudaMallocAsyncAllocator::"
                   "allocate",
                   "at::native::empty_cuda", "at::_ops::empty_memory_format::call",
                   "at::native::addmm_out_cuda_impl", "at::_ops::addmm::call"}),
            "native::addmm_out_cuda_impl <- addmm::call");
  // Only runtimes: the first two frames outside CUDA.
  EXPECT_EQ(Label({"cuMemHostAlloc", "__libc_malloc", "start_thread", "clone3"}),
            "__libc_malloc <- start_thread");
  EXPECT_EQ(Label({"cuMemAllocAsync", "cuclimb_hook",
                   "cubecl_runtime::memory_management::MemoryManagement::reserve",
                   "burn_optim::adam::Adam::step"}),
            "MemoryManagement::reserve <- Adam::step");
  EXPECT_EQ(Label({"cudaMalloc"}), "cudaMalloc");
  EXPECT_EQ(Label({}), "");
  EXPECT_EQ(Label({"cuMemAlloc_v2", "app::Pool::grow", "operator new(unsigned long)",
                   "app::Model::build", "main"}),
            "Pool::grow <- Model::build")
      << "the caller is the next user frame, past internal ones";
}

TEST_F(SiteLabels, FramesInternalMovesTheLabelOut) {
  auto c = FrameClassifier::Create({"app::Pool::*"});
  ASSERT_TRUE(c.ok());
  Symbolizer s({}, std::move(*c));
  std::vector<uint64_t> stack = {F("cuMemAlloc_v2"), F("app::Pool::grow"), F("app::Model::build"),
                                 F("main")};
  EXPECT_EQ(s.SiteLabel(stack, strings_), "Model::build <- main");
  EXPECT_EQ(symbolizer_.SiteLabel(stack, strings_), "Pool::grow <- Model::build");
}

}  // namespace
}  // namespace cuclimb::analysis
