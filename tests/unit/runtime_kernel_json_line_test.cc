// The warm kernel's hand-written JSON for its hot lines (runtime/kernel/json_line.h), checked
// against nlohmann, which it must agree with byte for byte: whatever it accepts, nlohmann parses
// to the same values; whatever it writes, nlohmann writes the same. Malformed and hostile input
// (fuzzed mutations), escapes, unicode, invalid UTF-8, huge strings.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernel/json_line.h"
#include "runtime/kernel/protocol.h"

namespace kern::kernel {
namespace {

using json = nlohmann::json;
namespace jl = json_line;

std::string nl_dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string fast_string(std::string_view s) {
  std::string out;
  jl::append_string(out, s);
  return out;
}

// What the answer line was before it was written by hand: the oracle.
std::string reference_result_line(const CellResult& r, const json& id) {
  json j = json::object();
  if (!id.is_null()) j["id"] = id;
  j["cell_id"] = r.cell_id.empty() ? json(nullptr) : json(r.cell_id);
  j["status"] = status_name(r.status);
  j["stdout"] = r.out;
  j["stderr"] = r.err;
  j["rc"] = r.rc ? json(*r.rc) : json(nullptr);
  j["results"] = json::parse(r.results);
  j["duration_ms"] = std::round(r.duration_ms * 1000.0) / 1000.0;
  j["truncated"] = r.truncated;
  if (!r.error.empty()) j["error"] = r.error;
  if (r.state_lost) j["state_lost"] = true;
  if (r.oom) j["oom"] = true;
  return nl_dump(j) + "\n";
}

// Bytes that matter to a JSON scanner, and some that do not.
const std::string kAlphabet = std::string("\"\\/{}[]:,. -+eE0123456789abfnrtuDdCc\x01\x1f\x7f") +
                              "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xed\xa0\x80\xc0\xaf\xff\xfe\x80\xbf" +
                              std::string(1, '\0');

std::string random_bytes(std::mt19937& rng, size_t max_len) {
  std::uniform_int_distribution<size_t> len(0, max_len), pick(0, kAlphabet.size() - 1);
  std::string s(len(rng), ' ');
  for (auto& c : s) c = kAlphabet[pick(rng)];
  return s;
}

std::string mutate(std::mt19937& rng, std::string s) {
  std::uniform_int_distribution<int> n_ops(1, 4), op(0, 2);
  for (int k = n_ops(rng); k > 0; --k) {
    std::uniform_int_distribution<size_t> at(0, s.size());
    size_t i = at(rng);
    std::string piece = random_bytes(rng, 3);
    switch (op(rng)) {
      case 0: s.insert(i, piece); break;
      case 1: if (i < s.size()) s.erase(i, 1 + i % 3); break;
      default: if (i < s.size()) s.replace(i, 1, piece); break;
    }
  }
  return s;
}

// ---- strings out ----------------------------------------------------------------------------

TEST(KernelJsonLine, EveryByteAndEveryPairOfBytesIsWrittenAsNlohmannWritesIt) {
  for (int a = 0; a < 256; ++a) {
    std::string s(1, static_cast<char>(a));
    ASSERT_EQ(fast_string(s), nl_dump(json(s))) << a;
    for (int b = 0; b < 256; ++b) {
      std::string t = {static_cast<char>(a), static_cast<char>(b)};
      ASSERT_EQ(fast_string(t), nl_dump(json(t))) << a << " " << b;
    }
  }
}

TEST(KernelJsonLine, EscapesUnicodeAndInvalidUtf8AreWrittenAsNlohmannWritesThem) {
  for (std::string s : {std::string(""), std::string("plain"), std::string("tab\tnl\ncr\rff\fbs\b"),
                        std::string("quote\" backslash\\ slash/"), std::string("nul\0mid", 7),
                        std::string("esc\x1b[0m"), std::string("é€😀 中文"), std::string("\xed\xa0\x80 surrogate"),
                        std::string("\xc0\xaf overlong"), std::string("cut \xe2\x82"), std::string("\xf4\x90\x80\x80"),
                        std::string("\xef\xbb\xbf bom"), std::string("del\x7f")}) {
    EXPECT_EQ(fast_string(s), nl_dump(json(s))) << s;
  }
  std::mt19937 rng(1);
  for (int i = 0; i < 200000; ++i) {
    std::string s = random_bytes(rng, 12);
    ASSERT_EQ(fast_string(s), nl_dump(json(s))) << json(s).dump(-1, ' ', true, json::error_handler_t::replace);
  }
}

TEST(KernelJsonLine, HugeStringsAreWrittenWhole) {
  std::string s(20u << 20, 'x');
  for (size_t i = 0; i < s.size(); i += 4099) s[i] = "\n\"\\\x01\xc3"[i % 5];
  // (compared, not printed: 20 MiB)
  EXPECT_TRUE(fast_string(s) == nl_dump(json(s)));  // with invalid UTF-8 (a lone 0xc3): nlohmann's way
  for (size_t i = 0; i < s.size(); i += 4099)
    if (s[i] == '\xc3') s[i] = 'y';
  EXPECT_TRUE(fast_string(s) == nl_dump(json(s)));
}

TEST(KernelJsonLine, DurationsAreWrittenAsNlohmannWritesThem) {
  // Every value result_line can write below 10 s (what is rounded to 3 decimals), then some beyond.
  std::string out;
  for (uint64_t n = 0; n < 10000000; ++n) {
    double v = static_cast<double>(n) / 1000.0;
    out.clear();
    jl::append_duration_ms(out, v);
    ASSERT_EQ(out, json(v).dump()) << n;
  }
  // Off the microsecond grid below 10 s (the integer path must not take them), then beyond 10 s.
  for (double v : {1.0 / 3, 0.0005, 0.0015, 1234.5678, 9999.9999, 10000.0, 12345.678, 1e7 + 0.001, 3.6e9, 1e16, 1e300}) {
    out.clear();
    jl::append_duration_ms(out, v);
    EXPECT_EQ(out, json(v).dump()) << v;
  }
}

// ---- flat objects in ------------------------------------------------------------------------

// Whatever parse_flat_object accepts, nlohmann parses to the same object.
void expect_agrees(const std::string& text) {
  auto fast = jl::parse_flat_object(text);
  if (!fast) return;
  json j = json::parse(text, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "accepted what nlohmann refuses: " << json(text).dump(-1, ' ', true, json::error_handler_t::replace);
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j.size(), fast->size()) << text;
  for (const auto& m : *fast) {
    ASSERT_TRUE(j.contains(m.key)) << text;
    const json& v = j[m.key];
    switch (m.value.kind) {
      case jl::Value::Kind::null: ASSERT_TRUE(v.is_null()) << text; break;
      case jl::Value::Kind::boolean: ASSERT_EQ(v, json(m.value.boolean)) << text; break;
      case jl::Value::Kind::string: ASSERT_EQ(v, json(m.value.text)) << text; break;
      case jl::Value::Kind::number: ASSERT_EQ(v, json::parse(m.value.text)) << text; break;
    }
  }
}

const std::vector<std::string> kRequests = {
    R"({"op":"run","code":"1+1"})",
    R"({"op":"run","code":"print(\"hi\")\nx = 'é€😀'\t\\", "timeout": 2.5})",
    R"( { "code" : "\u00e9\u20ac\ud83d\ude00\u0000\/" , "op" : "fire" , "timeout" : 0 } )",
    R"({"op":"poll","cell_id":"c12","id":"req-7"})",
    R"({"op":"status","id":42})",
    R"({"op":"int","id":-3,"x":null,"y":true,"z":false,"w":1.5e-3})",
    R"({"op":"stop"})",
    R"({})",
};

TEST(KernelJsonLine, CommonRequestsAreAcceptedAndAgreeWithNlohmann) {
  for (const auto& r : kRequests) {
    EXPECT_TRUE(jl::parse_flat_object(r)) << r;
    expect_agrees(r);
  }
  auto ms = jl::parse_flat_object(kRequests[2]);
  ASSERT_TRUE(ms);
  EXPECT_EQ((*ms)[0].value.text, std::string("é€😀\0/", 11));
}

TEST(KernelJsonLine, WhatItCannotBeSureOfIsLeftToNlohmann) {
  for (std::string bad : {std::string(R"({"op":"run","op":"fire"})"),   // a key twice
                          std::string(R"({"op":"run","code":["x"]})"),   // nested
                          std::string(R"({"op":"run","code":{"a":1}})"),
                          std::string("\xef\xbb\xbf{\"op\":\"stop\"}"),  // a BOM
                          std::string(R"({"op":"\ud800"})"),             // lone surrogates
                          std::string(R"({"op":"\udc00"})"),
                          std::string(R"({"op":"\ud800\u0041"})"),
                          std::string("{\"op\":\"\xc3\"}"),              // invalid UTF-8
                          std::string("{\"op\":\"\xed\xa0\x80\"}"),
                          std::string("{\"op\":\"a\nb\"}"),              // a raw control character
                          std::string(R"({"op":"\x"})"), std::string(R"({"op":"\u12"})"),
                          std::string(R"({"op":01})"), std::string(R"({"op":1.})"), std::string(R"({"op":-})"),
                          std::string(R"({"op":1e})"), std::string(R"({"op":tru})"),
                          std::string(R"({"op":"run"} x)"), std::string(R"({"op":"run",})"),
                          std::string(R"({"op" "run"})"), std::string(R"(["op"])"), std::string(""),
                          std::string(R"({"op":"run")")}) {
    EXPECT_FALSE(jl::parse_flat_object(bad)) << bad;
  }
}

TEST(KernelJsonLine, FuzzedRequestsNeverDisagreeWithNlohmann) {
  std::mt19937 rng(7);
  for (int i = 0; i < 300000; ++i) {
    std::string s = mutate(rng, kRequests[static_cast<size_t>(i) % kRequests.size()]);
    expect_agrees(s);
    if (HasFatalFailure()) return;
  }
}

TEST(KernelJsonLine, HugeRequestLines) {
  std::string code(16u << 20, 'a');
  for (size_t i = 0; i < code.size(); i += 1000) code[i] = '\n';
  std::string line = json{{"op", "run"}, {"code", code}}.dump();
  auto ms = jl::parse_flat_object(line);
  ASSERT_TRUE(ms);
  ASSERT_EQ((*ms)[0].key, "code");  // nlohmann wrote its keys sorted
  EXPECT_TRUE((*ms)[0].value.text == code);  // (not printed: 16 MiB)
  line.pop_back();  // unterminated
  EXPECT_FALSE(jl::parse_flat_object(line));
}

// ---- the driver's end of cell ---------------------------------------------------------------

void expect_end_agrees(const std::string& text) {
  auto fast = jl::parse_driver_end(text);
  if (!fast) return;
  json j = json::parse(text, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "accepted what nlohmann refuses: " << json(text).dump(-1, ' ', true, json::error_handler_t::replace);
  ASSERT_EQ(j.at("nonce"), json(fast->nonce)) << text;
  ASSERT_TRUE(j.at("rc").is_number_integer()) << text;
  ASSERT_EQ(j.at("rc").get<int>(), fast->rc) << text;
  ASSERT_EQ(nl_dump(j.contains("results") ? j["results"] : json::array()), fast->results) << text;
}

const std::vector<std::string> kEnds = {
    R"({"nonce": "0123456789abcdef0123456789abcdef", "rc": 0, "results": [{"text/plain": "2"}]})",
    R"({"nonce":"n","rc":1,"results":[]})",
    R"({"nonce":"n","rc":-2})",
    R"({"rc": 3, "results": [{"text/html": "<b>\u00e9</b>", "text/plain": "'\\n\"\u001b'"}, {}], "nonce": "n"})",
    R"({"nonce": "n", "rc": 0, "results": [{"image/png": "iVBORw0KGgo=", "text/plain": "<Figure 1>"}], "error": "x"})",
};

TEST(KernelJsonLine, CommonDriverEndsAreAcceptedAndAgreeWithNlohmann) {
  for (const auto& e : kEnds) {
    EXPECT_TRUE(jl::parse_driver_end(e)) << e;
    expect_end_agrees(e);
  }
  EXPECT_EQ(jl::parse_driver_end(kEnds[0])->results, R"([{"text/plain":"2"}])");
}

TEST(KernelJsonLine, DriverEndsOfOtherShapesAreLeftToNlohmann) {
  for (std::string bad : {std::string(R"({"nonce":"n","rc":0,"results":[{"b":"1","a":"2"}]})"),  // unsorted
                          std::string(R"({"nonce":"n","rc":0,"results":[{"a":"1","a":"2"}]})"),  // twice
                          std::string(R"({"nonce":"n","rc":0,"results":[{"a":{"x":1}}]})"),       // nested
                          std::string(R"({"nonce":"n","rc":0,"results":[{"a":1}]})"),
                          std::string(R"({"nonce":"n","rc":0,"results":[1]})"),
                          std::string(R"({"nonce":"n","rc":0,"results":{}})"),
                          std::string(R"({"nonce":"n","rc":1.0})"), std::string(R"({"nonce":"n","rc":4294967297})"),
                          std::string(R"({"nonce":"n","rc":0,"rc":1})"), std::string(R"({"nonce":1,"rc":0})"),
                          std::string(R"({"rc":0})"), std::string(R"({"nonce":"n"})"),
                          std::string("{\"nonce\":\"n\",\"rc\":0,\"results\":[{\"a\":\"\xff\"}]}")}) {
    EXPECT_FALSE(jl::parse_driver_end(bad)) << bad;
  }
}

TEST(KernelJsonLine, FuzzedDriverEndsNeverDisagreeWithNlohmann) {
  std::mt19937 rng(11);
  for (int i = 0; i < 300000; ++i) {
    std::string s = mutate(rng, kEnds[static_cast<size_t>(i) % kEnds.size()]);
    expect_end_agrees(s);
    if (HasFatalFailure()) return;
  }
}

// ---- through protocol.h ---------------------------------------------------------------------

TEST(KernelJsonLine, AnswerLinesAreWhatNlohmannWrote) {
  std::mt19937 rng(3);
  std::vector<json> ids = {nullptr, "req-1", 42, -7, 1.5, true, json::array({1, "x"}), json{{"k", "v"}}};
  std::vector<std::string> results = {"[]", R"([{"text/plain":"2"}])",
                                      nl_dump(json::array({{{"application/json", {{"a", 1}}}, {"text/plain", "é"}}}))};
  for (int i = 0; i < 20000; ++i) {
    CellResult r;
    r.cell_id = i % 7 == 0 ? std::string() : "c" + std::to_string(i);
    r.status = static_cast<CellStatus>(i % 6);
    r.out = random_bytes(rng, 40);
    r.err = random_bytes(rng, 10);
    if (i % 3) r.rc = i % 5 - 2;
    r.results = results[static_cast<size_t>(i) % results.size()];
    r.duration_ms = std::uniform_real_distribution<double>(0, i % 10 == 0 ? 1e8 : 50)(rng);
    r.truncated = i % 4 == 0;
    if (i % 5 == 0) r.error = random_bytes(rng, 20);
    r.state_lost = i % 6 == 0;
    r.oom = i % 11 == 0;
    const json& id = ids[static_cast<size_t>(i) % ids.size()];
    ASSERT_EQ(result_line(r, id), reference_result_line(r, id)) << i;
  }
}

// Megabytes of output are written in pieces, cut between characters: the pieces joined are
// nlohmann's line, for multi-byte characters across every cut and for invalid UTF-8 (written
// whole), and no piece holds the whole output.
TEST(KernelJsonLine, AResultInPiecesIsTheWholeLine) {
  std::string big;
  const std::string unit = std::string("ab\n\"\x01") + "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
  while (big.size() < (3u << 20)) big += unit;
  for (const std::string& out : {big, big.substr(1), big.substr(0, big.size() - 2) + "\xff"}) {
    CellResult r;
    r.cell_id = "c1";
    r.out = out;
    r.err = big.substr(3);
    r.rc = 0;
    std::string joined;
    size_t pieces = 0, largest = 0;
    ASSERT_TRUE(result_line_pieces(r, 7, [&](std::string_view p) {
      joined += p;
      ++pieces;
      largest = std::max(largest, p.size());
      return true;
    }));
    ASSERT_EQ(joined, reference_result_line(r, 7));
    EXPECT_EQ(joined, result_line(r, 7));
    if (out.back() != '\xff') {
      EXPECT_GT(pieces, 4u);
      EXPECT_LT(largest, out.size());
    }
  }
}

TEST(KernelJsonLine, RequestsParsedByHandAreTheOnesNlohmannParsed) {
  json id;
  auto r = parse_request(R"({"id":"x\u00e9","op":"run","code":"a\u0000b","timeout":1e1})", &id);
  ASSERT_TRUE(r) << r.error().what();
  EXPECT_EQ(r->code, std::string("a\0b", 3));
  EXPECT_DOUBLE_EQ(*r->timeout_s, 10.0);
  EXPECT_EQ(id, json("xé"));
  EXPECT_EQ(r->id, json("xé"));
  // The errors are nlohmann's path's, worded as before.
  json id2;
  auto bad = parse_request(R"({"id":5,"op":"run","timeout":3})", &id2);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "missing field \"code\"");
  EXPECT_EQ(id2, json(5));
  EXPECT_EQ(parse_request(R"({"op":"run","code":"x","timeout":-1})", nullptr).error().message(),
            "field \"timeout\" must be between 0 and 10000000 seconds");
  EXPECT_EQ(parse_request(R"({"op":"nope"})", nullptr).error().message(),
            "unknown op \"nope\" (known: run, fire, poll, int, status, stop)");
  // A key twice: nlohmann keeps the last.
  EXPECT_EQ(parse_request(R"({"op":"run","code":"a","code":"b"})", nullptr)->code, "b");
}

}  // namespace
}  // namespace kern::kernel
