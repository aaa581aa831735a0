// Call sites in files of their own, so that selectors have paths to match:
// tests/control/net/conn.cpp and tests/control/db/query.cpp.
#pragma once

namespace levels_test {

// net/conn.cpp: "net debug R" and "net info R".
void net_log(int round);
// A debug site that no other test calls: "net fresh R".
void net_fresh(int round);

// db/query.cpp: "db trace R", "db debug R" and "db info R".
void db_log(int round);
// The line of db_log's debug site, for a call-site selector.
int db_debug_line();
// An info site first called before start(): "db early R".
void db_early(int round);
// An info site first called while the level is warn: "db late R".
void db_late(int round);

}  // namespace levels_test
