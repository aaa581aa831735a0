// Google Benchmark view of one logging call, for terse and, in the same
// binary, its baselines: fmt::format_to into memory (the floor for
// formatting at the call site) and spdlog's async logger. Names read
// CASE/LOGGER so that the runner can line the loggers up per case.
//
// The loggers run for real: their IO threads drain while the loop runs, so
// a call that outruns its IO thread waits for it and the figure is the
// sustained cost per call, not the cost into an empty buffer. That wait is
// off the CPU, which is why the figures are wall time (UseRealTime): CPU
// time would hide it. Each benchmark flushes after its loop, untimed, so
// that no backlog drains into the next one.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <terse/aggregate.hpp>
#include <terse/std.hpp>

#include "baselines.hpp"
#include "harness.hpp"

// Structured arguments. The baselines need formatters that print what the
// terse decoder prints, so every logger produces the same text.
namespace bench_types {

struct Request {
  int id;
  double latency_ms;
  int status;
  std::string_view path;
};

// Has its own formatter: terse formats it on the calling thread (the slow
// path a user opts in to with terse::format_eagerly).
struct Temperature {
  double degrees;
};

}  // namespace bench_types

TERSE_FIELDS(bench_types::Request, id, latency_ms, status, path);

template <>
struct fmt::formatter<bench_types::Request> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  auto format(const bench_types::Request& r, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "{{id: {}, latency_ms: {}, status: {}, path: {:?}}}", r.id, r.latency_ms, r.status,
                          r.path);
  }
};

template <>
struct fmt::formatter<bench_types::Temperature> : fmt::formatter<double> {
  auto format(const bench_types::Temperature& t, fmt::format_context& ctx) const {
    return fmt::format_to(fmt::formatter<double>::format(t.degrees, ctx), " C");
  }
};
template <>
inline constexpr bool terse::format_eagerly<bench_types::Temperature> = true;

