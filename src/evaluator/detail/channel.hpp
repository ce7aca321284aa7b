#pragma once
// The worker's end of its channel to the tuner. The tuner starts the worker
// with the request pipe on fd $TUNEKIT_REQUEST_FD and the reply pipe on
// $TUNEKIT_REPLY_FD; the worker moves both to descriptors a kernel cannot
// guess (so a kernel that writes to fd 3, or reads stdin, touches neither),
// and prefixes every answer with $TUNEKIT_REPLY_TOKEN. It also asks the
// kernel to kill it when the tuner dies ($TUNEKIT_PARENT_PID): a worker
// never outlives its tuner, even one killed with SIGKILL.
#include <string>

namespace tunekit::detail {

struct Channel {
  int requests = 0;
  int replies = 3;
};

// Without the variables (a worker started by hand): stdin and fd 3.
Channel open_worker_channel();

// The token every answer starts with ("" without one).
const std::string& reply_token();

}  // namespace tunekit::detail
