// The ClientHello SNI parser (runtime/net/tls_sni.h): a real ClientHello, built ones, and hostile
// inputs (truncation at every length, lengths that lie, doubled extensions, other records).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/net/tls_sni.h"

namespace kern::net {
namespace {

// A ClientHello python3's ssl module sent for server_hostname="files.pypi.org" (TLS 1.3 offer).
const char kRealHelloHex[] =
    "1603010200010001fc030308789caade7e7c2510a400d3d645caba4dbedb94f039dbff656a74a1fb7259d5206377c5ee"
    "b20d002405ffa7bcf18572fc644cee85828e6dc3f79fd3584cf8e5400024130213031301c02cc030c02bc02fcca9cca8"
    "c024c028c023c027009f009e006b006700ff0100018f00000013001100000e66696c65732e707970692e6f7267000b00"
    "0403000102000a00160014001d0017001e0019001801000101010201030104002300000016000000170000000d002a00"
    "28040305030603080708080809080a080b080408050806040105010601030303010302040205020602002b0005040304"
    "0303002d00020101003300260024001d0020081c2b6cd7d1e9b58430de7c141a6965635ee901dbcc586b4814962dc153"
    "2543001500df000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "00000000000000000000000000000000000000000000000000000000000000000000000000";

std::vector<uint8_t> from_hex(const std::string& h) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

void put16(std::vector<uint8_t>& v, size_t n) {
  v.push_back(static_cast<uint8_t>(n >> 8));
  v.push_back(static_cast<uint8_t>(n));
}

std::vector<uint8_t> sni_ext(const std::vector<std::string>& names, uint8_t type = 0) {
  std::vector<uint8_t> list;
  for (const auto& n : names) {
    list.push_back(type);
    put16(list, n.size());
    list.insert(list.end(), n.begin(), n.end());
  }
  std::vector<uint8_t> e;
  put16(e, 0);  // server_name
  put16(e, list.size() + 2);
  put16(e, list.size());
  e.insert(e.end(), list.begin(), list.end());
  return e;
}

// A minimal ClientHello record with the given extensions block (nullptr: no extensions field).
std::vector<uint8_t> hello(const std::vector<uint8_t>* exts) {
  std::vector<uint8_t> body = {0x03, 0x03};
  body.insert(body.end(), 32, 0xAB);  // random
  body.push_back(0);                  // session id
  put16(body, 2);
  body.push_back(0x13);
  body.push_back(0x01);  // one suite
  body.push_back(1);
  body.push_back(0);  // null compression
  if (exts) {
    put16(body, exts->size());
    body.insert(body.end(), exts->begin(), exts->end());
  }
  std::vector<uint8_t> hs = {1, static_cast<uint8_t>(body.size() >> 16), static_cast<uint8_t>(body.size() >> 8),
                             static_cast<uint8_t>(body.size())};
  hs.insert(hs.end(), body.begin(), body.end());
  std::vector<uint8_t> rec = {22, 3, 1};
  put16(rec, hs.size());
  rec.insert(rec.end(), hs.begin(), hs.end());
  return rec;
}

std::vector<uint8_t> hello_with(const std::vector<std::string>& names) {
  std::vector<uint8_t> e = sni_ext(names);
  return hello(&e);
}

TEST(NetSni, RealClientHelloFromPythonSsl) {
  auto r = parse_client_hello_sni(from_hex(kRealHelloHex));
  ASSERT_EQ(r.status, SniStatus::ok);
  EXPECT_EQ(r.name, "files.pypi.org");
}

TEST(NetSni, EveryTruncationOfTheRealHelloAsksForMoreOrRefuses) {
  auto full = from_hex(kRealHelloHex);
  for (size_t n = 0; n < full.size(); ++n) {
    auto r = parse_client_hello_sni(std::span(full.data(), n));
    EXPECT_EQ(r.status, SniStatus::need_more) << n;
  }
}

TEST(NetSni, EveryByteFlipOfTheRealHelloNeverCrashesAndNeverNamesAnotherHostSilently) {
  auto full = from_hex(kRealHelloHex);
  for (size_t i = 0; i < full.size(); ++i) {
    auto m = full;
    m[i] ^= 0xFF;
    auto r = parse_client_hello_sni(m);
    if (r.status == SniStatus::ok) {
      EXPECT_EQ(r.name.size(), 14u) << i;
    }
  }
}

TEST(NetSni, BuiltHelloWithOneName) {
  auto r = parse_client_hello_sni(hello_with({"pypi.org"}));
  ASSERT_EQ(r.status, SniStatus::ok);
  EXPECT_EQ(r.name, "pypi.org");
}

TEST(NetSni, NoExtensionsOrNoServerNameIsNoSni) {
  EXPECT_EQ(parse_client_hello_sni(hello(nullptr)).status, SniStatus::no_sni);
  std::vector<uint8_t> other = {0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04};  // supported_versions only
  EXPECT_EQ(parse_client_hello_sni(hello(&other)).status, SniStatus::no_sni);
}

TEST(NetSni, TwoNamesOrTwoExtensionsOrAnUnknownNameTypeAreMalformed) {
  EXPECT_EQ(parse_client_hello_sni(hello_with({"a.org", "b.org"})).status, SniStatus::malformed);
  auto e = sni_ext({"a.org"});
  auto twice = e;
  twice.insert(twice.end(), e.begin(), e.end());
  EXPECT_EQ(parse_client_hello_sni(hello(&twice)).status, SniStatus::malformed);
  auto typed = sni_ext({"a.org"}, 1);
  EXPECT_EQ(parse_client_hello_sni(hello(&typed)).status, SniStatus::malformed);
  auto empty_name = sni_ext({""});
  EXPECT_EQ(parse_client_hello_sni(hello(&empty_name)).status, SniStatus::malformed);
}

TEST(NetSni, ControlBytesOrSpacesInTheNameAreMalformed) {
  EXPECT_EQ(parse_client_hello_sni(hello_with({std::string("a.org\0b.org", 11)})).status, SniStatus::malformed);
  EXPECT_EQ(parse_client_hello_sni(hello_with({"a.org b.org"})).status, SniStatus::malformed);
  EXPECT_EQ(parse_client_hello_sni(hello_with({"caf\xc3\xa9.org"})).status, SniStatus::malformed);
}

TEST(NetSni, NotAHandshakeRecordIsNotTls) {
  std::string get = "GET / HTTP/1.1\r\nHost: a.org\r\n\r\n";
  EXPECT_EQ(parse_client_hello_sni(std::vector<uint8_t>(get.begin(), get.end())).status, SniStatus::not_tls);
  auto h = hello_with({"a.org"});
  h[0] = 23;  // application data
  EXPECT_EQ(parse_client_hello_sni(h).status, SniStatus::not_tls);
  h = hello_with({"a.org"});
  h[1] = 2;  // SSL 2 style version
  EXPECT_EQ(parse_client_hello_sni(h).status, SniStatus::not_tls);
  h = hello_with({"a.org"});
  h[5] = 2;  // ServerHello, not ClientHello
  EXPECT_EQ(parse_client_hello_sni(h).status, SniStatus::not_tls);
  // SSLv2-compatible ClientHello (high bit length): not a TLS record.
  EXPECT_EQ(parse_client_hello_sni(std::vector<uint8_t>{0x80, 0x2e, 0x01, 0x03, 0x01}).status, SniStatus::not_tls);
}

TEST(NetSni, LengthsThatLieAreRefused) {
  auto h = hello_with({"a.org"});
  auto bigger = h;
  bigger[8] += 1;  // handshake length one more than the record holds
  EXPECT_EQ(parse_client_hello_sni(bigger).status, SniStatus::fragmented);
  auto smaller = h;
  smaller[8] -= 1;  // trailing byte in the record
  EXPECT_EQ(parse_client_hello_sni(smaller).status, SniStatus::malformed);
  auto zero = h;
  zero[3] = 0;
  zero[4] = 0;
  EXPECT_EQ(parse_client_hello_sni(zero).status, SniStatus::malformed);
  std::vector<uint8_t> huge = {22, 3, 1, 0x40, 0x01};  // 16385 bytes: over the record limit
  EXPECT_EQ(parse_client_hello_sni(huge).status, SniStatus::malformed);
}

TEST(NetSni, ExtensionLengthPastTheEndIsMalformed) {
  std::vector<uint8_t> e = {0x00, 0x00, 0x10, 0x00, 0x00, 0x03};  // server_name claiming 4096 bytes
  EXPECT_EQ(parse_client_hello_sni(hello(&e)).status, SniStatus::malformed);
}

TEST(NetSni, ExtraBytesAfterTheRecordDoNotChangeTheAnswer) {
  auto h = hello_with({"a.org"});
  h.insert(h.end(), {23, 3, 3, 0, 1, 0});
  auto r = parse_client_hello_sni(h);
  ASSERT_EQ(r.status, SniStatus::ok);
  EXPECT_EQ(r.name, "a.org");
}

}  // namespace
}  // namespace kern::net
