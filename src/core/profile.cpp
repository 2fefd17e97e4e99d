#include "npukit/profile.hpp"

#include "npukit/error.hpp"

namespace npukit {

const std::vector<Profile>& all_profiles() {
  static const std::vector<Profile> all = {Profile::onnxruntime,      Profile::pytorch,
                                           Profile::ghp_rtl,          Profile::ghp_golden,
                                           Profile::bm1684,           Profile::cvm,
                                           Profile::tflite,           Profile::mico,
                                           Profile::onnxruntime_avx2, Profile::onnxruntime_vnni};
  return all;
}

const char* profile_name(Profile p) {
  switch (p) {
    case Profile::onnxruntime:
      return "onnxruntime";
    case Profile::pytorch:
      return "pytorch";
    case Profile::ghp_rtl:
      return "ghp_rtl";
    case Profile::ghp_golden:
      return "ghp_golden";
    case Profile::bm1684:
      return "bm1684";
    case Profile::cvm:
      return "cvm";
    case Profile::tflite:
      return "tflite";
    case Profile::mico:
      return "mico";
    case Profile::onnxruntime_avx2:
      return "onnxruntime_avx2";
    case Profile::onnxruntime_vnni:
      return "onnxruntime_vnni";
  }
  return "invalid";
}

std::string profile_names() {
  std::string s;
  for (Profile p : all_profiles()) s += (s.empty() ? "" : ", ") + std::string(profile_name(p));
  return s;
}

Profile semantics_base(Profile p) {
  return p == Profile::onnxruntime_avx2 || p == Profile::onnxruntime_vnni ? Profile::onnxruntime
                                                                          : p;
}

Profile profile_from_name(const std::string& name) {
  for (Profile p : all_profiles())
    if (name == profile_name(p)) return p;
  fail("npukit::profile_from_name", "name", "'" + name + "'", profile_names());
}

}  // namespace npukit
