// SPDX-License-Identifier: Apache-2.0
// C++ names go through abi::__cxa_demangle; Rust v0 follows RFC 2603 (a recursive-descent parser
// with back-references); Rust legacy names are Itanium names with a hash and $-escapes.
#include "symbols/demangle.h"

#include <cstdlib>
#include <memory>

#include <cxxabi.h>

#include "absl/strings/str_cat.h"

namespace cuclimb::analysis {
namespace {

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// "a::b::h0123456789abcdef" → "a::b"; also undoes the legacy $-escapes.
std::string CleanRustLegacy(std::string s) {
  if (s.size() > 19 && s.compare(s.size() - 19, 3, "::h") == 0) {
    bool hash = true;
    for (size_t i = s.size() - 16; i < s.size(); ++i) hash &= IsHex(s[i]);
    if (hash)
      s.resize(s.size() - 19);
  }
  static constexpr std::pair<std::string_view, std::string_view> kEscapes[] = {
      {"$SP$", "@"}, {"$BP$", "*"}, {"$RF$", "&"}, {"$LT$", "<"},
      {"$GT$", ">"}, {"$LP$", "("}, {"$RP$", ")"}, {"$C$", ","},
  };
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    // A component that starts with an escape is written "_$...": the "_" is not part of it.
    if (s[i] == '_' && i + 1 < s.size() && s[i + 1] == '$' &&
        (out.empty() || (out.size() >= 2 && out.compare(out.size() - 2, 2, "::") == 0))) {
      ++i;
      continue;
    }
    if (s[i] == '$') {
      bool done = false;
      for (const auto& [from, to] : kEscapes) {
        if (s.compare(i, from.size(), from) == 0) {
          out += to;
          i += from.size();
          done = true;
          break;
        }
      }
      if (done)
        continue;
      if (i + 5 <= s.size() && s[i + 1] == 'u') {  // $u7e$ and friends
        const size_t end = s.find('$', i + 2);
        if (end != std::string::npos && end - i - 2 <= 6) {
          const unsigned long code =
              std::strtoul(s.substr(i + 2, end - i - 2).c_str(), nullptr, 16);
          if (code > 0 && code < 0x80) {
            out += static_cast<char>(code);
            i = end + 1;
            continue;
          }
        }
      }
    }
    if (s[i] == '.' && i + 1 < s.size() && s[i + 1] == '.') {
      out += "::";
      i += 2;
      continue;
    }
    out += s[i++];
  }
  return out;
}

class V0Parser {
 public:
  explicit V0Parser(std::string_view s) : s_(s) {}

  bool Parse(std::string* out) {
    if (s_.substr(0, 2) != "_R")
      return false;
    pos_ = 2;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;  // encoding version
    base_ = 2;
    if (!Path(out))
      return false;
    return true;  // instantiating crate and vendor suffix are not printed
  }

 private:
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }

