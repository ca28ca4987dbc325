# frozen_string_literal: true

# Build the heapscope extension.
#
# Where libheapscope comes from, in this order:
#   1. a meson build directory (uninstalled library), given by
#      --with-heapscope-build=DIR or HEAPSCOPE_BUILD=DIR: its
#      meson-uninstalled/heapscope-uninstalled.pc is used and DIR goes into
#      the extension's rpath;
#   2. an installed libheapscope found by `pkg-config heapscope`;
#   3. the library's own C sources, compiled into the extension: from the
#      repository (../../src relative to the gem) or from the copy vendored
#      into ext/heapscope/vendor when the gem was built.
# --enable-system-libheapscope (HEAPSCOPE_USE_SYSTEM=1) makes 2 mandatory;
# --disable-system-libheapscope (HEAPSCOPE_USE_SYSTEM=0) skips 1 and 2.
#
# Whatever the source, only Init_heapscope is exported: everything is
# compiled with -fvisibility=hidden and linked with a version script.

require "mkmf"
require_relative "heapscope_sources"

def heapscope_abort(msg)
  abort "heapscope: #{msg}"
end

use_system = enable_config("system-libheapscope", nil)
case ENV["HEAPSCOPE_USE_SYSTEM"]
when "1", "yes", "true" then use_system = true
when "0", "no", "false" then use_system = false
end
build_dir = with_config("heapscope-build") || ENV["HEAPSCOPE_BUILD"]
build_dir = nil if build_dir.is_a?(String) && build_dir.empty?

$CFLAGS << " -fvisibility=hidden"
$defs << "-D_GNU_SOURCE" << "-D_FILE_OFFSET_BITS=64"

linked = nil
if use_system != false && build_dir
  build_dir = File.expand_path(build_dir)
  pc_dir = File.join(build_dir, "meson-uninstalled")
  unless File.file?(File.join(pc_dir, "heapscope-uninstalled.pc"))
    heapscope_abort "#{build_dir} is not a meson build of heapscope " \
                    "(no meson-uninstalled/heapscope-uninstalled.pc)"
  end
  ENV["PKG_CONFIG_PATH"] = [pc_dir, ENV["PKG_CONFIG_PATH"]].compact.reject(&:empty?).join(":")
  pkg_config("heapscope-uninstalled") or heapscope_abort "pkg-config failed for #{pc_dir}"
  $LDFLAGS << " -Wl,-rpath,#{build_dir}"
  linked = "meson build #{build_dir}"
elsif use_system != false && pkg_config("heapscope")
  linked = "system libheapscope (pkg-config)"
elsif use_system == true
  heapscope_abort "--enable-system-libheapscope given, but `pkg-config heapscope` " \
                  "found nothing (set PKG_CONFIG_PATH?)"
end

if linked
  have_header("heapscope/heapscope.h") or heapscope_abort "heapscope/heapscope.h not usable"
  have_library("heapscope", "hscope_version_string", "heapscope/heapscope.h") or
    heapscope_abort "cannot link libheapscope"
else
  tree = HeapscopeSources.source_tree(File.expand_path(Dir.pwd)) or
    heapscope_abort "no libheapscope: not found by pkg-config, no repository " \
                    "(#{HeapscopeSources::REPO}) and no vendored sources " \
                    "(#{HeapscopeSources::VENDOR}; run `rake vendor`)"
  linked = "bundled sources from #{tree[:root]}"
  # xxhash (header-only use: XXH_INLINE_ALL) as meson.build wants it.
  pkg_config("libxxhash")
  have_header("xxhash.h") or heapscope_abort "xxhash.h not found (apt-get install libxxhash-dev)"
  # Optional, as in meson.build: gzip dumps inflate about 3x as fast with
  # ISA-L (apt-get install libisal-dev); without it, zlib does it all.
  if have_library("isal", "isal_inflate", "isa-l/igzip_lib.h")
    $defs << "-DHSCOPE_HAVE_ISAL"
    linked += ", gzip by ISA-L"
  end
  have_library("m", "floor", "math.h") # the report layer's charts and fits
  tree[:include].each { |dir| $INCFLAGS << " -I#{dir}" }
  # Compile the sources flat: file names are unique across src/, and quoted
  # includes resolve relative to each file, so VPATH is enough.
  $srcs = Dir[File.join(__dir__, "rb_*.c")].map { |s| File.basename(s) }.sort +
          tree[:sources].map { |s| File.basename(s) }
  tree[:sources].map { |s| File.dirname(File.join(tree[:root], s)) }.uniq.each { |d| $VPATH << d }
  # The library is C11 with its own warning set; Ruby's extension warnings
  # (-Wold-style-definition & co.) say nothing useful about it.
  $warnflags = "-Wall -Wno-unused-parameter"
end

# zlib: the library inflates with it, and the binding itself gzips
# Heapscope.dump(gzip: true) on a native thread (GzipSink), linked or not.
pkg_config("zlib") || have_library("z", "gzdopen", "zlib.h") or
  heapscope_abort "zlib not found (apt-get install zlib1g-dev)"
have_library("pthread", "pthread_create", "pthread.h")

have_func("rb_io_descriptor", "ruby/io.h")
have_func("rb_gc_adjust_memory_usage", "ruby.h")

map = File.join(__dir__, "heapscope_ext.map")
$DLDFLAGS << " -Wl,--version-script=#{map}" if RbConfig::CONFIG["host_os"] =~ /linux|gnu/

message "heapscope: using #{linked}\n"
create_makefile("heapscope/heapscope")
