// The hot lines' hand-written JSON; see json_line.h. Pure.
#include "runtime/kernel/json_line.h"

#include <charconv>
#include <cstring>

#include <nlohmann/json.hpp>

namespace kern::kernel::json_line {
namespace {

// Length of the valid UTF-8 sequence starting at p (its first byte >= 0x80), 0 when invalid:
// the ranges of Unicode's table 3-7 (no overlongs, no surrogates, nothing past U+10FFFF), which
// is what nlohmann's lexer accepts and its serializer's decoder passes through.
size_t utf8_length(const unsigned char* p, const unsigned char* end) {
  auto in = [&](size_t i, unsigned char lo, unsigned char hi) {
    return p + i < end && p[i] >= lo && p[i] <= hi;
  };
  unsigned char c = p[0];
  if (c >= 0xC2 && c <= 0xDF) return in(1, 0x80, 0xBF) ? 2 : 0;
  if (c == 0xE0) return in(1, 0xA0, 0xBF) && in(2, 0x80, 0xBF) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return in(1, 0x80, 0xBF) && in(2, 0x80, 0xBF) ? 3 : 0;
  if (c == 0xED) return in(1, 0x80, 0x9F) && in(2, 0x80, 0xBF) ? 3 : 0;
  if (c == 0xF0) return in(1, 0x90, 0xBF) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return in(1, 0x80, 0xBF) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
  if (c == 0xF4) return in(1, 0x80, 0x8F) && in(2, 0x80, 0xBF) && in(3, 0x80, 0xBF) ? 4 : 0;
  return 0;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Scanner {
 public:
  explicit Scanner(std::string_view t)
      : p_(reinterpret_cast<const unsigned char*>(t.data())), end_(p_ + t.size()) {}

  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool at_end() const { return p_ == end_; }
  bool eat(char c) {
    if (p_ < end_ && *p_ == static_cast<unsigned char>(c)) {
      ++p_;
      return true;
    }
    return false;
  }
  int peek() const { return p_ < end_ ? *p_ : -1; }

  // A string literal (at its opening quote), decoded into `out`.
  bool string(std::string& out) {
    out.clear();
    if (!eat('"')) return false;
    for (;;) {
      const unsigned char* run = p_;
      while (p_ < end_ && *p_ >= 0x20 && *p_ < 0x80 && *p_ != '"' && *p_ != '\\') ++p_;
      out.append(reinterpret_cast<const char*>(run), static_cast<size_t>(p_ - run));
      if (p_ == end_) return false;
      unsigned char c = *p_;
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return false;  // a raw control character: invalid JSON
      if (c >= 0x80) {
        size_t n = utf8_length(p_, end_);
        if (n == 0) return false;
        out.append(reinterpret_cast<const char*>(p_), n);
        p_ += n;
        continue;
      }
      ++p_;  // the backslash
      if (p_ == end_) return false;
      switch (*p_++) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          int cp = hex4();
          if (cp < 0) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a lone low surrogate
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!eat('\\') || !eat('u')) return false;
            int lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(out, static_cast<uint32_t>(cp));
          break;
        }
        default: return false;
      }
    }
  }

  // A number literal (RFC 8259's grammar), copied into `lit`.
  bool number(std::string& lit) {
    const unsigned char* s = p_;
    eat('-');
    if (eat('0')) {
    } else if (digits() == 0) {
      return false;
    }
    if (eat('.') && digits() == 0) return false;
    if (eat('e') || eat('E')) {
      if (!eat('+')) eat('-');
      if (digits() == 0) return false;
    }
    lit.assign(reinterpret_cast<const char*>(s), static_cast<size_t>(p_ - s));
    return true;
  }

  bool word(const char* w) {
    size_t n = std::strlen(w);
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, w, n) != 0) return false;
    p_ += n;
    return true;
  }

  // A scalar value; false on a nested value or invalid JSON.
  bool scalar(Value& v) {
    switch (peek()) {
      case '"': v.kind = Value::Kind::string; return string(v.text);
      case 't': v.kind = Value::Kind::boolean; v.boolean = true; return word("true");
      case 'f': v.kind = Value::Kind::boolean; v.boolean = false; return word("false");
      case 'n': v.kind = Value::Kind::null; return word("null");
      default: v.kind = Value::Kind::number; return number(v.text);
    }
  }

 private:
  int hex4() {
    if (end_ - p_ < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      int h = hex_value(static_cast<char>(p_[i]));
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    p_ += 4;
    return v;
  }
  size_t digits() {
    const unsigned char* s = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return static_cast<size_t>(p_ - s);
  }

  const unsigned char* p_;
  const unsigned char* end_;
};

// A small integer literal (at most 9 digits, no fraction or exponent), as nlohmann's
// get<int>() reads it; false otherwise.
bool small_int(const std::string& lit, int& out) {
  size_t i = lit.size() > 0 && lit[0] == '-' ? 1 : 0;
  size_t n = lit.size() - i;
  if (n == 0 || n > 9) return false;
  int v = 0;
  for (size_t k = i; k < lit.size(); ++k) {
    if (lit[k] < '0' || lit[k] > '9') return false;
    v = v * 10 + (lit[k] - '0');
  }
  out = i ? -v : v;
  return true;
}

bool has_key(const std::vector<Member>& ms, const std::string& k) {
  for (const auto& m : ms)
    if (m.key == k) return true;
  return false;
}

