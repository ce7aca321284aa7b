#pragma once
// Reading a documentation page the way its tests run it: the
// `build/bin/tunekit ...` commands of its ```sh blocks, and its code blocks
// of one language with the file each one shows.
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tunekit::testing {

// The lines of ```sh blocks that start with `prefix` (`build/bin/tunekit ...`,
// or `mpirun ...`), with `\` continuations joined.
inline std::vector<std::string> tunekit_commands(const std::string& markdown,
                                                 const std::string& prefix = "build/bin/tunekit ") {
  std::vector<std::string> out;
  std::istringstream in(markdown);
  bool in_sh = false;
  std::string pending;
  for (std::string line; std::getline(in, line);) {
    const auto start = line.find_first_not_of(' ');
    const std::string text = start == std::string::npos ? "" : line.substr(start);
    if (text.rfind("```", 0) == 0) {
      in_sh = !in_sh && text == "```sh";
      continue;
    }
    if (!in_sh) continue;
    if (!pending.empty() || text.rfind(prefix, 0) == 0) {
      pending += text;
      if (!pending.empty() && pending.back() == '\\') pending.pop_back();
      else {
        out.push_back(pending);
        pending.clear();
      }
    }
  }
  return out;
}

// The ```LANG blocks of a page, each with the file named by the
// `<!-- file: PATH -->` comment on the line before its fence (empty when
// there is none).
inline std::vector<std::pair<std::string, std::string>> code_blocks(const std::string& markdown,
                                                                    const std::string& lang) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(markdown);
  std::string previous, body, file;
  bool inside = false, wanted = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) {
      if (!inside) {
        inside = true;
        wanted = line == "```" + lang;
        body.clear();
        file.clear();
        const std::string tag = "<!-- file: ";
        if (previous.rfind(tag, 0) == 0 && previous.size() > tag.size() + 4)
          file = previous.substr(tag.size(), previous.size() - tag.size() - 4);
      } else {
        inside = false;
        if (wanted) out.emplace_back(file, body);
      }
    } else if (inside) {
      body += line + "\n";
    }
    previous = line;
  }
  return out;
}

inline std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

}  // namespace tunekit::testing
