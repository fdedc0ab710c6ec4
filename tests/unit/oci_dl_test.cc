// The dlopen loaders: the libraries resolve, and a missing one names its Debian package.
#include <gtest/gtest.h>

#include "oci/digest.h"
#include "oci/dl/archive_api.h"
#include "oci/dl/crypto_api.h"
#include "oci/dl/curl_api.h"
#include "oci/dl/dl_library.h"

namespace kern::oci {
namespace {

TEST(OciDl, LibrariesResolve) {
  auto a = dl::archive_api();
  ASSERT_TRUE(a) << a.error().what();
  EXPECT_NE((*a)->read_new, nullptr);
  auto c = dl::crypto_api();
  ASSERT_TRUE(c) << c.error().what();
  auto u = dl::curl_api();
  ASSERT_TRUE(u) << u.error().what();
}

TEST(OciDl, MissingLibraryNamesPackage) {
  auto r = dl::open_library("libkern-does-not-exist.so.9", "libkern-nothing");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind(), ErrorKind::host_unsupported);
  EXPECT_NE(r.error().what().find("libkern-does-not-exist.so.9"), std::string::npos);
  EXPECT_NE(r.error().hint().find("apt-get install libkern-nothing"), std::string::npos);
}

TEST(OciDl, Sha256KnownVectors) {
  auto e = sha256_of("");
  ASSERT_TRUE(e);
  EXPECT_EQ(*e, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(*sha256_of("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto h = Sha256::create();
  ASSERT_TRUE(h);
  h->update("a", 1);
  h->update("bc", 2);
  EXPECT_EQ(h->finish(), *sha256_of("abc"));
}

}  // namespace
}  // namespace kern::oci
