// Timing that the writer promises and a following reader relies on. Not
// part of the bytes on disk, but a contract between the two sides all the
// same, so it lives with the format.
#pragma once

#include <chrono>

namespace terse::schema {

// The longest a written batch waits to fill: a record logged while the
// writer keeps up is in its file this long after it was logged, plus the
// time to compress and write it.
inline constexpr std::chrono::milliseconds kMaxBatchDelay{50};

// How long a follower of several inputs waits on one that shows nothing new
// before it lets the others' records through: the writer's delay, and room
// for a busy machine.
inline constexpr std::chrono::milliseconds kFollowGrace = 4 * kMaxBatchDelay;

}  // namespace terse::schema
