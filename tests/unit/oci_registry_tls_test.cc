// Per-host TLS settings (oci/registry_tls.h): the certs.d search order, what a certificate
// directory contributes, the precedence of --tls-verify over registries.conf, and the worded
// certificate errors.
#include <gtest/gtest.h>

#include <curl/curl.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "oci/registry_tls.h"
#include "runtime/sys/fdio.h"

namespace kern::oci {
namespace {

class TlsDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-tls-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    old_xdg_ = getenv("XDG_CONFIG_HOME") ? getenv("XDG_CONFIG_HOME") : "";
    ::setenv("XDG_CONFIG_HOME", dir_.c_str(), 1);
    ::unsetenv("SSL_CERT_FILE");
    ::unsetenv("SSL_CERT_DIR");
  }
  void TearDown() override {
    if (old_xdg_.empty()) ::unsetenv("XDG_CONFIG_HOME");
    else ::setenv("XDG_CONFIG_HOME", old_xdg_.c_str(), 1);
    (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  void put(const std::string& rel, const std::string& text) {
    std::string path = dir_ + "/" + rel;
    for (size_t p = dir_.size() + 1; (p = path.find('/', p)) != std::string::npos; ++p)
      ::mkdir(path.substr(0, p).c_str(), 0700);
    ASSERT_TRUE(sys::write_file(AT_FDCWD, path, text, 0600));
  }
  std::string dir_, old_xdg_;
};

TEST_F(TlsDir, SearchOrderUserThenSystem) {
  auto dirs = cert_dirs_for("r.example:5000");
  ASSERT_EQ(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], dir_ + "/containers/certs.d/r.example:5000");
  EXPECT_EQ(dirs[1], "/etc/containers/certs.d/r.example:5000");
  EXPECT_EQ(dirs[2], "/etc/docker/certs.d/r.example:5000");
}

TEST_F(TlsDir, CertsDirAddsEveryCrtAndTheClientPair) {
  put("containers/certs.d/r.example/a.crt", "AAA\n");
  put("containers/certs.d/r.example/b.crt", "BBB");
  put("containers/certs.d/r.example/me.cert", "C");
  put("containers/certs.d/r.example/me.key", "K");
  auto t = tls_settings_for("r.example", {}, false);
  ASSERT_TRUE(t) << t.error().what();
  EXPECT_TRUE(t->verify);
  EXPECT_EQ(t->ca_pem, "AAA\nBBB\n");
  EXPECT_EQ(t->ca_files.size(), 2u);
  EXPECT_EQ(t->client_cert, dir_ + "/containers/certs.d/r.example/me.cert");
  EXPECT_EQ(t->client_key, dir_ + "/containers/certs.d/r.example/me.key");
  auto other = tls_settings_for("other.example", {}, false);
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->ca_pem.empty());
}

TEST_F(TlsDir, ACertWithoutItsKeyIsAnError) {
  put("d/me.cert", "C");
  TlsRequest req;
  req.cert_dir = dir_ + "/d";
  auto t = tls_settings_for("r.example", req, false);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().what().find("me.key"), std::string::npos);
  req.cert_dir = dir_ + "/absent";
  EXPECT_FALSE(tls_settings_for("r.example", req, false));
}

TEST_F(TlsDir, CertDirFlagReplacesTheSearch) {
  put("containers/certs.d/r.example/a.crt", "AAA\n");
  put("mine/ca.crt", "MINE\n");
  TlsRequest req;
  req.cert_dir = dir_ + "/mine";
  auto t = tls_settings_for("r.example", req, false);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->ca_pem, "MINE\n");
}

TEST_F(TlsDir, VerifyFlagWinsOverRegistriesConf) {
  EXPECT_FALSE(tls_settings_for("r", {}, true)->verify);
  TlsRequest yes;
  yes.verify = true;
  EXPECT_TRUE(tls_settings_for("r", yes, true)->verify);
  TlsRequest no;
  no.verify = false;
  EXPECT_FALSE(tls_settings_for("r", no, false)->verify);
}

TEST_F(TlsDir, EnvironmentTrustStore) {
  ::setenv("SSL_CERT_FILE", "/x/ca.pem", 1);
  ::setenv("SSL_CERT_DIR", "/x/certs", 1);
  auto t = tls_settings_for("r", {}, false);
  EXPECT_EQ(t->ca_file, "/x/ca.pem");
  EXPECT_EQ(t->ca_path, "/x/certs");
}

TEST(OciRegistryTls, CertificateFailureInWordsWithTheWaysOut) {
  TlsSettings t;
  auto e = describe_tls_failure(CURLE_PEER_FAILED_VERIFICATION, "r.example:5000", "https://r.example:5000/v2/",
                                "SSL certificate problem: self-signed certificate", t);
  ASSERT_TRUE(e);
  EXPECT_NE(e->message().find("the TLS certificate of r.example:5000 could not be verified (SSL certificate problem: "
                              "self-signed certificate)"),
            std::string::npos)
      << e->message();
  EXPECT_NE(e->explicit_hint().find("--tls-verify=false"), std::string::npos);
  EXPECT_NE(e->explicit_hint().find("/etc/containers/certs.d/r.example:5000/ca.crt"), std::string::npos);
  EXPECT_NE(e->explicit_hint().find("--cert-dir"), std::string::npos);
  EXPECT_FALSE(describe_tls_failure(CURLE_COULDNT_CONNECT, "r", "https://r/v2/", "", t));
}

TEST(OciRegistryTls, ARefusedClientCertificateAfterTheHandshakeIsATlsFailure) {
  TlsSettings t;
  auto e = describe_tls_failure(CURLE_RECV_ERROR, "r:1", "https://r:1/v2/",
                                "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required", t);
  ASSERT_TRUE(e);
  EXPECT_NE(e->message().find("the TLS connection with r:1 failed"), std::string::npos) << e->message();
  EXPECT_NE(e->explicit_hint().find("client certificate"), std::string::npos);
  EXPECT_FALSE(describe_tls_failure(CURLE_RECV_ERROR, "r:1", "https://r:1/v2/", "Connection reset by peer", t));
}

}  // namespace
}  // namespace kern::oci
