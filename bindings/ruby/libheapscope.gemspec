# frozen_string_literal: true

require_relative "lib/heapscope/version"
require_relative "ext/heapscope/heapscope_sources"

# Inside the repository, building the gem packs a fresh copy of the
# library's C sources (ext/heapscope/vendor), so the .gem compiles anywhere
# with zlib and xxhash headers.  An installed libheapscope (pkg-config) is
# preferred at install time when present.
HeapscopeSources.vendor! if HeapscopeSources.repo?

# Published as "libheapscope": the name "heapscope" on rubygems.org belongs
# to an unrelated memory tool.  The gem vendors and binds libheapscope, and
# is still loaded with `require "heapscope"` (module Heapscope);
# lib/libheapscope.rb makes Bundler's auto-require of `gem "libheapscope"`
# work too.  See README.md, "The gem's name".
Gem::Specification.new do |s|
  s.name = "libheapscope"
  s.version = Heapscope::VERSION
  s.summary = "Ruby binding of libheapscope: fast analysis of Ruby heap dumps " \
              "(ObjectSpace.dump_all), in C; require \"heapscope\" (not the heapscope gem)"
  s.description = <<~DESC
    The Ruby binding of libheapscope, the C library of the heapscope project
    (the heapscope CLI, a C API and this gem).  Install it as libheapscope and
    load it with `require "heapscope"` (module Heapscope); it is not the
    unrelated gem published as "heapscope".  It reads Ruby heap dumps (plain
    or gzip, kilobytes to tens of gigabytes) and answers what is on the heap,
    where it was allocated, what leaked between snapshots and what keeps it
    alive: tallies by file:line:class, 3-snapshot diffs, dominator trees and
    retained sizes, paths from the GC roots.  In-process snapshots parse the
    dump while it is written, without a temporary file; find_leaks runs a
    block three times and reports what it leaks.  The library's C sources are
    in the gem: it compiles anywhere with zlib and xxhash headers, or links
    an installed libheapscope.
  DESC
  s.license = "MIT"
  s.authors = ["heapscope contributors"]
  s.required_ruby_version = ">= 2.7"

  s.files = Dir.chdir(__dir__) do
    Dir["README.md", "lib/**/*.rb", "ext/heapscope/*.{c,h,rb,map}",
        "ext/heapscope/vendor/**/*"].select { |f| File.file?(f) }.sort
  end
  s.require_paths = ["lib"]
  s.extensions = ["ext/heapscope/extconf.rb"]
  s.metadata = { "rubygems_mfa_required" => "true" }
end
