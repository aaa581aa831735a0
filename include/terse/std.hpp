// Every standard type terse can log, in one include: containers, ranges,
// pairs and tuples; std::chrono durations and time points; std::optional,
// std::variant and std::monostate; std::error_code, std::filesystem::path
// and std::thread::id; std::bitset. Each also has a header of its own under
// <terse/std/>, for files that log only some of them and compile faster.
// Aggregates reflected by Boost.PFR come with <terse/aggregate.hpp>.
#pragma once

#include <terse/std/bitset.hpp>
#include <terse/std/chrono.hpp>
#include <terse/std/containers.hpp>
#include <terse/std/optional.hpp>
#include <terse/std/system.hpp>
#include <terse/std/variant.hpp>
