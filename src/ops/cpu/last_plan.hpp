// The last plan one thread built, kept while the calls that follow have an
// equal key: calls of one shape repeat (a network's layers, a benchmark), and
// building a plan can cost a large share of a small call. Shared, so a caller
// still holding a plan keeps it when a later call replaces it.
#pragma once

#include <memory>

namespace npukit::cpu {

template <class Key, class Plan>
class LastPlan {
 public:
  // The kept plan if key equals the last one, else build()'s (kept from now on).
  template <class Build>
  std::shared_ptr<const Plan> get(const Key& key, Build&& build) {
    if (!plan_ || !(key == key_)) {
      plan_ = std::make_shared<const Plan>(build());
      key_ = key;
    }
    return plan_;
  }

 private:
  Key key_{};
  std::shared_ptr<const Plan> plan_;
};

}  // namespace npukit::cpu
