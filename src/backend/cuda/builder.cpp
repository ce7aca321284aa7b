#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <chrono>
#include <mutex>
#include <map>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "backend/cuda/detail/cuda_backend.hpp"
#include "backend/cuda/detail/nvrtc.hpp"
#include "builder/detail/compiler.hpp"
#include "tunekit/output.hpp"
#include "core/detail/hash.hpp"
#include "core/detail/text.hpp"
#include "core/detail/process.hpp"

namespace tunekit::cuda {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---- Sidecars -------------------------------------------------------------

fs::path sidecar_path(const fs::path& cubin) {
  fs::path p = cubin;
  p.replace_extension(".json");
  return p;
}

void write_sidecar(const fs::path& file, const KernelSymbol& s) {
  nlohmann::json j{{"entry", s.entry},
                   {"lowered", s.lowered},
                   {"arch", s.arch},
                   {"compiler", s.compiler},
                   {"resources", s.resources}};
  std::ofstream(file, std::ios::binary) << j.dump() << "\n";
}

std::optional<KernelSymbol> read_sidecar(const fs::path& file) {
  std::ifstream f(file, std::ios::binary);
  if (!f) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(f);
    KernelSymbol s;
    s.entry = j.at("entry").get<std::string>();
    s.lowered = j.at("lowered").get<std::string>();
    s.arch = j.value("arch", "");
    s.compiler = j.value("compiler", "");
    if (j.contains("resources")) s.resources = j.at("resources").get<KernelResources>();
    return s;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// ---- Options --------------------------------------------------------------

fs::path cuda_include_dir() {
  std::vector<fs::path> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v);
  roots.emplace_back("/usr/local/cuda");
  for (const auto& r : roots) {
    std::error_code ec;
    if (fs::exists(r / "include" / "cuda_fp16.h", ec)) return r / "include";
  }
  return {};
}

std::vector<std::string> nvrtc_options(const BuildInput& in, const std::string& arch) {
  std::vector<std::string> o{"--gpu-architecture=" + arch};
  for (const auto& d : in.defines) o.push_back("-D" + d);
  // The kernel's own headers, beside its source.
  if (const fs::path dir = fs::path(in.source_name).parent_path(); !dir.empty())
    o.push_back("--include-path=" + dir.string());
  if (static const fs::path inc = cuda_include_dir(); !inc.empty()) o.push_back("--include-path=" + inc.string());
  o.push_back("--ptxas-options=-v");  // the resources report
  o.insert(o.end(), in.flags.begin(), in.flags.end());
  return o;
}

// ---- ptxas's report ---------------------------------------------------------

namespace {

// The count written just before `what` in `line` ("24" of "Used 24
// registers" for " registers"), or nullopt.
std::optional<std::int64_t> count_before(std::string_view line, std::string_view what) {
  const std::size_t at = line.find(what);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t begin = at;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  if (begin == at) return std::nullopt;
  std::int64_t n = 0;
  for (std::size_t i = begin; i < at; ++i) n = n * 10 + (line[i] - '0');
  return n;
}

// A line of the report: "ptxas info : ...", and the properties under
// "Function properties for X" (nvcc indents them, NVRTC writes "ptxas .").
// No warning or error of the compiler's reads so.
bool is_report_line(std::string_view line) {
  return line.starts_with("ptxas info") || (line.find(" bytes stack frame") != std::string_view::npos &&
                                            line.find(" bytes spill stores") != std::string_view::npos);
}

template <class F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    f(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

}  // namespace

KernelResources ptxas_resources(std::string_view log, std::string_view symbol) {
  KernelResources out;
  bool ours = false, properties = false;
  const std::string entry_line = fmt::format("Compiling entry function '{}'", symbol);
  const std::string properties_line = fmt::format("Function properties for {}", symbol);
  for_each_line(log, [&](std::string_view line) {
    if (line.find("Compiling entry function") != std::string_view::npos) {
      ours = line.find(entry_line) != std::string_view::npos;
      properties = false;
      return;
    }
    if (!ours) return;
    if (line.find("Function properties for") != std::string_view::npos) {
      properties = line.ends_with(properties_line) || line.find(properties_line + " ") != std::string_view::npos;
      return;
    }
    if (properties && line.find(" bytes stack frame") != std::string_view::npos) {
      properties = false;
      for (auto [key, what] : {std::pair{"stack_bytes", " bytes stack frame"},
                               {"spill_store_bytes", " bytes spill stores"},
                               {"spill_load_bytes", " bytes spill loads"}})
        if (auto n = count_before(line, what)) out[key] = *n;
      if (auto stores = out.find("spill_store_bytes"); stores != out.end()) out["spills"] = (stores->second + 3) / 4;
      return;
    }
    if (line.find("Used ") != std::string_view::npos && line.find(" registers") != std::string_view::npos) {
      for (auto [key, what] :
           {std::pair{"registers", " registers"}, {"barriers", " barriers"}, {"shared_memory", " bytes smem"}})
        if (auto n = count_before(line, what)) out[key] = *n;
      ours = false;  // the entry's last line
    }
  });
  return out;
}

namespace {

// ptxas's report of each program NVRTC compiled in this process, by its
// source and options. On the H100 machine NVRTC gave an empty log for a
// program it had compiled before in the process (a reference function's
// source is the baseline variant's; a test compiles one source twice),
// though its first compile reported every entry: the report of the first
// serves the later ones. Capped: a run compiles each variant once.
class ProgramReports {
 public:
  // The entry's resources in `report`, else in the program's remembered
  // report; a report that has them is remembered.
  KernelResources resources(const std::string& program, const std::string& report, std::string_view symbol) {
    KernelResources found = ptxas_resources(report, symbol);
    std::lock_guard lock(mutex_);
    if (!found.empty()) {
      if (reports_.size() < kMaxPrograms) reports_.emplace(program, report);
    } else if (const auto it = reports_.find(program); it != reports_.end()) {
      found = ptxas_resources(it->second, symbol);
    }
    return found;
  }

