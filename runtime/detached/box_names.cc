// Readable box names; see box_names.h.
#include "runtime/detached/box_names.h"

#include <sys/random.h>
#include <time.h>

#include <iterator>

namespace kern {
namespace {

constexpr const char* kAdjectives[] = {
    "amber", "bold",  "brisk", "calm",  "clever", "cosy",   "crisp", "deft",  "eager", "fair",
    "fond",  "gentle", "glad", "grand", "keen",   "kind",   "lively", "lucid", "merry", "mild",
    "neat",  "noble", "plucky", "proud", "quick", "quiet", "rapid", "ready", "sharp", "shy",
    "smart", "snug",  "steady", "sunny", "swift", "tidy",  "vivid", "warm",  "wise",  "witty"};
constexpr const char* kNouns[] = {
    "otter", "heron", "lynx",  "badger", "falcon", "marten", "raven", "stoat", "wren",  "finch",
    "hare",  "ibex",  "kite",  "lark",   "mole",   "newt",   "owl",   "pike",  "quail", "robin",
    "seal",  "shrew", "swift", "tern",   "vole",   "weasel", "yak",   "zebra", "bison", "crane",
    "dingo", "egret", "gecko", "koala",  "lemur",  "moose",  "okapi", "panda", "tapir", "walrus"};

}  // namespace

std::string readable_box_name(uint64_t random) {
  const uint64_t na = std::size(kAdjectives), nn = std::size(kNouns);
  std::string name = kAdjectives[random % na];
  name += "-";
  name += kNouns[(random / na) % nn];
  return name;
}

uint64_t name_random() {
  uint64_t r = 0;
  if (::getrandom(&r, sizeof r, GRND_NONBLOCK) == sizeof r) return r;
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(ts.tv_sec) << 20);
}

}  // namespace kern
