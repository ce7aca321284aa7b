// The distributed tune over MPI: messages are MPI messages (the body as
// bytes, the kind as the tag); rank 0's own rank is a thread beside the
// coordinator, so only the main thread ever calls MPI (MPI_THREAD_FUNNELED).
#include <mpi.h>  // the C API (CMake's MPI_CXX_SKIP_MPICXX leaves MPI's C++ bindings out)

#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "distribute/detail/job.hpp"
#include "distribute/detail/local.hpp"
#include "tunekit/distribute.hpp"
#include "tunekit/stop.hpp"

namespace tunekit {

namespace {

using detail::Message;

// How long a rank with nothing to do sleeps between looks at the network.
// MPI's blocking receive spins a core, which would disturb the timings of a
// rank measuring beside it.
constexpr auto kPoll = std::chrono::milliseconds(2);

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(fmt::format("MPI: {} failed: {}", what, text));
}

void send_to(int rank, const Message& m) {
  check(MPI_Send(m.body.data(), static_cast<int>(m.body.size()), MPI_CHAR, rank, static_cast<int>(m.kind),
                 MPI_COMM_WORLD),
        "MPI_Send");
}

// The message MPI_Iprobe found, received.
Message take(const MPI_Status& probed) {
  int count = 0;
  check(MPI_Get_count(&probed, MPI_CHAR, &count), "MPI_Get_count");
  Message m;
  m.kind = static_cast<Message::Kind>(probed.MPI_TAG);
  m.rank = probed.MPI_SOURCE;
  m.body.resize(static_cast<std::size_t>(count));
  check(MPI_Recv(m.body.data(), count, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE),
        "MPI_Recv");
  return m;
}

std::optional<Message> poll_from(int from) {
  int found = 0;
  MPI_Status status;
  check(MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &status), "MPI_Iprobe");
  if (!found) return std::nullopt;
  return take(status);
}

// Rank 0's view: the other ranks over MPI, its own through mailboxes.
class MpiTransport : public detail::Transport {
 public:
  MpiTransport(int ranks, detail::Mailbox& coordinator, detail::Mailbox& own)
      : ranks_(ranks), coordinator_(coordinator), own_(own) {}
  int ranks() const override { return ranks_; }
  void send(const Message& m) override {
    if (m.rank == 0) own_.push(m);
    else send_to(m.rank, m);
  }
  std::optional<Message> receive(std::chrono::milliseconds wait) override {
    const auto until = std::chrono::steady_clock::now() + wait;
    do {
      if (auto m = poll_from(MPI_ANY_SOURCE)) return m;
      if (auto m = coordinator_.pop(kPoll)) return m;
    } while (std::chrono::steady_clock::now() < until);
    return std::nullopt;
  }

 private:
  int ranks_;
  detail::Mailbox& coordinator_;
  detail::Mailbox& own_;
};

class MpiLink : public detail::Link {
 public:
  explicit MpiLink(int rank) : rank_(rank) {}
  int rank() const override { return rank_; }
  void send(Message m) override { send_to(0, m); }
  Message receive() override {
    for (;;) {
      if (auto m = poll_from(0)) return *m;
      std::this_thread::sleep_for(kPoll);
    }
  }
  std::optional<Message> poll() override { return poll_from(0); }

 private:
  int rank_;
};

class Job : public MpiJob {
 public:
  Job() {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &ranks_), "MPI_Comm_size");
    MPI_Comm host;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host),
          "MPI_Comm_split_type");
    check(MPI_Comm_rank(host, &local_rank_), "MPI_Comm_rank");
    MPI_Comm_free(&host);
  }
  int rank() const override { return rank_; }
  int ranks() const override { return ranks_; }
  int local_rank() const override { return local_rank_; }

  std::vector<int> statuses(int mine) override {
    std::vector<int> all(static_cast<std::size_t>(ranks_));
    check(MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
    return all;
  }

  void end() override {
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    MPI_Finalize();
  }

  TuneReport tune(const Spec& spec, TuneOptions options, const ProgressCallback& progress) override {
    options.device = local_rank_;
    TuneReport report;
    if (rank_ == 0) {
      detail::Mailbox coordinator, own;
      MpiTransport transport(ranks_, coordinator, own);
      detail::LocalLink link(0, coordinator, own);
      std::thread server([&] { detail::serve(link, spec, options); });
      try {
        report = detail::coordinate(transport, spec, options, progress);
      } catch (...) {
        // The thread ends after its trial in flight; the launcher ends the
        // other ranks when this one leaves without MPI_Finalize.
        request_stop();
        own.push({Message::Kind::stop, 0, "{}"});
        server.join();
        throw;
      }
      server.join();
    } else {
      MpiLink link(rank_);
      detail::serve(link, spec, options);
    }
    MPI_Finalize();
    return report;
  }

 private:
  int rank_ = 0, ranks_ = 1, local_rank_ = 0;
};

}  // namespace

std::unique_ptr<MpiJob> MpiJob::join() {
  if (detail::launched_ranks() < 2) return nullptr;
  return std::make_unique<Job>();
}

}  // namespace tunekit
