// The site registry on its own: first calls that race agree on one id per
// site, and every copy the registry makes stays reachable (a copy that lost
// the race used to be dropped, which the leak checker reports).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <terse/detail/site.hpp>

#include "registry.hpp"

using terse::detail::Site;

TEST_CASE("threads that register the same sites at once agree on their ids") {
  constexpr int kThreads = 8;
  constexpr int kSites = 2000;
  static const std::uint8_t tags[] = {3};
  std::vector<std::string> formats;
  for (int i = 0; i < kSites; ++i) formats.push_back("site " + std::to_string(i) + " {}");
  std::vector<std::unique_ptr<Site>> sites;
  for (int i = 0; i < kSites; ++i)
    sites.push_back(std::unique_ptr<Site>(
        new Site{formats[i].c_str(), "registry_test.cpp", static_cast<std::uint32_t>(i + 1), 2, 1, tags}));

  std::vector<std::vector<std::uint32_t>> seen(kThreads, std::vector<std::uint32_t>(kSites));
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) {
      }
      // Half the threads walk the sites backwards, so that most sites see a race.
      for (int k = 0; k < kSites; ++k) {
        int i = t % 2 == 0 ? k : kSites - 1 - k;
        seen[t][i] = terse::detail::register_site(*sites[i]);
      }
    });
  }
  for (auto& thread : threads) thread.join();

  std::vector<bool> used(terse::detail::site_id_bound(), false);
  for (int i = 0; i < kSites; ++i) {
    std::uint32_t id = sites[i]->id.load();
    REQUIRE(id != 0);
    for (int t = 0; t < kThreads; ++t) REQUIRE(seen[t][i] == id);
    REQUIRE(id < used.size());
    CHECK_FALSE(used[id]);
    used[id] = true;
    const terse::detail::SiteInfo* info = terse::detail::site_info(id);
    REQUIRE(info != nullptr);
    CHECK(info->format == formats[i]);
    CHECK(info->line == static_cast<std::uint32_t>(i + 1));
  }
  // The walk sees each site once, under the id its site holds.
  int walked = 0;
  terse::detail::for_each_site([&](const terse::detail::SiteInfo& info) {
    if (info.file == "registry_test.cpp") ++walked;
  });
  CHECK(walked == kSites);
}
