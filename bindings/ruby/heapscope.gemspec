# frozen_string_literal: true

require_relative "lib/heapscope/version"
require_relative "ext/heapscope/heapscope_sources"

# Inside the repository, building the gem packs a fresh copy of the
# library's C sources (ext/heapscope/vendor), so the .gem compiles anywhere
# with zlib and xxhash headers.  An installed libheapscope (pkg-config) is
# preferred at install time when present.
HeapscopeSources.vendor! if HeapscopeSources.repo?

Gem::Specification.new do |s|
  s.name = "heapscope"
  s.version = Heapscope::VERSION
  s.summary = "Fast analysis of Ruby heap dumps (ObjectSpace.dump_all), in C"
  s.description = <<~DESC
    Reads Ruby heap dumps (plain or gzip, kilobytes to tens of gigabytes) with
    libheapscope and answers what is on the heap, where it was allocated, what
    leaked between snapshots and what keeps it alive: tallies by
    file:line:class, 3-snapshot diffs, dominator trees and retained sizes,
    paths from the GC roots.  In-process snapshots parse the dump while it is
    written, without a temporary file; find_leaks runs a block three times
    and reports what it leaks.
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
