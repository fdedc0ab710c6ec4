// Helpers shared by the store's implementation files (store.cc, store_gc.cc); not an interface.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kern::oci::store_detail {

// The names in directory `sub` under `dirfd` ("." and ".." left out); none when it cannot be read.
std::vector<std::string> list_dir(int dirfd, const std::string& sub);
bool ends_with(const std::string& s, std::string_view suffix);

}  // namespace kern::oci::store_detail
