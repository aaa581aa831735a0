// What terse_crash_child logs before it dies, for the test that counts it.
#pragma once

namespace terse::test {

inline constexpr int kCrashThreads = 2;
inline constexpr int kCrashRecordsPerThread = 5000;

}  // namespace terse::test
