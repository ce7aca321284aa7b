#pragma once
// Messages between threads of one process: rank 0 serves from a thread of
// its own beside the coordinator, and the tests run a whole job in one
// process, a thread per rank.
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "distribute/detail/job.hpp"

namespace tunekit::detail {

class Mailbox {
 public:
  void push(Message m) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(m));
    }
    ready_.notify_one();
  }
  // The oldest message, or nullopt once `wait` has passed.
  std::optional<Message> pop(std::chrono::milliseconds wait) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, wait, [&] { return !queue_.empty(); })) return std::nullopt;
    Message m = std::move(queue_.front());
    queue_.pop_front();
    return m;
  }
  Message pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !queue_.empty(); });
    Message m = std::move(queue_.front());
    queue_.pop_front();
    return m;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Message> queue_;
};

// A rank in this process: it posts to the coordinator's mailbox and reads
// its own.
class LocalLink : public Link {
 public:
  LocalLink(int rank, Mailbox& coordinator, Mailbox& own) : rank_(rank), coordinator_(coordinator), own_(own) {}
  int rank() const override { return rank_; }
  void send(Message m) override {
    m.rank = rank_;
    coordinator_.push(std::move(m));
  }
  Message receive() override { return own_.pop(); }
  std::optional<Message> poll() override { return own_.pop(std::chrono::milliseconds(0)); }

 private:
  int rank_;
  Mailbox& coordinator_;
  Mailbox& own_;
};

// A whole job in this process: every rank a LocalLink.
class LocalTransport : public Transport {
 public:
  explicit LocalTransport(int ranks) : mailboxes_(static_cast<std::size_t>(ranks)) {
    for (int r = 0; r < ranks; ++r) links_.push_back(std::make_unique<LocalLink>(r, coordinator_, mailboxes_[r]));
  }
  Link& link(int rank) { return *links_.at(static_cast<std::size_t>(rank)); }
  int ranks() const override { return static_cast<int>(links_.size()); }
  void send(const Message& m) override { mailboxes_.at(static_cast<std::size_t>(m.rank)).push(m); }
  std::optional<Message> receive(std::chrono::milliseconds wait) override { return coordinator_.pop(wait); }

 private:
  Mailbox coordinator_;
  std::vector<Mailbox> mailboxes_;
  std::vector<std::unique_ptr<LocalLink>> links_;
};

}  // namespace tunekit::detail
