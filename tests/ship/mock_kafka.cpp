// A mock Kafka cluster in a process of its own, so that a benchmark can pin
// `terse ship` to a core without the brokers sharing it.
//
//   terse_mock_kafka --brokers N --topic T --partitions P [--replication R]
//
// Prints "BOOTSTRAP host:port,..." once, then takes commands on stdin, one a
// line, and answers each with "ok" or "error: ...":
//   down ID | up ID | leader PARTITION ID | rtt ID MS | errors COUNT | quit
// "errors COUNT" fails the next COUNT Produce requests with
// NOT_LEADER_FOR_PARTITION; "rtt ID MS" delays the broker's answers. EOF on stdin, SIGTERM and SIGINT end it too.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>

#include "kafka_harness.hpp"

namespace {

struct Options {
  int brokers = 3;
  std::string topic;
  int partitions = 1;
  int replication = 1;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "terse_mock_kafka: %s\n"
               "usage: terse_mock_kafka --brokers N --topic T --partitions P [--replication R]\n",
               why.c_str());
  std::exit(2);
}

int positive(const std::string& name, const char* text) {
  try {
    std::size_t used = 0;
    int v = std::stoi(text, &used);
    if (used == std::strlen(text) && v > 0) return v;
  } catch (const std::exception&) {
  }
  usage(name + " wants a positive number, not '" + text + "'");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) usage(arg + " needs a value");
    const char* value = argv[++i];
    if (arg == "--brokers")
      o.brokers = positive(arg, value);
    else if (arg == "--topic")
      o.topic = value;
    else if (arg == "--partitions")
      o.partitions = positive(arg, value);
    else if (arg == "--replication")
      o.replication = positive(arg, value);
    else
      usage("unknown option " + arg);
  }
  if (o.topic.empty()) usage("--topic is required");
  return o;
}

void say(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

// Runs one command line; false for quit.
bool command(terse::test::MockCluster& cluster, const std::string& topic, const std::string& line) {
  std::istringstream in(line);
  std::string verb;
  if (!(in >> verb)) return true;  // blank lines are not commands
  int wanted = verb == "leader" || verb == "rtt" ? 2 : verb == "quit" ? 0 : 1;
  int args[2] = {0, 0};
  bool parsed =
      verb == "quit" || verb == "down" || verb == "up" || verb == "leader" || verb == "rtt" || verb == "errors";
  for (int i = 0; parsed && i < wanted; ++i) parsed = static_cast<bool>(in >> args[i]);
  std::string rest;
  if (!parsed || in >> rest || (verb == "errors" && args[0] < 0) || (verb == "rtt" && args[1] < 0)) {
    say("error: cannot read '" + line + "' (down ID, up ID, leader PARTITION ID, rtt ID MS, errors COUNT, quit)");
    return true;
  }
  try {
    if (verb == "quit") {
      say("ok");
      return false;
    }
    if (verb == "down") cluster.broker_down(args[0]);
    if (verb == "up") cluster.broker_up(args[0]);
    if (verb == "leader") cluster.set_leader(topic, args[0], args[1]);
    if (verb == "rtt") cluster.set_rtt(args[0], args[1]);
    if (verb == "errors") cluster.push_produce_errors(args[0], RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  } catch (const std::exception& e) {
    say(std::string("error: ") + e.what());
    return true;
  }
  say("ok");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts = parse(argc, argv);

  // Blocked before librdkafka starts its threads, so the signals reach only
  // the signalfd below and the cluster is torn down in order.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  int signal_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
  if (signal_fd < 0) {
    std::perror("terse_mock_kafka: signalfd");
    return 1;
  }

  try {
    terse::test::MockCluster cluster(opts.brokers);
    cluster.create_topic(opts.topic, opts.partitions, opts.replication);
    say("BOOTSTRAP " + cluster.bootstraps());

    std::string pending;
    bool running = true;
    while (running) {
      pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {signal_fd, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        std::perror("terse_mock_kafka: poll");
        break;
      }
      if (fds[1].revents != 0) break;
      if (fds[0].revents == 0) continue;
      char buffer[4096];
      ssize_t got = ::read(STDIN_FILENO, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;  // EOF: whoever started us is gone
      pending.append(buffer, static_cast<std::size_t>(got));
      std::size_t end;
      while (running && (end = pending.find('\n')) != std::string::npos) {
        std::string line = pending.substr(0, end);
        pending.erase(0, end + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        running = command(cluster, opts.topic, line);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "terse_mock_kafka: %s\n", e.what());
    ::close(signal_fd);
    return 1;
  }
  ::close(signal_fd);
  return 0;
}
