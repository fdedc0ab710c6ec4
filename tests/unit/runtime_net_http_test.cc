// The egress proxy's request-head parser (runtime/net/http_head.h): CONNECT authorities, absolute
// URIs against the Host header (the plain-HTTP fronting check), and malformed or smuggling heads.
#include <gtest/gtest.h>

#include <string>

#include "runtime/net/http_head.h"

namespace kern::net {
namespace {

HeadResult parse(const std::string& s) { return parse_request_head(s); }

// Parses an acceptable head and checks the target it names.
void expect_target(const std::string& head, bool connect, const std::string& host, unsigned port) {
  auto r = parse(head);
  ASSERT_TRUE(r.head) << r.refusal;
  EXPECT_EQ(r.head->connect, connect);
  EXPECT_EQ(r.head->host, host);
  EXPECT_EQ(r.head->port, port);
}

TEST(NetHttp, FindsTheEndOfTheHead) {
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\n"), 0u);
  EXPECT_EQ(find_head_end("GET / HTTP/1.1\r\n\r\nbody"), 18u);
}

TEST(NetHttp, ConnectWithAndWithoutHost) {
  expect_target("CONNECT files.pypi.org:443 HTTP/1.1\r\nHost: files.pypi.org:443\r\nUser-Agent: x\r\n\r\n", true,
                "files.pypi.org", 443);
  auto r = parse("CONNECT pypi.org:443 HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(r.head) << r.refusal;
  r = parse("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(r.head) << r.refusal;
  EXPECT_EQ(r.head->host, "[2001:db8::1]");
}

TEST(NetHttp, ConnectRefusals) {
  for (const char* s : {"CONNECT pypi.org HTTP/1.1\r\n\r\n", "CONNECT pypi.org: HTTP/1.1\r\n\r\n",
                        "CONNECT pypi.org:0 HTTP/1.1\r\n\r\n", "CONNECT pypi.org:65536 HTTP/1.1\r\n\r\n",
                        "CONNECT pypi.org:44a HTTP/1.1\r\n\r\n", "CONNECT user@pypi.org:443 HTTP/1.1\r\n\r\n",
                        "CONNECT ::1:443 HTTP/1.1\r\n\r\n", "CONNECT [::1 HTTP/1.1\r\n\r\n",
                        "CONNECT pypi.org:443 HTTP/1.1\r\nHost: evil.com:443\r\n\r\n",
                        "CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:80\r\n\r\n",
                        "CONNECT pypi.org%2eevil.com:443 HTTP/1.1\r\n\r\n"})
    EXPECT_FALSE(parse(s).head) << s;
}

TEST(NetHttp, AbsoluteUriWithMatchingHost) {
  const char* head = "GET http://pypi.org/simple/pip/?x=1 HTTP/1.1\r\nHost: pypi.org\r\nAccept: */*\r\n\r\n";
  expect_target(head, false, "pypi.org", 80);
  auto r = parse(head);
  EXPECT_EQ(r.head->path, "/simple/pip/?x=1");
  r = parse("GET http://PyPI.org:80 HTTP/1.1\r\nHost: pypi.org.\r\n\r\n");
  ASSERT_TRUE(r.head) << r.refusal;
  EXPECT_EQ(r.head->path, "/");
  r = parse("GET http://pypi.org?q HTTP/1.1\r\nHost: pypi.org:80\r\n\r\n");
  ASSERT_TRUE(r.head) << r.refusal;
  EXPECT_EQ(r.head->path, "/?q");
}

TEST(NetHttp, HostHeaderMustEqualTheUriHost) {
  for (const char* s : {"GET http://pypi.org/ HTTP/1.1\r\nHost: evil.com\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org:8080\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\nHost: evil.com\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: files.pypi.org\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org@evil.com\r\n\r\n"})
    EXPECT_FALSE(parse(s).head) << s;
}

TEST(NetHttp, OriginFormAndOtherSchemesAreRefused) {
  for (const char* s : {"GET / HTTP/1.1\r\nHost: pypi.org\r\n\r\n", "GET https://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
                        "GET ftp://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
                        "GET http://user:pw@pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
                        "GET http:///x HTTP/1.1\r\nHost: pypi.org\r\n\r\n"})
    EXPECT_FALSE(parse(s).head) << s;
}

TEST(NetHttp, MalformedHeadsAreRefused) {
  for (const char* s : {"GET http://pypi.org/ HTTP/2\r\nHost: pypi.org\r\n\r\n",
                        "GET  http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1 x\r\nHost: pypi.org\r\n\r\n",
                        "G(T http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n folded\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\nX\nY: z\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\nBad Name: v\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n: v\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\nX: a\x01b\r\n\r\n",
                        "GET http://pypi.org/\x7f HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\nTransfer-Encoding: chunked\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\nContent-Length: -1\r\n\r\n",
                        "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\nContent-Length: 1 2\r\n\r\n"})
    EXPECT_FALSE(parse(s).head) << s;
  EXPECT_FALSE(parse(std::string("GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\0evil\r\n\r\n", 48)).head);
  EXPECT_FALSE(parse("GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\nX: " + std::string(kMaxRequestHead, 'a') +
                     "\r\n\r\n")
                   .head);
}

TEST(NetHttp, ContentLengthIsRead) {
  auto r = parse("POST http://pypi.org/u HTTP/1.1\r\nHost: pypi.org\r\nContent-Length: 12\r\n\r\n");
  ASSERT_TRUE(r.head) << r.refusal;
  EXPECT_EQ(r.head->content_length, 12u);
}

TEST(NetHttp, ForwardedHeadIsOriginFormAndClosesTheConnection) {
  auto r = parse(
      "GET http://pypi.org/simple/ HTTP/1.1\r\nHost: pypi.org\r\nProxy-Connection: keep-alive\r\n"
      "Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nUpgrade: websocket\r\nAccept: */*\r\n\r\n");
  ASSERT_TRUE(r.head) << r.refusal;
  EXPECT_EQ(forwarded_head(*r.head),
            "GET /simple/ HTTP/1.1\r\nHost: pypi.org\r\nAccept: */*\r\nConnection: close\r\n\r\n");
}

}  // namespace
}  // namespace kern::net