  bool Base62(uint64_t* v) {
    if (Eat('_')) {
      *v = 0;
      return true;
    }
    uint64_t x = 0;
    while (pos_ < s_.size() && s_[pos_] != '_') {
      const char c = s_[pos_++];
      int d;
      if (c >= '0' && c <= '9')
        d = c - '0';
      else if (c >= 'a' && c <= 'z')
        d = 10 + c - 'a';
      else if (c >= 'A' && c <= 'Z')
        d = 36 + c - 'A';
      else
        return false;
      if (x > (uint64_t{1} << 56))
        return false;
      x = x * 62 + static_cast<uint64_t>(d);
    }
    if (!Eat('_'))
      return false;
    *v = x + 1;
    return true;
  }
  bool Decimal(uint64_t* v) {
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9')
      return false;
    uint64_t x = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      if (x > 1000000)
        return false;
      x = x * 10 + static_cast<uint64_t>(s_[pos_++] - '0');
    }
    *v = x;
    return true;
  }
  bool Disambiguator(uint64_t* v) {
    *v = 0;
    if (Eat('s'))
      return Base62(v);
    return true;
  }
  bool Ident(std::string* name) {
    const bool puny = Eat('u');
    uint64_t len = 0;
    if (!Decimal(&len))
      return false;
    Eat('_');
    if (pos_ + len > s_.size())
      return false;
    std::string_view bytes = s_.substr(pos_, len);
    pos_ += len;
    *name = puny ? absl::StrCat("punycode{", std::string(bytes), "}") : std::string(bytes);
    return true;
  }
  bool Guard() { return ++depth_ < 200; }

  // A back-reference: parse what is at base_ + offset, then come back.
  template <typename F>
  bool BackRef(std::string* out, F parse) {
    uint64_t off = 0;
    if (!Base62(&off))
      return false;
    const size_t target = base_ + off;
    if (target >= pos_ - 1)
      return false;  // must point backwards
    const size_t saved = pos_;
    pos_ = target;
    const bool ok = (this->*parse)(out);
    pos_ = saved;
    return ok;
  }

  bool Path(std::string* out) {
    if (!Guard())
      return false;
    const char tag = Peek();
    ++pos_;
    uint64_t dis = 0;
    switch (tag) {
      case 'C': {
        std::string name;
        if (!Disambiguator(&dis) || !Ident(&name))
          return false;
        *out += name;
        return true;
      }
      case 'M': {
        std::string ignored;
        if (!Disambiguator(&dis) || !Path(&ignored))
          return false;
        *out += '<';
        if (!Type(out))
          return false;
        *out += '>';
        return true;
      }
      case 'X': {
        std::string ignored;
        if (!Disambiguator(&dis) || !Path(&ignored))
          return false;
        *out += '<';
        if (!Type(out))
          return false;
        *out += " as ";
        if (!Path(out))
          return false;
        *out += '>';
        return true;
      }
      case 'Y': {
        *out += '<';
        if (!Type(out))
          return false;
        *out += " as ";
        if (!Path(out))
          return false;
        *out += '>';
        return true;
      }
      case 'N': {
        const char ns = Peek();
        ++pos_;
        if (!Path(out))
          return false;
        std::string name;
        if (!Disambiguator(&dis) || !Ident(&name))
          return false;
        if (ns >= 'A' && ns <= 'Z') {
          *out += "::{";
          *out += ns == 'C' ? "closure" : ns == 'S' ? "shim" : std::string(1, ns);
          if (!name.empty())
            absl::StrAppend(out, ":", name);
          absl::StrAppend(out, "#", dis, "}");
        } else if (!name.empty()) {
          absl::StrAppend(out, "::", name);
        }
        return true;
      }
      case 'I': {
        if (!Path(out))
          return false;
        *out += '<';
        bool first = true;
        while (!Eat('E')) {
          if (pos_ >= s_.size())
            return false;
          if (!first)
            *out += ", ";
          first = false;
          if (!GenericArg(out))
            return false;
        }
        *out += '>';
        return true;
      }
      case 'B':
        return BackRef(out, &V0Parser::Path);
      default:
        return false;
    }
  }

  bool GenericArg(std::string* out) {
    if (Eat('L')) {
      uint64_t lt = 0;
      if (!Base62(&lt))
        return false;
      *out += "'_";
      return true;
    }
    if (Eat('K'))
      return Const(out);
    return Type(out);
  }

  bool Const(std::string* out) {
    if (!Guard())
      return false;
    if (Eat('p')) {
      *out += '_';
      return true;
    }
    if (Eat('B'))
      return BackRef(out, &V0Parser::Const);
    std::string ty;
    if (!Type(&ty))
      return false;
    const bool neg = Eat('n');
    uint64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] != '_') {
      const char c = s_[pos_++];
      if (!IsHex(c))
        return false;
      v = v * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : 10 + c - 'a');
    }
    if (!Eat('_'))
      return false;
    if (ty == "bool")
      *out += v ? "true" : "false";
    else
      absl::StrAppend(out, neg ? "-" : "", v);
    return true;
  }

  static const char* Basic(char c) {
    switch (c) {
      case 'a':
        return "i8";
      case 'b':
        return "bool";
      case 'c':
        return "char";
      case 'd':
        return "f64";
      case 'e':
        return "str";
      case 'f':
        return "f32";
      case 'h':
        return "u8";
      case 'i':
        return "isize";
      case 'j':
        return "usize";
      case 'l':
        return "i32";
      case 'm':
        return "u32";
      case 'n':
        return "i128";
      case 'o':
        return "u128";
      case 's':
        return "i16";
      case 't':
        return "u16";
      case 'u':
        return "()";
      case 'v':
        return "...";
      case 'x':
        return "i64";
      case 'y':
        return "u64";
      case 'z':
        return "!";
      case 'p':
        return "_";
      default:
        return nullptr;
    }
  }

  bool Binder() {
    uint64_t n = 0;
    if (Eat('G'))
      return Base62(&n);
    return true;
  }

  bool Type(std::string* out) {
    if (!Guard())
      return false;
    const char c = Peek();
    if (const char* b = Basic(c)) {
      ++pos_;
      *out += b;
      return true;
    }
    switch (c) {
      case 'A':
        ++pos_;
        *out += '[';
        if (!Type(out))
          return false;
        *out += "; ";
        if (!Const(out))
          return false;
        *out += ']';
        return true;
      case 'S':
        ++pos_;
        *out += '[';
        if (!Type(out))
          return false;
        *out += ']';
        return true;
      case 'R':
      case 'Q': {
        ++pos_;
        *out += c == 'R' ? "&" : "&mut ";
        uint64_t lt = 0;
        if (Eat('L') && !Base62(&lt))
          return false;
        return Type(out);
      }
      case 'P':
      case 'O':
        ++pos_;
        *out += c == 'P' ? "*const " : "*mut ";
        return Type(out);
      case 'T': {
        ++pos_;
        *out += '(';
        int n = 0;
        while (!Eat('E')) {
          if (pos_ >= s_.size())
            return false;
          if (n++ > 0)
            *out += ", ";
          if (!Type(out))
            return false;
        }
        if (n == 1)
          *out += ',';
        *out += ')';
        return true;
      }
      case 'F': {
        ++pos_;
        if (!Binder())
          return false;
        if (Eat('U'))
          *out += "unsafe ";
        if (Eat('K')) {
          if (Eat('C')) {
            *out += "extern \"C\" ";
          } else {
            std::string abi;
            if (!Ident(&abi))
              return false;
            absl::StrAppend(out, "extern \"", abi, "\" ");
          }
        }
        *out += "fn(";
        int n = 0;
        while (!Eat('E')) {
          if (pos_ >= s_.size())
            return false;
          if (n++ > 0)
            *out += ", ";
          if (!Type(out))
            return false;
        }
        *out += ')';
        std::string ret;
        if (!Type(&ret))
          return false;
        if (ret != "()")
          absl::StrAppend(out, " -> ", ret);
        return true;
      }
      case 'D': {
        ++pos_;
        if (!Binder())
          return false;
        *out += "dyn ";
        int n = 0;
        while (!Eat('E')) {
          if (pos_ >= s_.size())
            return false;
          if (n++ > 0)
            *out += " + ";
          if (!Path(out))
            return false;
          while (Eat('p')) {
            std::string name;
            if (!Ident(&name))
              return false;
            absl::StrAppend(out, "<", name, " = ");
            if (!Type(out))
              return false;
            *out += '>';
          }
        }
        uint64_t lt = 0;
        return Eat('L') && Base62(&lt);
      }
      case 'B':
        ++pos_;
        return BackRef(out, &V0Parser::Type);
      default:
        return Path(out);
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  size_t base_ = 2;
  int depth_ = 0;
};

}  // namespace

bool DemangleRustV0(std::string_view name, std::string* out) {
  // Symbols may carry a ".llvm.NNN" style suffix; it is not part of the mangling.
  const size_t dot = name.find('.');
  std::string tmp;
  V0Parser parser(name.substr(0, dot));
  if (!parser.Parse(&tmp))
    return false;
  *out = std::move(tmp);
  return true;
}

std::string Demangle(std::string_view name) {
  if (name.size() > 2 && name[0] == '_' && name[1] == 'R') {
    std::string out;
    if (DemangleRustV0(name, &out))
      return out;
    return std::string(name);
  }
  if (name.size() > 2 && name[0] == '_' && name[1] == 'Z') {
    const std::string copy(name);
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> d(
        abi::__cxa_demangle(copy.c_str(), nullptr, nullptr, &status), std::free);
    if (status == 0 && d) {
      std::string out(d.get());
      if (copy.compare(0, 3, "_ZN") == 0 && copy.find("17h") != std::string::npos) {
        return CleanRustLegacy(std::move(out));
      }
      return out;
    }
  }
  return std::string(name);
}

}  // namespace cuclimb::analysis
