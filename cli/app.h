// The kern command line: builds the CLI11 app from the registered verbs and runs one.
#pragma once

namespace kern::cli {

int run(int argc, char** argv);

}  // namespace kern::cli
