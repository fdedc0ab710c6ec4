// kern's entry point: dispatch to a verb, print an error once, exit with the mapped code.
#include "cli/app.h"
#include "runtime/sys/proc_title.h"

int main(int argc, char** argv) {
  kern::sys::remember_process_args(argc, argv);
  return kern::cli::run(argc, argv);
}
