// Re-creating an uncompressed layer tar byte for byte from the tree it was unpacked into, so
// that the store need not keep a second full copy of every layer (a docker-archive's layers
// are uncompressed: keeping the blob next to the tree doubled the disk use). Any process,
// before clone; the splitter runs on the layer pipe's producer thread, the rest on the
// caller's.
//
// While a layer is unpacked, TarSplitter reads the same uncompressed bytes as the tar reader
// and writes down everything that is not file content (headers, pax and GNU name records,
// padding, the end blocks and whatever follows them) and, for each member's content, only its
// length and the member's ordinal. The importer then names each ordinal by the tree path the
// tree writer created for it; the result (a SplitRecipe) plus the tree re-creates the blob.
// A recipe is only kept when it is complete: every content segment maps to a file that no
// later entry replaced or removed, readable by its owner, under searchable directories; the
// export hashes what it re-creates and refuses a mismatch with the diff_id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oci/tree_writer.h"
#include "runtime/sys/error.h"

namespace kern::oci {

struct SplitSegment {
  enum class Kind : uint8_t { literal, zeros, content };
  Kind kind = Kind::literal;
  uint64_t length = 0;
  std::string bytes;  // literal: the bytes; content: the tree path (after resolve)
  uint64_t member = 0;  // content: the ordinal of the member (before resolve)
};

// One layer's recipe: the diff_id it re-creates and its segments in order.
struct SplitRecipe {
  std::string diff_id;
  std::vector<SplitSegment> segments;
  uint64_t total() const;
};

class TarSplitter {
 public:
  // Feeds the next bytes of the uncompressed tar stream, in order.
  void feed(const void* data, size_t len);
  // Whether every byte so far was understood. False after a member kind whose content is not
  // a plain file's bytes (GNU sparse, multi-volume, dump dirs) or a pax record too large to
  // keep: the layer is then not re-creatable and its blob must stay.
  bool ok() const { return ok_; }
  // The segments, content still named by member ordinal.
  std::vector<SplitSegment> take() { return std::move(segments_); }

 private:
  enum class State { header, meta, content, pad, trailer };
  void literal(const char* p, size_t n);
  void header_done();
  void meta_done();

  bool ok_ = true;
  State state_ = State::header;
  std::string block_;          // the header being read
  std::string meta_;           // a pax record set or GNU long name being read
  char meta_type_ = 0;
  uint64_t remaining_ = 0;     // of the content or meta data being read
  uint64_t pad_ = 0;           // padding left after it
  uint64_t next_size_ = UINT64_MAX;  // a pax "size" record for the next member
  uint64_t members_ = 0;
  std::vector<SplitSegment> segments_;
};

// The recipes of a finished tree that can be trusted: each content segment named by the path
// the writer (tracking files) created for its member, kept only when that file still holds the
// bytes its entry brought and every directory is searchable by its owner. `raw[i]` is layer
// i's splitter output with its diff_id (an empty diff_id: no recipe); `files[i]` what the
// writer wrote for each member of layer i. `complete[i]` says whether layer i has a recipe.
std::vector<SplitRecipe> resolve_recipes(const TreeWriter& writer, std::vector<SplitRecipe> raw,
                                         const std::vector<std::vector<TreeWriter::WrittenFile>>& files,
                                         std::vector<bool>& complete);

// Serialised form, one file per tree (several layers): see layer_split.cc.
std::string encode_recipes(const std::vector<SplitRecipe>& recipes);
Result<std::vector<SplitRecipe>> decode_recipes(std::string_view data);
// Which layers the recipes re-create and their sizes, checked as decode_recipes checks them but
// without a copy of any segment: a docker-archive's recipes are megabytes of tar headers, and a
// load that only asks whether a layer has one (a second load of an image) need not copy them.
struct RecipeSummary {
  std::string diff_id;
  uint64_t total = 0;  // bytes of the layer it re-creates
};
Result<std::vector<RecipeSummary>> summarise_recipes(std::string_view data);

// Writes the layer the recipe describes to `out_fd` (with -1, writes nothing), reading content
// from the tree open as `tree_fd` (no symlink followed), and returns the sha256 of the layer.
Result<std::string> replay_recipe(const SplitRecipe& r, int tree_fd, int out_fd);

}  // namespace kern::oci
