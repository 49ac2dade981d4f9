// SPDX-License-Identifier: Apache-2.0
// Trace strings made safe to print: a kernel, range or command name is whatever the traced
// program said it was, and a terminal acts on control sequences (ESC [ ... clears the screen,
// OSC 52 writes the clipboard, OSC 0 sets the title, BEL rings).
#pragma once

#include <string>
#include <string_view>

namespace cuclimb::util {

// Escapes what a terminal would act on or misrender, so that it shows as text: C0 controls
// (\x1b, \x07, ...; '\n' and '\t' too unless keep_newlines), DEL, C1 controls (U+0080-U+009F
// as \u009b), bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069, as \u202e)
// and bytes that are not UTF-8 (as \xff). Everything else, including all other UTF-8, is kept.
// keep_newlines is for whole reports, whose lines are their structure; single strings (a name
// on a line of its own) escape '\n' so that they cannot fake a line of the report.
std::string TerminalSafe(std::string_view text, bool keep_newlines = false);

}  // namespace cuclimb::util
