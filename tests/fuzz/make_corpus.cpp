// SPDX-License-Identifier: Apache-2.0
// Writes the fuzzer's seed corpus: small binary and JSON Lines traces, cut and bit-flipped
// variants. Run by scripts/make_fuzz_corpus.sh; the output is checked in under corpus/.
#include <cstdio>
#include <fstream>
#include <string>

#include "random_trace.h"

namespace {

void Write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  using cuclimb::testing::RandomTrace;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    auto b = RandomTrace(seed, 40);
    const std::string bin = b.ToBinary(true, seed % 2 ? 3 : 0, 512);
    Write(dir, "random-" + std::to_string(seed) + ".trace", bin);
    Write(dir, "random-" + std::to_string(seed) + ".jsonl", b.ToJsonLines());
    Write(dir, "cut-" + std::to_string(seed) + ".trace", bin.substr(0, bin.size() * 2 / 3));
    std::string flipped = bin;
    flipped[flipped.size() / 2] ^= 0x10;
    Write(dir, "flip-" + std::to_string(seed) + ".trace", flipped);
  }
  cuclimb::testing::TrainingLoopShape shape;
  shape.iterations = 3;
  Write(dir, "training.trace", cuclimb::testing::TrainingLoopTrace(shape).ToBinary(true, 0, 1024));
  return 0;
}
