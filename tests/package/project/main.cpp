// A program that knows terse only as an installed package: built once with
// find_package(terse) and once with pkg-config. It logs at several levels and
// in a context, so that the packaged CLI and the lnav format have each kind
// of field to show.
#include <terse/terse.hpp>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  terse::Config config;
  config.directory = argv[1];
  config.name = "packaged";
  terse::start(config);
  TERSE_INFO("started with {} workers", 4);
  {
    terse::Context request("request_id", 42);
    TERSE_WARN("queue depth {} over limit {}", 130, 100);
    TERSE_ERROR("connect to {} failed after {:.1f} s", "db.internal", 2.5);
  }
  TERSE_DEBUG("below the level: {}", 1);
  terse::stop();
  return 0;
}
