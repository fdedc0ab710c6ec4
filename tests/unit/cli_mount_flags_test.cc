// Docker's --mount syntax (cli/mount_flags.h): the CSV split, bind and tmpfs mapped onto the
// spec's binds and tmpfs mounts, and every refusal with its reason.
#include <gtest/gtest.h>

#include "cli/mount_flags.h"

namespace kern::cli {
namespace {

std::string refusal(const std::string& value) {
  auto r = parse_mount_flag(value);
  EXPECT_FALSE(r.has_value()) << value;
  if (r.has_value()) return "";
  EXPECT_EQ(r.error().kind(), ErrorKind::usage) << value;
  return r.error().message() + " | " + r.error().hint();
}

TEST(MountFlag, CsvSplitWithQuotes) {
  EXPECT_EQ(*split_mount_fields("a=1,b=2"), (std::vector<std::string>{"a=1", "b=2"}));
  EXPECT_EQ(*split_mount_fields("\"src=/a,b\",dst=/c"), (std::vector<std::string>{"src=/a,b", "dst=/c"}));
  EXPECT_EQ(*split_mount_fields("\"src=/x\"\"y\""), (std::vector<std::string>{"src=/x\"y"}));
  EXPECT_EQ(*split_mount_fields("a=1,,\"\""), (std::vector<std::string>{"a=1", "", ""}));
  EXPECT_FALSE(split_mount_fields("\"src=/x").has_value());
}

// Issue 21 (item 25): a quote that does not open a field is refused as docker's CSV reader
// refuses it; before, it opened a quoted stretch that swallowed ",ro" into the target.
TEST(MountFlag, AQuoteInsideAFieldIsRefusedNotSwallowingTheNextField) {
  EXPECT_NE(refusal("type=bind,src=/srv,dst=/x\"y,ro\"").find("a quote inside a field (byte 26)"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=\"/x\"\"y\",dst=/d").find("a quote inside a field"), std::string::npos);
  EXPECT_NE(refusal("type=bind,\"src=/srv\"x,dst=/d").find("must end at its closing quote"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/srv,\"dst=/d,ro").find("is not closed"), std::string::npos);
  auto m = parse_mount_flag("type=bind,\"src=/srv/a,b\",dst=/d,ro");
  ASSERT_TRUE(m.has_value()) << m.error().message();
  EXPECT_EQ(m->bind.source, "/srv/a,b");
  EXPECT_TRUE(m->bind.read_only);
}

TEST(MountFlag, BindWithEverySpelling) {
  for (const char* v : {"type=bind,source=/srv/data,target=/data", "type=bind,src=/srv/data,dst=/data",
                        "target=/data//,src=/srv/data,type=bind"}) {
    auto m = parse_mount_flag(v);
    ASSERT_TRUE(m.has_value()) << v << ": " << m.error().message();
    EXPECT_EQ(m->type, MountFlag::Type::bind);
    EXPECT_EQ(m->bind.source, "/srv/data");
    EXPECT_EQ(m->bind.dest, "/data");
    EXPECT_FALSE(m->bind.read_only);
    EXPECT_EQ(m->bind.origin, "--mount");
  }
  for (const char* v : {"type=bind,src=/a,dst=/b,readonly", "type=bind,src=/a,dst=/b,ro",
                        "type=bind,src=/a,dst=/b,readonly=true", "type=bind,src=/a,dst=/b,ro=1,bind-recursive=readonly"})
    EXPECT_TRUE(parse_mount_flag(v)->bind.read_only) << v;
  EXPECT_FALSE(parse_mount_flag("type=bind,src=/a,dst=/b,readonly=false")->bind.read_only);
  // A path with ':' and ',' (which -v cannot carry) through quoting.
  auto m = parse_mount_flag("type=bind,\"src=/a:b,c\",dst=/x:y");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->bind.source, "/a:b,c");
  EXPECT_EQ(m->bind.dest, "/x:y");
  EXPECT_TRUE(parse_mount_flag("type=bind,src=/a,dst=/b,bind-propagation=rprivate,consistency=cached").has_value());
}

TEST(MountFlag, Tmpfs) {
  auto m = parse_mount_flag("type=tmpfs,destination=/scratch,tmpfs-size=64m,tmpfs-mode=1777");
  ASSERT_TRUE(m.has_value()) << m.error().message();
  EXPECT_EQ(m->type, MountFlag::Type::tmpfs);
  EXPECT_EQ(m->tmpfs.dest, "/scratch");
  EXPECT_EQ(m->tmpfs.size_bytes, 64u << 20);
  EXPECT_EQ(m->tmpfs.origin, "--mount");
  EXPECT_EQ(parse_mount_flag("type=tmpfs,dst=/t")->tmpfs.size_bytes, 0u);
  EXPECT_TRUE(parse_mount_flag("type=tmpfs,dst=/t,readonly=false").has_value());
}

TEST(MountFlag, VolumeNamesItsVolume) {
  auto m = parse_mount_flag("type=volume,source=data.1,target=/srv/data/,readonly");
  ASSERT_TRUE(m.has_value()) << m.error().what();
  EXPECT_EQ(m->type, MountFlag::Type::bind);
  EXPECT_EQ(m->bind.volume, "data.1");
  EXPECT_TRUE(m->bind.source.empty());
  EXPECT_EQ(m->bind.dest, "/srv/data");
  EXPECT_TRUE(m->bind.read_only);
  // A bind is no volume (the control).
  auto b = parse_mount_flag("type=bind,source=/data,target=/d");
  ASSERT_TRUE(b.has_value());
  EXPECT_TRUE(b->bind.volume.empty());
}

TEST(MountFlag, RefusalsSayWhy) {
  EXPECT_NE(refusal("src=/a,dst=/b").find("type= is required"), std::string::npos);
  EXPECT_NE(refusal("type=volume,dst=/b").find("needs source="), std::string::npos);
  EXPECT_NE(refusal("type=volume,src=a/b,dst=/b").find("invalid volume name"), std::string::npos);
  EXPECT_NE(refusal("type=volume,src=v,dst=/b,tmpfs-size=1m").find("for type=tmpfs"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/b,volume-nocopy").find("not supported"), std::string::npos);
  EXPECT_NE(refusal("type=npipe,src=/a,dst=/b").find("not bind, volume or tmpfs"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a").find("destination= (or dst=, target=) is required"), std::string::npos);
  EXPECT_NE(refusal("type=bind,dst=/b").find("needs source="), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=rel,dst=/b").find("not an absolute path"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=rel").find("not an absolute path"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/").find("cannot bind over the box's root"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/proc/sys").find("under /proc"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/b/../c").find("\"..\" component"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/b,src=/c").find("\"source\" is given twice"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/b,target=/c").find("\"destination\" is given twice"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/b,readonly=yes").find("not true, false, 1 or 0"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/b,bind-propagation=shared").find("always rprivate"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/b,bind-recursive=disabled").find("always recursive"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/b,tmpfs-size=1m").find("for type=tmpfs"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/b,,").find("an empty field"), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst=/b,sourse=/c").find("unknown key \"sourse\""), std::string::npos);
  EXPECT_NE(refusal("type=bind,src=/a,dst").find("needs a value"), std::string::npos);
  EXPECT_NE(refusal("type=tmpfs,src=/a,dst=/b").find("takes no source"), std::string::npos);
  EXPECT_NE(refusal("type=tmpfs,dst=/b,readonly").find("read-only tmpfs"), std::string::npos);
  EXPECT_NE(refusal("type=tmpfs,dst=/b,tmpfs-mode=700").find("mode 1777"), std::string::npos);
  EXPECT_NE(refusal("type=tmpfs,dst=/b,tmpfs-size=lots").find("tmpfs-size"), std::string::npos);
  EXPECT_NE(refusal("type=tmpfs,dst=/dev").find("cannot mount over \"/dev\""), std::string::npos);
  EXPECT_NE(refusal("type=tmpfs,dst=/proc").find("cannot mount over"), std::string::npos);
  EXPECT_NE(refusal("type=tmpfs,dst=/b,bind-propagation=rprivate").find("for type=bind"), std::string::npos);
  // Terminal escapes in the value are never echoed raw.
  EXPECT_EQ(refusal("type=\x1b[2J,dst=/b").find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace kern::cli
