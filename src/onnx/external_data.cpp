#include "onnx/external_data.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace npukit::onnx {

namespace {

namespace fs = std::filesystem;

struct Located {
  fs::path file;
  uint64_t offset = 0;
  uint64_t length = 0;
};

bool parse_u64(const std::string& s, uint64_t& v) {
  if (s.empty() || s.size() > 19) return false;
  v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

// Fills `out` or returns why the entries cannot be used.
std::string locate(const ExternalEntries& entries, const std::string& model_dir, uint64_t bytes,
                   Located& out) {
  std::string location, offset_text, length_text;
  bool has_offset = false, has_length = false;
  for (const auto& [key, value] : entries) {
    if (key == "location") location = value;
    if (key == "offset") offset_text = value, has_offset = true;
    if (key == "length") length_text = value, has_length = true;
  }
  if (location.empty()) return "external data without a 'location' entry";
  const std::string where = "external data location '" + location + "'";
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    return where + " is an absolute path (allowed: a path relative to the model's directory)";
  for (const fs::path& part : rel)
    if (part == "..")
      return where + " leaves the model's directory (allowed: a path inside it, no '..')";
  std::error_code ec;
  const fs::path dir = fs::canonical(model_dir.empty() ? "." : model_dir, ec);
  if (ec) return where + ": the model's directory '" + model_dir + "' cannot be resolved";
  const fs::path file = fs::weakly_canonical(dir / rel, ec);
  // A symbolic link inside the directory may still point outside it.
  const auto [end, ignored] = std::mismatch(dir.begin(), dir.end(), file.begin(), file.end());
  (void)ignored;
  if (ec || end != dir.end())
    return where + " resolves outside the model's directory (allowed: a file inside '" +
           dir.string() + "')";
  if (!fs::is_regular_file(file, ec))
    return where + ": file '" + file.string() + "' does not exist or is not a regular file";
  const uint64_t size = fs::file_size(file, ec);
  if (ec) return where + ": the size of '" + file.string() + "' cannot be read";
  if (has_offset && !parse_u64(offset_text, out.offset))
    return where + ": offset '" + offset_text + "' is not a byte count";
  if (has_length && !parse_u64(length_text, out.length))
    return where + ": length '" + length_text + "' is not a byte count";
  if (has_length && out.length != bytes)
    return where + ": length " + length_text + " does not match the tensor's " +
           std::to_string(bytes) + " bytes";
  if (out.offset > size || bytes > size - out.offset)
    return where + ": offset " + std::to_string(out.offset) + " + " + std::to_string(bytes) +
           " bytes runs past the end of the file (" + std::to_string(size) + " bytes)";
  out.length = bytes;
  out.file = file;
  return "";
}

}  // namespace

std::string read_external_data(const ExternalEntries& entries, const std::string& model_dir,
                               void* dst, uint64_t bytes) {
  Located loc;
  std::string why = locate(entries, model_dir, bytes, loc);
  if (!why.empty()) return why;
  std::ifstream in(loc.file, std::ios::binary);
  if (!in) return "external data file '" + loc.file.string() + "' cannot be opened";
  in.seekg(static_cast<std::streamoff>(loc.offset));
  if (bytes) in.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes));
  if (!in || static_cast<uint64_t>(in.gcount()) != bytes)
    return "external data file '" + loc.file.string() + "': reading " + std::to_string(bytes) +
           " bytes at offset " + std::to_string(loc.offset) + " failed";
  return "";
}

}  // namespace npukit::onnx
