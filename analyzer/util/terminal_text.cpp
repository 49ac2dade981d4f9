// SPDX-License-Identifier: Apache-2.0
// Escaping trace strings for the terminal (terminal_text.h).
#include "util/terminal_text.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace cuclimb::util {
namespace {

// Length of the valid UTF-8 sequence at s[i] and its code point; 0 when it is not valid.
size_t DecodeUtf8(std::string_view s, size_t i, uint32_t* cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t len = 0;
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  if ((b0 & 0xe0) == 0xc0) {
    len = 2;
    *cp = b0 & 0x1f;
  } else if ((b0 & 0xf0) == 0xe0) {
    len = 3;
    *cp = b0 & 0x0f;
  } else if ((b0 & 0xf8) == 0xf0) {
    len = 4;
    *cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size())
    return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80)
      return 0;
    *cp = (*cp << 6) | (b & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (*cp < kMin[len] || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
    return 0;
  return len;
}

bool Escaped(uint32_t cp, bool keep_newlines) {
  if (cp == '\n' || cp == '\t')
    return !keep_newlines;
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string TerminalSafe(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(text, i, &cp);
    if (len == 0) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (Escaped(cp, keep_newlines)) {
      if (cp < 0x80)
        absl::StrAppendFormat(&out, "\\x%02x", cp);
      else
        absl::StrAppendFormat(&out, "\\u%04x", cp);
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace cuclimb::util
