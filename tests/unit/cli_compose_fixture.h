// A temporary project directory for the kern compose unit tests: write files, load them.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli/compose_model.h"

namespace kern::compose {

class ComposeDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kern-compose-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` at DIR/name (directories made) and returns the absolute path.
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // Loads DIR/compose.yaml (or `files`, relative to DIR) with `env` as the process environment.
  Result<Project> load(std::vector<std::string> files = {"compose.yaml"}, LoadOptions o = {},
                       const std::map<std::string, std::string>& env = {{"HOME", "/home/u"}}) {
    for (auto& f : files) o.files.push_back(dir_ + "/" + f);
    return load_project(o, env);
  }
  // The error message of a load expected to fail.
  std::string load_error(const std::string& yaml) {
    write("compose.yaml", yaml);
    auto p = load();
    EXPECT_FALSE(p.has_value());
    return p ? std::string() : p.error().what();
  }
  // The first service of a one-service file, loaded.
  Service one(const std::string& yaml, std::vector<std::string>* warnings = nullptr) {
    write("compose.yaml", yaml);
    auto p = load();
    EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().what());
    if (!p || p->services.empty()) return {};
    if (warnings) *warnings = p->warnings;
    return p->services.front();
  }

  std::string dir_;
};

}  // namespace kern::compose
