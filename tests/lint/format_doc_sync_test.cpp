// SPDX-License-Identifier: Apache-2.0
// docs/trace-format.md must list every event type with its fields and every enum with its names
// exactly as the schema in interposer/format/trace_format.h defines them. With --print, prints
// the rows to paste into the document.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "interposer/format/trace_format.h"

namespace {

using namespace cuclimb::format;

const char* CodingName(Coding c) {
  switch (c) {
    case Coding::kTime:
      return "time";
    case Coding::kUInt:
      return "uint";
    case Coding::kSInt:
      return "int";
    case Coding::kHex:
      return "hex";
    case Coding::kDelta:
      return "delta";
    case Coding::kString:
      return "string";
    case Coding::kStack:
      return "stack";
    case Coding::kEnum:
      return "enum";
    case Coding::kDims:
      return "dims";
    case Coding::kDevice:
      return "device";
  }
  return "?";
}

std::vector<std::string> Rows() {
  std::vector<std::string> rows;
  for (int t = 1; t < static_cast<int>(EventType::kCount); ++t) {
    const EventSpec& s = kEventSchema[t];
    std::string row = "| `" + std::string(s.json) + "` | " + std::to_string(t) + " | ";
    for (int i = 0; i < s.field_count; ++i) {
      if (i > 0)
        row += ", ";
      row += "`" + std::string(s.fields[i].json) + "`" + (s.fields[i].always ? "" : "?") + ":" +
             CodingName(s.fields[i].coding);
    }
    rows.push_back(row + " |");
  }
  const std::pair<const char*, EnumKind> enums[] = {{"MemoryKind", EnumKind::kMemory},
                                                    {"HandleType", EnumKind::kHandle},
                                                    {"VmmOp", EnumKind::kVmm},
                                                    {"SyncKind", EnumKind::kSync},
                                                    {"CopyKind", EnumKind::kCopy}};
  for (const auto& [name, kind] : enums) {
    const EnumNames n = NamesOf(kind);
    std::string row = "| " + std::string(name) + " | ";
    for (int i = 0; i < n.count; ++i) {
      if (i > 0)
        row += ", ";
      row += std::to_string(i) + " `" + n.names[i] + "`";
    }
    rows.push_back(row + " |");
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--print") == 0) {
    for (const std::string& r : Rows()) std::printf("%s\n", r.c_str());
    return 0;
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: format_doc_sync_test docs/trace-format.md | --print\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (doc.empty()) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  int missing = 0;
  for (const std::string& r : Rows()) {
    if (doc.find(r + "\n") == std::string::npos) {
      std::fprintf(stderr, "docs out of sync with trace_format.h; missing row:\n%s\n", r.c_str());
      ++missing;
    }
  }
  const std::string version =
      "Format version: " + std::to_string(kFormatMajor) + "." + std::to_string(kFormatMinor);
  if (doc.find(version) == std::string::npos) {
    std::fprintf(stderr, "docs must state \"%s\"\n", version.c_str());
    ++missing;
  }
  return missing == 0 ? 0 : 1;
}
