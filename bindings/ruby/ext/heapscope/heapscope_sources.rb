# frozen_string_literal: true

# Where the extension finds libheapscope's C sources, shared by extconf.rb,
# the Rakefile and the gemspec.
#
# Inside the repository the sources are ../../src (relative to the gem) and
# the list of library files is read from ../../meson.build, so the gem never
# drifts from the library build.  A packaged gem carries a copy in
# ext/heapscope/vendor/ (same relative layout: the sources include each other
# as "../model/model.h"), made by `rake vendor` or by the gemspec itself when
# `gem build` runs inside the repository.
require "fileutils"

module HeapscopeSources
  EXT_DIR = __dir__
  GEM_ROOT = File.expand_path("../..", EXT_DIR)
  REPO = File.expand_path("../..", GEM_ROOT)
  VENDOR = File.join(EXT_DIR, "vendor")

  module_function

  # True when the gem sits in a heapscope checkout (bindings/ruby).
  def repo?
    File.file?(File.join(REPO, "meson.build")) &&
      File.file?(File.join(REPO, "include", "heapscope", "heapscope.h")) &&
      File.directory?(File.join(REPO, "src"))
  end

  def vendored?
    File.file?(File.join(VENDOR, "SOURCES"))
  end

  # The meson.build lists that together make the shipped library:
  # `lib_sources`, and `parallel_source`, the one file meson compiles a
  # second time, with test hooks, for the white-box tests.
  MESON_LISTS = %w[lib_sources parallel_source].freeze

  # Library sources ("src/core/core.c", ...) as listed in meson.build's
  # `lib_sources = files(...)` and `parallel_source = files(...)`.
  def meson_sources(root = REPO)
    # meson comments (# to the end of the line) out first: a ")" in one
    # would end the list early and silently drop the files after it
    text = File.read(File.join(root, "meson.build")).gsub(/#[^\n]*/, "")
    MESON_LISTS.flat_map do |name|
      block = text[/^#{name}\s*=\s*files\((.*?)\)/m, 1] or
        raise "heapscope: no `#{name} = files(...)` in #{root}/meson.build"
      list = block.scan(/'([^']+\.c)'/).flatten
      raise "heapscope: empty #{name} in meson.build" if list.empty?
      list
    end
  end

  def meson_version(root = REPO)
    File.read(File.join(root, "meson.build"))[/version\s*:\s*'([0-9][^']*)'/, 1] or
      raise "heapscope: no version in #{root}/meson.build"
  end

  # include/heapscope/version.h as meson's configure_file writes it.
  def version_h(root = REPO)
    v = meson_version(root)
    major, minor, patch = v.split(".").map(&:to_i)
    File.read(File.join(root, "include", "heapscope", "version.h.in"))
        .gsub("@VERSION@", v).gsub("@MAJOR@", major.to_s)
        .gsub("@MINOR@", minor.to_s).gsub("@PATCH@", (patch || 0).to_s)
  end

  # The tree extconf.rb compiles: { root:, sources: [...], include: dir }.
  # Prefers the repository (always current) over a stale vendor copy.
  def source_tree(gen_dir)
    if repo?
      inc = File.join(gen_dir, "heapscope-gen")
      FileUtils.mkdir_p(File.join(inc, "heapscope"))
      write_if_changed(File.join(inc, "heapscope", "version.h"), version_h)
      { root: REPO, sources: meson_sources, include: [inc, File.join(REPO, "include")] }
    elsif vendored?
      list = File.read(File.join(VENDOR, "SOURCES")).split("\n").reject(&:empty?)
      { root: VENDOR, sources: list, include: [File.join(VENDOR, "include")] }
    end
  end

  # Copy the library sources into ext/heapscope/vendor (idempotent).
  def vendor!(dest = VENDOR)
    raise "heapscope: not inside the repository; cannot vendor" unless repo?
    require "fileutils"
    sources = meson_sources
    dirs = sources.map { |s| File.dirname(s) }.uniq
    want = {}
    sources.each { |s| want[s] = File.join(REPO, s) }
    dirs.each do |d|
      Dir[File.join(REPO, d, "*.h")].each { |h| want[File.join(d, File.basename(h))] = h }
    end
    want["include/heapscope/heapscope.h"] = File.join(REPO, "include/heapscope/heapscope.h")
    want["LICENSE"] = File.join(REPO, "LICENSE") if File.file?(File.join(REPO, "LICENSE"))
    # Drop files that are no longer part of the library.
    if File.directory?(dest)
      Dir.glob("**/*", base: dest).each do |rel|
        path = File.join(dest, rel)
        next unless File.file?(path)
        next if want.key?(rel) || %w[SOURCES include/heapscope/version.h].include?(rel)
        File.delete(path)
      end
    end
    want.each do |rel, src|
      out = File.join(dest, rel)
      FileUtils.mkdir_p(File.dirname(out))
      write_if_changed(out, File.binread(src))
    end
    write_if_changed(File.join(dest, "include/heapscope/version.h"), version_h)
    write_if_changed(File.join(dest, "SOURCES"), sources.join("\n") + "\n")
    dest
  end

  def write_if_changed(path, data)
    return if File.file?(path) && File.binread(path) == data
    File.binwrite(path, data)
  end
end
