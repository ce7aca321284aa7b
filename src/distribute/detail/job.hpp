#pragma once
// The distributed tune's protocol, apart from MPI: rank 0 coordinates, every
// rank serves. The MPI job (mpi_job.cpp) and the tests' in-process job
// (local.hpp) are two transports for the same two functions.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunekit/spec.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::detail {

// What passes between rank 0 and the ranks. A transport carries the body
// as bytes and the kind as it likes (MPI: as the message's tag).
struct Message {
  enum class Kind {
    hello = 1,  // rank -> 0: the machine it tunes on, or why it cannot tune
    assign,     // 0 -> rank: a size to tune, with what the store knows of it
    trial,      // rank -> 0: a trial, as it was stored
    progress,   // rank -> 0: its size's trials so far, its plan, what it does now
    done,       // rank -> 0: the size's report
    failed,     // rank -> 0: the size could not be tuned (an error)
    stop,       // 0 -> rank: no more sizes
    halt,       // 0 -> rank: the job stops; end the size, dropping the trial in flight
    stopped,    // rank -> 0: stopped (a signal) while it waited for a size
  };
  Kind kind = Kind::hello;
  int rank = 0;      // the sender's (rank 0 receiving), the receiver's (rank 0 sending)
  std::string body;  // JSON
};

// Rank 0's view of the job: messages to and from every rank, its own too.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual int ranks() const = 0;
  virtual void send(const Message& message) = 0;  // to message.rank
  // The next message from any rank, or nullopt once `wait` has passed.
  virtual std::optional<Message> receive(std::chrono::milliseconds wait) = 0;
};

// One rank's view: its messages to and from rank 0.
class Link {
 public:
  virtual ~Link() = default;
  virtual int rank() const = 0;
  virtual void send(Message message) = 0;  // to rank 0; message.rank is set to this rank
  virtual Message receive() = 0;          // from rank 0; blocks
  virtual std::optional<Message> poll() = 0;  // from rank 0, if one has come
};

// Rank 0's part: hands out the sizes, in the spec's order, to whichever rank
// is free, and keeps the store (the spec's, as tune() would). Returns the
// job's report, sizes in the spec's order.
// - A rank whose machine is not rank 0's tunes nothing, and a warning says
//   so: one size's best would be picked across two machines.
// - A rank that cannot tune a size (an environment's error) tunes nothing
//   more; the size goes to another rank.
// - A stop, of rank 0 (stop.hpp) or of any rank (a batch system signals one
//   node before it ends a job), stops the job: every rank ends its size,
//   dropping its trial in flight, and no size is handed out.
// Throws InputError when a rank's tune throws one (every rank reads the same
// spec), std::runtime_error when rank 0 or every rank cannot tune.
// What every rank's hello carries and rank 0 checks: the kernel and its
// inputs, the space, the sizes and the objective, as a digest; the kernel as
// the rank's device (TuneOptions::device) builds it.
std::string tune_identity(const Spec& spec, int device = 0);

TuneReport coordinate(Transport& transport, const Spec& spec, const TuneOptions& options,
                      const ProgressCallback& progress = {});

// A rank's part (rank 0's from a thread of its own): says hello, then tunes
// each size rank 0 hands it until told to stop. Keeps its files in
// options.out_dir/ranks/rank-N, shares the job's build cache
// (options.out_dir/cache), takes options.device, and tunes into a scratch
// store of its own, filled with what rank 0 sent.
// Never throws: an error is a message to rank 0.
void serve(Link& link, const Spec& spec, const TuneOptions& options);

// How many ranks an MPI launcher started this process among, by the
// environment it gives its ranks (Open MPI's mpirun, MPICH's hydra, Slurm's
// srun with PMI); 0 when none did.
int launched_ranks();
// This process's rank among them, by the same environment, before MPI is
// joined; 0 when no launcher started it.
int launched_rank();

// How a job ends that cannot start: `statuses` holds every rank's exit
// status after it read the flags and the spec (MpiJob::statuses: 0 ready,
// 1 bad input, 2 another error). nullopt when every rank is ready. Else the
// first rank that failed says why: an error every rank meets alike (a
// spec's, a flag's) is said once, by rank 0, and one only another rank
// meets (a file missing on its host) is still said. Every rank exits, with
// its own status, or with the speaker's where it failed in nothing.
struct JobEnd {
  bool speaks = false;  // this rank prints the error
  int status = 0;       // and exits with this
};
std::optional<JobEnd> end_before_tune(const std::vector<int>& statuses, int rank);

// The forms the messages' bodies carry (every field, losslessly).
nlohmann::ordered_json trial_to_json(const TrialRecord& t);
TrialRecord trial_from_json(const nlohmann::ordered_json& j);
nlohmann::ordered_json size_report_to_json(const SizeReport& s);
SizeReport size_report_from_json(const nlohmann::ordered_json& j);

}  // namespace tunekit::detail
