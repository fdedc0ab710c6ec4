// The completion scripts of `kern completion bash|zsh|fish`, each rendered from the completion
// model (completion_model.h). Pure: text in, text out.
#pragma once

#include <string>
#include <vector>

#include "cli/completions/completion_model.h"

namespace kern::cli {

std::string completion_script_bash(const std::vector<CompletionVerb>& model);
std::string completion_script_zsh(const std::vector<CompletionVerb>& model);
std::string completion_script_fish(const std::vector<CompletionVerb>& model);

}  // namespace kern::cli