namespace {

using bench_types::Request;
using bench_types::Temperature;

std::vector<int> g_ids{101, 102, 103, 104, 105, 106, 107, 108};
const std::vector<int>& ids_at(std::uint64_t i) {
  g_ids[0] = static_cast<int>(i);
  return g_ids;
}

const std::string g_text200 = bench::make_text(200);
const std::string g_text4k = bench::make_text(4096);
bench::SpdlogAsync g_spdlog;

// One case, three loggers, the same format string and arguments; `i` is
// the iteration number, so the values change from call to call.
#define BENCH_CASE(case_name, format, ...)                                           \
  void BM_##case_name##_terse(benchmark::State& state) {                             \
    std::uint64_t i = 0;                                                             \
    for (auto _ : state) {                                                           \
      ++i;                                                                           \
      TERSE_INFO(format __VA_OPT__(, ) __VA_ARGS__);                                 \
    }                                                                                \
    terse::flush();                                                                  \
    (void)i;                                                                         \
    state.SetItemsProcessed(state.iterations());                                     \
  }                                                                                  \
  void BM_##case_name##_fmt(benchmark::State& state) {                               \
    std::uint64_t i = 0;                                                             \
    fmt::memory_buffer buffer;                                                       \
    for (auto _ : state) {                                                           \
      ++i;                                                                           \
      buffer.clear();                                                                \
      fmt::format_to(std::back_inserter(buffer), format __VA_OPT__(, ) __VA_ARGS__); \
      benchmark::DoNotOptimize(buffer.data());                                       \
      benchmark::ClobberMemory();                                                    \
    }                                                                                \
    (void)i;                                                                         \
    state.SetItemsProcessed(state.iterations());                                     \
  }                                                                                  \
  void BM_##case_name##_spdlog(benchmark::State& state) {                            \
    std::uint64_t i = 0;                                                             \
    auto& logger = g_spdlog;                                                         \
    for (auto _ : state) {                                                           \
      ++i;                                                                           \
      logger.raw().info(format __VA_OPT__(, ) __VA_ARGS__);                          \
    }                                                                                \
    logger.flush();                                                                  \
    (void)i;                                                                         \
    state.SetItemsProcessed(state.iterations());                                     \
  }                                                                                  \
  BENCHMARK(BM_##case_name##_terse)->Name(#case_name "/terse")->UseRealTime();       \
  BENCHMARK(BM_##case_name##_fmt)->Name(#case_name "/fmt_format_to")->UseRealTime(); \
  BENCHMARK(BM_##case_name##_spdlog)->Name(#case_name "/spdlog_async")->UseRealTime();

BENCH_CASE(no_args, "service ready")
BENCH_CASE(three_ints, "counters {} {} {}", static_cast<int>(i), static_cast<int>(i * 3), 42)
BENCH_CASE(canonical, "request {} took {} us status {} path {}", static_cast<int>(i),
           12.5 + static_cast<double>(i & 1023) * 0.25, 200, "/api/v1/users")
BENCH_CASE(string_200, "text {}", std::string_view(g_text200))
BENCH_CASE(string_4k, "text {}", std::string_view(g_text4k))
BENCH_CASE(struct_4_fields, "request {}", Request{static_cast<int>(i), 12.5, 200, "/api/v1/users"})
BENCH_CASE(vector_8_ints, "ids {}", ids_at(i))
BENCH_CASE(eager_formatted, "temperature {}", Temperature{20.0 + static_cast<double>(i & 15)})

// What a call costs by what becomes of it, beside a written one with the
// same arguments. "disabled_global_check" is the check every call made
// before levels per module: one global level, loaded and compared.
std::atomic<int> g_global_level{static_cast<int>(terse::Level::info)};

void BM_kind_written(benchmark::State& state) {
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    TERSE_INFO("counters {} {} {}", static_cast<int>(i), static_cast<int>(i * 3), 42);
  }
  terse::flush();
  state.SetItemsProcessed(state.iterations());
}
void BM_kind_disabled(benchmark::State& state) {
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    TERSE_DEBUG("counters {} {} {}", static_cast<int>(i), static_cast<int>(i * 3), 42);
  }
  benchmark::DoNotOptimize(i);
  state.SetItemsProcessed(state.iterations());
}
void BM_kind_disabled_global_check(benchmark::State& state) {
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    if (g_global_level.load(std::memory_order_relaxed) <= static_cast<int>(terse::Level::debug))
      benchmark::DoNotOptimize(i);
  }
  benchmark::DoNotOptimize(i);
  state.SetItemsProcessed(state.iterations());
}
// Rate-limited sites past their first record: every call here is suppressed.
void BM_kind_suppressed_every_n(benchmark::State& state) {
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    TERSE_LOG_EVERY_N(terse::Level::info, 1'000'000'000'000, "counters {} {} {}", static_cast<int>(i),
                      static_cast<int>(i * 3), 42);
  }
  terse::flush();
  state.SetItemsProcessed(state.iterations());
}
void BM_kind_suppressed_first_n(benchmark::State& state) {
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    TERSE_LOG_FIRST_N(terse::Level::info, 1, "counters {} {} {}", static_cast<int>(i), static_cast<int>(i * 3), 42);
  }
  terse::flush();
  state.SetItemsProcessed(state.iterations());
}
void BM_kind_suppressed_every(benchmark::State& state) {
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    TERSE_LOG_EVERY(terse::Level::info, std::chrono::hours(1), "counters {} {} {}", static_cast<int>(i),
                    static_cast<int>(i * 3), 42);
  }
  terse::flush();
  state.SetItemsProcessed(state.iterations());
}
// Recorded by the flight recorder and not written (Config::flight_level at
// debug, the call at debug, no trigger): the logger restarts with the
// recorder on for it, untimed, and goes back to the plain config after.
std::string g_terse_dir;
void restart_terse(terse::Level flight_level) {
  terse::stop();
  terse::Config config;
  config.directory = g_terse_dir;
  config.name = "bench";
  config.flight_level = flight_level;
  terse::start(config);
}
void BM_kind_recorded(benchmark::State& state) {
  restart_terse(terse::Level::debug);
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    TERSE_DEBUG("counters {} {} {}", static_cast<int>(i), static_cast<int>(i * 3), 42);
  }
  terse::flush();
  state.SetItemsProcessed(state.iterations());
  restart_terse(terse::Level::off);
}
// A written call inside a terse::Context copies nothing more; creating and
// ending a context writes a push and a pop record, measured together.
void BM_kind_with_context(benchmark::State& state) {
  terse::Context request("request_id", 42);
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    TERSE_INFO("counters {} {} {}", static_cast<int>(i), static_cast<int>(i * 3), 42);
  }
  terse::flush();
  state.SetItemsProcessed(state.iterations());
}
void BM_kind_context_push_pop(benchmark::State& state) {
  std::uint64_t i = 0;
  for (auto _ : state) {
    ++i;
    terse::Context request("request_id", i);
  }
  terse::flush();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_kind_written)->Name("kind/written")->UseRealTime();
BENCHMARK(BM_kind_with_context)->Name("kind/with_context")->UseRealTime();
BENCHMARK(BM_kind_context_push_pop)->Name("kind/context_push_pop")->UseRealTime();
BENCHMARK(BM_kind_recorded)->Name("kind/recorded")->UseRealTime();
BENCHMARK(BM_kind_suppressed_every_n)->Name("kind/suppressed_every_n")->UseRealTime();
BENCHMARK(BM_kind_suppressed_first_n)->Name("kind/suppressed_first_n")->UseRealTime();
BENCHMARK(BM_kind_suppressed_every)->Name("kind/suppressed_every")->UseRealTime();
BENCHMARK(BM_kind_disabled)->Name("kind/disabled")->UseRealTime();
BENCHMARK(BM_kind_disabled_global_check)->Name("kind/disabled_global_check")->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  auto cpus = bench::allowed_cpus();
  bench::pin_to_cpu(cpus.back());

  bench::TempDir terse_dir("bench-micro-terse");
  bench::TempDir spdlog_dir("bench-micro-spdlog");
  bench::TerseLogger terse_logger;
  terse_logger.start(terse_dir.path());
  g_terse_dir = terse_dir.path();
  g_spdlog.start(spdlog_dir.path());

  benchmark::RunSpecifiedBenchmarks();

  terse_logger.flush();
  g_spdlog.flush();
  std::fprintf(stderr, "micro: terse wrote %.1f MiB, spdlog %.1f MiB\n",
               static_cast<double>(bench::directory_bytes(terse_dir.path())) / (1 << 20),
               static_cast<double>(bench::directory_bytes(spdlog_dir.path())) / (1 << 20));
  terse_logger.stop();
  g_spdlog.stop();
  benchmark::Shutdown();
  return 0;
}
