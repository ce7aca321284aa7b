#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backend/cpu/detail/cpu_backend.hpp"
#include "builder/detail/compiler.hpp"
#include "tunekit/output.hpp"
#include "core/detail/hash.hpp"
#include "core/detail/process.hpp"

namespace tunekit::cpu {

namespace fs = std::filesystem;

std::string call_shim(const BuildInput& in) {
  std::string call;
  for (std::size_t i = 0; i < in.arguments.size(); ++i) {
    const auto& a = in.arguments[i];
    if (i) call += ", ";
    // Buffers convert to whatever pointer type the entry declares (const
    // float*, _Float16*, a user's struct*); scalars are read in their type.
    call += a.role == Role::scalar ? fmt::format("*({}*)tk_args[{}]", c_type_name(a.type), i)
                                   : fmt::format("tk_pointer(tk_args[{}])", i);
  }
  // Every name the shim declares starts with tk_: a parameter reaches the
  // source as a -D define, and one named T or p must not rewrite the shim.
  // Its own #line: a compiler's message about the call (an entry the
  // source lacks) must not point past the end of the user's file.
  return fmt::format(
      "\n#line 1 \"<tunekit: the call of {1}>\"\n#include <stdint.h>\n"
      "#ifdef __cplusplus\n"
      "struct tk_pointer {{\n  void* tk_p;\n  explicit tk_pointer(void* tk_q) : tk_p(tk_q) {{}}\n"
      "  template <class tk_type> operator tk_type*() const {{ return static_cast<tk_type*>(tk_p); }}\n}};\n"
      "extern \"C\"\n#else\n#define tk_pointer(tk_p) (tk_p)\n#endif\n"
      "__attribute__((visibility(\"default\"))) void {0}(void** tk_args) {{\n  (void)tk_args;\n  {1}({2});\n}}\n",
      kLaunchSymbol, in.entry, call);
}

CpuBuilder::CpuBuilder(fs::path cache_dir, bool rebuild) : cache_dir_(std::move(cache_dir)), claims_(rebuild) {
  fs::create_directories(cache_dir_);
  detail::remove_files_of_killed_builds(cache_dir_);
}

namespace {

// How every variant becomes a library. -Bsymbolic binds the call shim's call
// of the entry to the entry in the same library: without it, an entry named
// like a function the C library exports (warn, index, random) was resolved
// to the C library's, already loaded in the worker, and the kernel never ran.
// Part of each variant's hash: a library linked otherwise is another.
const std::vector<std::string>& link_flags() {
  static const std::vector<std::string> flags{"-shared", "-fPIC", "-Wl,-Bsymbolic"};
  return flags;
}

}  // namespace

BuildResult CpuBuilder::build(const BuildInput& in) {
  BuildResult r;
  detail::Hasher linked;
  linked.add(in.hash());
  for (const auto& f : link_flags()) linked.add(f);
  const std::string hash = linked.hex();
  r.artifact = {cache_dir_ / (hash + ".so"), hash};
  if (claims_.cached(hash, {r.artifact.path})) {
    r.cached = true;
    return r;
  }
  const bool c = in.language == "c";
  // Names of this process's own: two tuners sharing the cache build the
  // same variant side by side, and each renames its own library into place.
  const std::string own = hash + "." + detail::unique_suffix();
  const fs::path src = cache_dir_ / (own + (c ? ".c" : ".cpp"));
  // A copy cut short (a full disk) would fail to compile as the config's
  // source: the machine's failure, and no part of it stays in the cache.
  try {
    write_file_atomically(src, "#line 1 \"" + in.source_name + "\"\n" + in.source + call_shim(in));
  } catch (const std::exception& e) {
    r.status = Status::compile_error;
    r.fault = Fault::environment;
    r.log = e.what();
    return r;
  }
  const fs::path tmp = cache_dir_ / (own + ".tmp.so");
  std::vector<std::string> argv{in.compiler};
  argv.insert(argv.end(), in.flags.begin(), in.flags.end());
  for (const auto& d : in.defines) argv.push_back("-D" + d);
  // The copy compiles here: its own headers are found where it came from.
  if (const fs::path dir = fs::path(in.source_name).parent_path(); !dir.empty())
    argv.insert(argv.end(), {"-iquote", dir.string()});
  argv.insert(argv.end(), link_flags().begin(), link_flags().end());
  argv.insert(argv.end(), {"-o", tmp.string(), src.string()});
  if (!detail::run_compiler(argv, "the compiler", in.timeout, r)) {
    std::error_code ec;
    fs::remove(tmp, ec);
    fs::remove(src, ec);
    return r;
  }
  std::error_code ec;
  fs::rename(tmp, r.artifact.path, ec);  // atomic: a killed run never leaves half a library
  if (ec) {
    fs::remove(tmp, ec);
    r.status = Status::compile_error;
    r.fault = Fault::environment;
    r.log = fmt::format("cannot move the library into the cache ({}): {}", r.artifact.path.string(), ec.message());
  }
  fs::remove(src, ec);
  return r;
}

}  // namespace tunekit::cpu