// The results array [{S:S,...},...] at the scanner, rewritten into `out` as nlohmann dumps it.
bool results_array(Scanner& s, std::string& out) {
  out.clear();
  if (!s.eat('[')) return false;
  out += '[';
  s.ws();
  if (s.eat(']')) {
    out += ']';
    return true;
  }
  std::string key, prev, val;
  for (bool first = true;; first = false) {
    if (!first) out += ',';
    s.ws();
    if (!s.eat('{')) return false;
    out += '{';
    s.ws();
    if (!s.eat('}')) {
      prev.clear();
      for (bool f2 = true;; f2 = false) {
        s.ws();
        if (!s.string(key)) return false;
        // nlohmann keeps an object's keys in a std::map: they must come sorted and once each.
        if (!f2 && !(prev < key)) return false;
        s.ws();
        if (!s.eat(':')) return false;
        s.ws();
        if (s.peek() != '"' || !s.string(val)) return false;
        if (!f2) out += ',';
        append_string(out, key);
        out += ':';
        append_string(out, val);
        prev.swap(key);
        s.ws();
        if (s.eat('}')) break;
        if (!s.eat(',')) return false;
      }
    }
    out += '}';
    s.ws();
    if (s.eat(']')) break;
    if (!s.eat(',')) return false;
  }
  out += ']';
  return true;
}

}  // namespace

bool is_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    if (*p < 0x80) {
      ++p;
      continue;
    }
    size_t n = utf8_length(p, end);
    if (n == 0) return false;
    p += n;
  }
  return true;
}

void append_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  size_t start = out.size();
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned char* run = p;
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') ++p;
    out.append(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
    if (p == end) break;
    unsigned char c = *p;
    if (c >= 0x80) {
      size_t n = utf8_length(p, end);
      if (n == 0) {
        // Invalid UTF-8: nlohmann's replacement rules, from nlohmann.
        out.resize(start);
        out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
      }
      out.append(reinterpret_cast<const char*>(p), n);
      p += n;
      continue;
    }
    ++p;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default: {
        char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        out.append(e, 6);
      }
    }
  }
  out += '"';
}

void append_duration_ms(std::string& out, double ms) {
  // What result_line gives, a whole number of microseconds below 10 s, is written from that
  // integer: its digits (trailing zeros dropped, one kept) are the shortest decimal, which is what
  // nlohmann writes (the unit test compares every such value). Anything else is nlohmann's.
  if (ms >= 0 && ms < 10000.0) {
    auto us = static_cast<uint64_t>(ms * 1000.0 + 0.5);
    if (static_cast<double>(us) / 1000.0 == ms) {
      char buf[24];
      char* e = std::to_chars(buf, buf + 16, us / 1000).ptr;
      *e++ = '.';
      unsigned frac = static_cast<unsigned>(us % 1000);
      e[0] = static_cast<char>('0' + frac / 100);
      e[1] = static_cast<char>('0' + frac / 10 % 10);
      e[2] = static_cast<char>('0' + frac % 10);
      int digits = frac % 100 == 0 ? 1 : frac % 10 == 0 ? 2 : 3;
      out.append(buf, static_cast<size_t>(e + digits - buf));
      return;
    }
  }
  out += nlohmann::json(ms).dump();
}

std::optional<std::vector<Member>> parse_flat_object(std::string_view text) {
  Scanner s(text);
  std::vector<Member> ms;
  ms.reserve(4);  // a request has two to four members
  s.ws();
  if (!s.eat('{')) return std::nullopt;
  s.ws();
  if (!s.eat('}')) {
    for (;;) {
      s.ws();
      Member m;
      if (!s.string(m.key)) return std::nullopt;
      if (has_key(ms, m.key)) return std::nullopt;  // nlohmann keeps the last; leave it to it
      s.ws();
      if (!s.eat(':')) return std::nullopt;
      s.ws();
      if (!s.scalar(m.value)) return std::nullopt;
      ms.push_back(std::move(m));
      s.ws();
      if (s.eat('}')) break;
      if (!s.eat(',')) return std::nullopt;
    }
  }
  s.ws();
  if (!s.at_end()) return std::nullopt;
  return ms;
}

std::optional<DriverEnd> parse_driver_end(std::string_view text) {
  Scanner s(text);
  DriverEnd d;
  bool have_nonce = false, have_rc = false, have_results = false;
  std::vector<std::string> keys;
  keys.reserve(4);  // nonce, rc, results, and room for one more
  s.ws();
  if (!s.eat('{')) return std::nullopt;
  s.ws();
  if (s.eat('}')) return std::nullopt;
  std::string key;
  Value v;
  for (;;) {
    s.ws();
    if (!s.string(key)) return std::nullopt;
    for (const auto& k : keys)
      if (k == key) return std::nullopt;
    keys.push_back(key);
    s.ws();
    if (!s.eat(':')) return std::nullopt;
    s.ws();
    if (key == "results") {
      if (!results_array(s, d.results)) return std::nullopt;
      have_results = true;
    } else {
      if (!s.scalar(v)) return std::nullopt;
      if (key == "nonce") {
        if (v.kind != Value::Kind::string) return std::nullopt;
        d.nonce = std::move(v.text);
        have_nonce = true;
      } else if (key == "rc") {
        if (v.kind != Value::Kind::number || !small_int(v.text, d.rc)) return std::nullopt;
        have_rc = true;
      }
    }
    s.ws();
    if (s.eat('}')) break;
    if (!s.eat(',')) return std::nullopt;
  }
  s.ws();
  if (!s.at_end() || !have_nonce || !have_rc) return std::nullopt;
  (void)have_results;  // absent: no results, "[]"
  return d;
}

}  // namespace kern::kernel::json_line