 private:
  static constexpr std::size_t kMaxPrograms = 1024;
  std::mutex mutex_;
  std::map<std::string, std::string> reports_;
};

ProgramReports& program_reports() {
  static ProgramReports reports;
  return reports;
}

}  // namespace

std::string without_ptxas_report(std::string_view log) {
  std::string out;
  for_each_line(log, [&](std::string_view line) {
    if (is_report_line(line)) return;
    out.append(line);
    out += '\n';
  });
  if (!out.empty() && !log.ends_with('\n')) out.pop_back();
  return out;
}

// ---- Cubins ---------------------------------------------------------------

namespace {

template <class T>
T read_at(std::string_view b, std::size_t off) {
  T v{};
  if (off + sizeof(T) <= b.size()) std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

// Whitespace only where it separates two identifier characters, as one space.
std::string normalise(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!std::isspace(static_cast<unsigned char>(s[i]))) {
      out += s[i];
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (!out.empty() && j < s.size() && detail::identifier_char(out.back()) && detail::identifier_char(s[j]))
      out += ' ';
    i = j - 1;
  }
  return out;
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return mangled;
  std::string s(d);
  std::free(d);
  return s;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Writes through a temporary name, so a killed run never leaves half a file.
void write_atomically(const fs::path& file, std::string_view bytes) {
  const fs::path tmp = file.string() + "." + detail::unique_suffix() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  fs::rename(tmp, file);
}

std::string nvcc_path() {
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v)
      if (fs::exists(fs::path(v) / "bin" / "nvcc")) return (fs::path(v) / "bin" / "nvcc").string();
  if (const std::string found = detail::on_path("nvcc"); found != "nvcc") return found;
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "nvcc";
}

}  // namespace

std::string nvcc_host_compiler(const std::vector<std::string>& flags) {
  // As nvcc reads them (seen with nvcc 13.0's -dryrun): $NVCC_PREPEND_FLAGS
  // before the command's flags and $NVCC_APPEND_FLAGS after, the last
  // -ccbin winning, then $NVCC_CCBIN; a folder holds the gcc it runs.
  const auto words = [](const char* variable) {
    std::vector<std::string> out;
    std::istringstream in(std::getenv(variable) ? std::getenv(variable) : "");
    for (std::string word; in >> word;) out.push_back(word);
    return out;
  };
  std::vector<std::string> all = words("NVCC_PREPEND_FLAGS");
  all.insert(all.end(), flags.begin(), flags.end());
  for (std::string& w : words("NVCC_APPEND_FLAGS")) all.push_back(std::move(w));
  std::string named;
  for (std::size_t i = 0; i < all.size(); ++i)
    for (const std::string_view option : {"-ccbin", "--compiler-bindir"}) {
      const std::string_view word = all[i];
      if (word == option && i + 1 < all.size()) named = all[i + 1];
      else if (word.starts_with(option) && word.size() > option.size() && word[option.size()] == '=')
        named = word.substr(option.size() + 1);
    }
  if (const char* env = std::getenv("NVCC_CCBIN"); named.empty() && env && *env) named = env;
  if (named.empty()) return "gcc";
  std::error_code ec;
  return fs::is_directory(named, ec) ? (fs::path(named) / "gcc").string() : named;
}

std::string toolchain_identity(std::string_view compiler, const std::vector<std::string>& flags) {
  // The toolkit's version, not its install: a store is read on other
  // machines (select, emit, MPI ranks on other hosts), where the same
  // release sits elsewhere and was installed at another time. NVRTC by its
  // version; nvcc ($CUDA_HOME's first, as builds run it) by its release line
  // ("Cuda compilation tools, release 13.0, V13.0.88"), once per process.
  if (compiler != "nvcc") {
    const Nvrtc* n = nvrtc();
    return n ? fmt::format("nvrtc {}.{}", n->major, n->minor) : std::string("nvrtc");
  }
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::string toolkit;
  {
    const std::lock_guard lock(mutex);
    const std::string nvcc = nvcc_path();
    if (auto it = known.find(nvcc); it != known.end()) {
      toolkit = it->second;
    } else {
      std::string release;
      try {
        const detail::ProcessResult r = detail::run_process({nvcc, "--version"}, std::chrono::seconds(60));
        if (r.exit_code == 0 && r.signal == 0)
          if (const auto at = r.output.find("release "); at != std::string::npos)
            release = r.output.substr(at, r.output.find('\n', at) - at);
      } catch (const std::exception&) {
      }
      // No version to read (no nvcc there): a build fails on its own account.
      toolkit = known[nvcc] = "nvcc " + (release.empty() ? detail::compiler_identity(nvcc) : release);
    }
  }
  // Even a -cubin build runs the host compiler: it preprocesses the source
  // (its headers and predefined macros) and cicc is told its version, so
  // another release of it is another kernel. By its release, as the CPU's
  // compiler is; by its name where it runs no file (the build fails).
  const std::string host = nvcc_host_compiler(flags);
  const std::string release = detail::compiler_release(host);
  return toolkit + " host " + (release.empty() ? host : release);
}

CubinInfo inspect_cubin(std::string_view b) {
  CubinInfo info;
  if (b.size() < 64 || b.substr(0, 4) != std::string_view("\x7f"
                                                          "ELF",
                                                          4)) {
    info.error = "not an ELF file";
    return info;
  }
  if (b[4] != 2) {
    info.error = "not a 64-bit ELF file";
    return info;
  }
  info.machine = read_at<std::uint16_t>(b, 18);
  info.flags = read_at<std::uint32_t>(b, 48);
  // e_flags: the SM version sits in the low byte (EF_CUDA_SM, ABI <= 7) or
  // in bits 8-15 (ABI 8, CUDA 12.8 on).
  const unsigned abi = static_cast<unsigned char>(b[8]);
  info.sm = static_cast<int>(abi >= 8 ? (info.flags >> 8) & 0xff : info.flags & 0xff);
  const auto shoff = read_at<std::uint64_t>(b, 40);
  const auto shentsize = read_at<std::uint16_t>(b, 58);
  const auto shnum = read_at<std::uint16_t>(b, 60);
  if (shentsize != 64 || shoff + std::uint64_t{shnum} * 64 > b.size()) {
    info.error = "bad section table";
    return info;
  }
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::size_t sh = shoff + i * 64ull;
    if (read_at<std::uint32_t>(b, sh + 4) != 2) continue;  // SHT_SYMTAB
    const auto off = read_at<std::uint64_t>(b, sh + 24);
    const auto size = read_at<std::uint64_t>(b, sh + 32);
    const auto link = read_at<std::uint32_t>(b, sh + 40);
    const auto entsize = read_at<std::uint64_t>(b, sh + 56);
    if (link >= shnum || entsize != 24 || off + size > b.size()) continue;
    const std::size_t strsh = shoff + link * 64ull;
    const auto stroff = read_at<std::uint64_t>(b, strsh + 24);
    const auto strsize = read_at<std::uint64_t>(b, strsh + 32);
    if (stroff + strsize > b.size()) continue;
    for (std::uint64_t s = off; s + 24 <= off + size; s += 24) {
      const auto name = read_at<std::uint32_t>(b, s);
      const auto st_info = static_cast<unsigned char>(b[s + 4]);
      const unsigned type = st_info & 0xf, bind = st_info >> 4;
      if (type != 2 || (bind != 1 && bind != 2) || name >= strsize) continue;  // STT_FUNC, GLOBAL or WEAK
      const char* p = b.data() + stroff + name;
      info.functions.emplace_back(p, strnlen(p, strsize - name));
    }
  }
  info.valid = true;
  return info;
}

std::optional<std::string> match_entry(const std::vector<std::string>& functions, std::string_view entry) {
  const std::string want = normalise(entry);
  for (const auto& f : functions)
    if (f == entry) return f;
  for (const auto& f : functions) {
    const std::string d = normalise(demangle(f));
    for (std::size_t pos = d.find(want + "("); pos != std::string::npos; pos = d.find(want + "(", pos + 1))
      if (pos == 0 || d[pos - 1] == ' ') return f;
  }
  if (functions.size() == 1) return functions.front();
  return std::nullopt;
}

// ---- The builder ----------------------------------------------------------

CudaBuilder::CudaBuilder(fs::path cache_dir, bool rebuild, std::string arch)
    : cache_dir_(std::move(cache_dir)), claims_(rebuild), arch_(std::move(arch)) {
  fs::create_directories(cache_dir_);
  detail::remove_files_of_killed_builds(cache_dir_);
}

BuildResult CudaBuilder::build(const BuildInput& in) {
  BuildResult r;
  const std::string arch = arch_for(in);
  if (arch.empty()) {
    r.status = Status::compile_error;
    r.log = "no CUDA architecture: the spec names none (kernel.arch) and there is no device to take it from";
    return r;
  }
  const bool nvcc = in.compiler == "nvcc";
  // The nvcc this builder runs ($CUDA_HOME's first, not $PATH's, which
  // BuildInput::hash knows) with the host compiler it runs (which the
  // environment may name), and for NVRTC the headers it compiles with:
  // another toolkit under $CUDA_HOME builds other code under the same name.
  // (The install, not only the version: this key names this machine's
  // cache, which no other machine reads.)
  std::string toolchain;
  if (nvcc) {
    toolchain = "nvcc " + detail::compiler_identity(nvcc_path()) + " host " +
                detail::compiler_identity(nvcc_host_compiler(in.flags));
  } else {
    const Nvrtc* n = nvrtc();
    if (!n) {
      r.status = Status::compile_error;
      r.log = nvrtc_unavailable_reason();
      return r;
    }
    static const fs::path include = cuda_include_dir();
    toolchain = fmt::format("nvrtc {}.{} {}", n->major, n->minor,
                            include.empty() ? "" : detail::compiler_identity((include / "cuda_fp16.h").string()));
  }
  // The resolved architecture and the compiler's version are part of the
  // identity: an input naming no arch builds differently on another GPU.
  // ("resources": cubins cached before their sidecars kept ptxas's report
  // are built again, to have it.)
  const std::string hash = detail::Hasher().add(in.hash()).add(arch).add(toolchain).add("resources").hex();
  r.artifact = {cache_dir_ / (hash + ".cubin"), hash};
  if (claims_.cached(hash, {r.artifact.path, sidecar_path(r.artifact.path)})) {
    r.cached = true;
    if (auto side = read_sidecar(sidecar_path(r.artifact.path))) r.resources = std::move(side->resources);
  } else {
    r = nvcc ? build_nvcc(in, arch, std::move(r)) : build_nvrtc(in, arch, std::move(r));
  }
  // Judged after the cache, so that a spec's new limit applies to the
  // variants already built.
  if (auto spills = r.resources.find("spills");
      r.status == Status::ok && in.max_spills && spills != r.resources.end() && spills->second > *in.max_spills) {
    r.status = Status::resource_limit;
    r.fault = Fault::config;
    r.log = fmt::format("{} registers spilled ({} bytes of spill stores); the spec allows {} (kernel.max_spills)",
                        spills->second, r.resources["spill_store_bytes"], *in.max_spills);
  }
  return r;
}

BuildResult CudaBuilder::build_nvrtc(const BuildInput& in, const std::string& arch, BuildResult r) {
  const Nvrtc& n = *nvrtc();
  const auto t0 = Clock::now();
  nvrtcProgram prog = nullptr;
  const std::string source = in.source;
  const std::string name = in.source_name.empty() ? "kernel.cu" : in.source_name;
  if (nvrtcResult e = n.nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr);
      e != NVRTC_SUCCESS) {
    r.status = Status::compile_error;
    r.log = std::string("nvrtcCreateProgram: ") + n.nvrtcGetErrorString(e);
    return r;
  }
  struct Guard {
    const Nvrtc& n;
    nvrtcProgram& p;
    ~Guard() { n.nvrtcDestroyProgram(&p); }
  } guard{n, prog};
  // The entry as a name expression: NVRTC instantiates a template entry and
  // tells its mangled name.
  n.nvrtcAddNameExpression(prog, in.entry.c_str());
  const std::vector<std::string> options = nvrtc_options(in, arch);
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult compiled = n.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  std::size_t log_size = 0;
  n.nvrtcGetProgramLogSize(prog, &log_size);
  if (log_size > 1) {
    std::string log(log_size, '\0');
    n.nvrtcGetProgramLog(prog, log.data());
    log.resize(std::strlen(log.c_str()));
    r.log = std::move(log);
  }
  const std::string report = std::exchange(r.log, without_ptxas_report(r.log));
  r.time = Clock::now() - t0;
  if (compiled != NVRTC_SUCCESS) {
    r.status = Status::compile_error;
    if (r.log.empty()) r.log = n.nvrtcGetErrorString(compiled);
    return r;
  }
  const char* lowered = nullptr;
  if (n.nvrtcGetLoweredName(prog, in.entry.c_str(), &lowered) != NVRTC_SUCCESS || !lowered) {
    r.status = Status::compile_error;
    r.log = fmt::format("the entry '{}' is not a kernel of this source\n{}", in.entry, r.log);
    return r;
  }
  std::size_t size = 0;
  if (nvrtcResult e = n.nvrtcGetCUBINSize(prog, &size); e != NVRTC_SUCCESS || size == 0) {
    r.status = Status::compile_error;
    r.log = fmt::format("no cubin for {} (is it a real architecture, sm_XX?): {}\n{}", arch, n.nvrtcGetErrorString(e),
                        r.log);
    return r;
  }
  std::string cubin(size, '\0');
  n.nvrtcGetCUBIN(prog, cubin.data());
  const std::string program = detail::Hasher().add(source).add(fmt::format("{}", fmt::join(options, "\n"))).hex();
  r.resources = program_reports().resources(program, report, lowered);
  write_sidecar(sidecar_path(r.artifact.path),
                {in.entry, lowered, arch, fmt::format("nvrtc {}.{}", n.major, n.minor), r.resources});
  write_atomically(r.artifact.path, cubin);
  r.time = Clock::now() - t0;
  return r;
}

