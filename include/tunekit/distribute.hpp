#pragma once
// Tuning spread over the ranks of an MPI job: `mpirun -n 8 tunekit tune
// spec.yaml` tunes the spec's sizes on eight devices at once. Rank 0 keeps
// the store and hands out the sizes, in the spec's order, to whichever rank
// is free (itself included); each rank tunes its size with its own backend
// and worker process (the builds are shared), and passes each trial to rank
// 0 as it is stored. So the store is written by one process only, a size tuned later
// is still seeded with the fastest configs of those tuned before on any
// rank, and a rerun resumes from rank 0's store whatever the number of
// ranks.
#include <memory>
#include <vector>

#include "tunekit/spec.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {

// The MPI job this process is a rank of.
class MpiJob {
 public:
  // Joins the job when an MPI launcher started this process as one of
  // several ranks (mpirun, srun: its environment says so), else nullptr.
  // Throws std::runtime_error when it did but this tunekit was built
  // without MPI (TUNEKIT_ENABLE_MPI), naming the option.
  static std::unique_ptr<MpiJob> join();
  virtual ~MpiJob() = default;
  virtual int rank() const = 0;
  virtual int ranks() const = 0;
  // This rank's index among the ranks on its host: its device.
  virtual int local_rank() const = 0;
  // Before tune(), every rank at once (a collective): this rank's exit
  // status after reading the flags and the spec (0: ready to tune; 1: bad
  // input; 2: another error). Returns every rank's, in rank order, so that
  // the ranks end together when one cannot start and only one says why.
  virtual std::vector<int> statuses(int mine) = 0;
  // Ends a job that will not tune, every rank at once: returns once every
  // rank has come here, so that what one rank printed is out before any
  // rank exits (and the launcher ends the job).
  virtual void end() = 0;
  // Runs the job: rank 0 coordinates while a thread of its own serves; the
  // other ranks serve. Returns the whole report on rank 0 and an empty one
  // on the others. Ends MPI only when the job ended well: a rank that
  // throws leaves without it, and the launcher ends the others.
  virtual TuneReport tune(const Spec& spec, TuneOptions options, const ProgressCallback& progress = {}) = 0;
};

}  // namespace tunekit
