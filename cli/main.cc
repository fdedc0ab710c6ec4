// kern's entry point: dispatch to a verb, print an error once, exit with the mapped code.
#include "cli/app.h"

int main(int argc, char** argv) { return kern::cli::run(argc, argv); }