BuildResult CudaBuilder::build_nvcc(const BuildInput& in, const std::string& arch, BuildResult r) {
  const std::string own = r.artifact.hash + "." + detail::unique_suffix();
  const fs::path src = cache_dir_ / (own + ".cu");
  const fs::path tmp = cache_dir_ / (own + ".tmp.cubin");
  // The copy and nvcc's output are this build's alone: no failure leaves them
  // in the cache, one for each config, each run.
  const auto remove_own_files = [&] {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    fs::remove(src, ignored);
  };
  std::string copy = "#line 1 \"" + in.source_name + "\"\n" + in.source + "\n";
  // Taking the address instantiates a template entry in the device code.
  if (in.entry.find('<') != std::string::npos)
    copy += "\n/* tunekit: instantiate the entry */\nstatic void* const tunekit_entry_address = (void*)&" + in.entry +
            ";\n";
  // A copy cut short (a full disk) would fail to compile as the config's
  // source: the machine's failure.
  try {
    write_file_atomically(src, copy);
  } catch (const std::exception& e) {
    r.status = Status::compile_error;
    r.fault = Fault::environment;
    r.log = e.what();
    remove_own_files();
    return r;
  }
  const std::string virt = arch.rfind("sm_", 0) == 0 ? "compute_" + arch.substr(3) : arch;
  std::vector<std::string> argv{nvcc_path(), "-cubin", "-gencode=arch=" + virt + ",code=" + arch, "--ptxas-options=-v"};
  for (const auto& d : in.defines) argv.push_back("-D" + d);
  argv.insert(argv.end(), in.flags.begin(), in.flags.end());
  // The copy compiles here: its own headers are found where it came from.
  if (const fs::path dir = fs::path(in.source_name).parent_path(); !dir.empty()) argv.push_back("-I" + dir.string());
  argv.insert(argv.end(), {"-o", tmp.string(), src.string()});
  const bool compiled = detail::run_compiler(argv, "nvcc", in.timeout, r);
  const std::string report = std::exchange(r.log, without_ptxas_report(r.log));
  if (!compiled) {
    remove_own_files();
    return r;
  }
  const std::string cubin = read_file(tmp);
  const CubinInfo info = inspect_cubin(cubin);
  const auto symbol = info.valid ? match_entry(info.functions, in.entry) : std::nullopt;
  if (!symbol) {
    r.status = Status::compile_error;
    r.log = fmt::format("the entry '{}' is not a kernel of this source (the cubin has: {})\n{}", in.entry,
                        fmt::join(info.functions, ", "), r.log);
    remove_own_files();
    return r;
  }
  r.resources = ptxas_resources(report, *symbol);
  write_sidecar(sidecar_path(r.artifact.path), {in.entry, *symbol, arch, argv.front(), r.resources});
  fs::rename(tmp, r.artifact.path);
  fs::remove(src);
  return r;
}

}  // namespace tunekit::cuda
