// The results store: one SQLite table of trials, in WAL mode so that a
// killed run loses at most the trial in flight and several processes (or
// Store objects) can share one file.
#include "tunekit/store.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "store/detail/json_value.hpp"
#include "store/detail/whole_file_check.hpp"
#include "store/detail/write_ahead_log.hpp"
#include "tunekit/stop.hpp"

namespace tunekit {

namespace {

// 1: the trials table; 2: + rule_seed; 3: rule_seed becomes origin, why a
// trial ran ('search', 'default' or a seed provider's name); 4: + slower_factor
// and slower_best_us, the bar a trial cut short by the early stop (status
// 'slower') was judged against; 5: + fault (whose fault a failure is) and
// settings (what the outcome depends on beyond the spec's hash); 6: + eval_s
// and verify_s; 7: + confirmed; 8: + resources (what the build uses, a JSON
// object); 9: + cpu_wait (the share of the trial's time its worker waited
// for a CPU); 10: + hash_without_toolchain and toolchain (the kernel's
// identity without what built it, and that toolchain's text). Older files
// are migrated on open.
constexpr int kSchemaVersion = 10;

// Another process writing (a second tuner, `sqlite3` left open in a
// transaction) holds the lock: wait for it as long as it takes, since giving
// up would lose the trial in flight, but say so after a while, and stop
// waiting when the run is asked to stop.
constexpr int kLockNoticeAttempts = 10 + 600;  // about 30 s of the waits below

int wait_for_lock(void* file, int attempts) {
  if (stop_requested()) return 0;
  if (attempts == kLockNoticeAttempts)
    std::fprintf(stderr, "\ntunekit: waiting for the lock on %s, which another process holds\n",
                 static_cast<const char*>(file));
  std::this_thread::sleep_for(std::chrono::milliseconds(attempts < 10 ? attempts + 1 : 50));
  return 1;
}

constexpr const char* kCreateSchema = R"sql(
CREATE TABLE IF NOT EXISTS trials (
  id            INTEGER PRIMARY KEY,
  spec_hash     TEXT    NOT NULL,
  kernel        TEXT    NOT NULL DEFAULT '',
  device        TEXT    NOT NULL DEFAULT '',
  size_key      TEXT    NOT NULL,
  size_json     TEXT    NOT NULL DEFAULT '{}',
  config_key    TEXT    NOT NULL,
  config_json   TEXT    NOT NULL DEFAULT '{}',
  status        TEXT    NOT NULL,
  error         TEXT    NOT NULL DEFAULT '',
  median_us     REAL,
  min_us        REAL,
  max_us        REAL,
  mean_us       REAL,
  noise         REAL,
  sample_count  INTEGER NOT NULL DEFAULT 0,
  samples_json  TEXT    NOT NULL DEFAULT '[]',
  max_abs_diff  REAL,
  max_rel_err   REAL,
  verified      INTEGER NOT NULL DEFAULT 0,
  verify_passed INTEGER NOT NULL DEFAULT 1,
  verify_detail TEXT    NOT NULL DEFAULT '',
  build_s       REAL,
  machine_json  TEXT    NOT NULL DEFAULT '',
  created_at    TEXT    NOT NULL,
  origin        TEXT    NOT NULL DEFAULT 'search',
  slower_factor REAL,
  slower_best_us REAL,
  fault         TEXT    NOT NULL DEFAULT 'none',
  settings      TEXT    NOT NULL DEFAULT '',
  eval_s        REAL,
  verify_s      REAL,
  confirmed     INTEGER NOT NULL DEFAULT 0,
  resources     TEXT    NOT NULL DEFAULT '',
  cpu_wait      REAL    NOT NULL DEFAULT 0,
  hash_without_toolchain TEXT NOT NULL DEFAULT '',
  toolchain     TEXT    NOT NULL DEFAULT '',
  UNIQUE (spec_hash, device, size_key, config_key)
);
CREATE INDEX IF NOT EXISTS trials_by_spec ON trials (spec_hash, id);
CREATE INDEX IF NOT EXISTS trials_by_kernel_without_toolchain ON trials (hash_without_toolchain);
)sql";

// Column list shared by every SELECT, in the order read_row() expects.
// Versions 5 to 9 lack only the last columns, which read as not recorded
// (times, resources, CPU wait, toolchain) and not confirmed: a file of those
// versions opened for reading is read as it is, never migrated.
const std::string kColumnsOfVersion5 =
    "id, spec_hash, kernel, device, size_json, config_json, status, error, median_us, min_us, max_us, mean_us, "
    "noise, sample_count, samples_json, max_abs_diff, max_rel_err, verified, verify_passed, verify_detail, "
    "build_s, machine_json, created_at, origin, slower_factor, slower_best_us, fault, settings";
const std::string kColumns =
    kColumnsOfVersion5 + ", eval_s, verify_s, confirmed, resources, cpu_wait, hash_without_toolchain, toolchain";
const std::string kColumnsReadingVersion5 = kColumnsOfVersion5 + ", NULL, NULL, 0, '', 0, '', ''";
const std::string kColumnsReadingVersion6 = kColumnsOfVersion5 + ", eval_s, verify_s, 0, '', 0, '', ''";
const std::string kColumnsReadingVersion7 = kColumnsOfVersion5 + ", eval_s, verify_s, confirmed, '', 0, '', ''";
const std::string kColumnsReadingVersion8 = kColumnsOfVersion5 + ", eval_s, verify_s, confirmed, resources, 0, '', ''";
const std::string kColumnsReadingVersion9 =
    kColumnsOfVersion5 + ", eval_s, verify_s, confirmed, resources, cpu_wait, '', ''";

// One statement: either the new row or the old one survives a kill, and the
// row keeps its id (its place in insertion order) when it is replaced.
constexpr const char* kUpsert = R"sql(
INSERT INTO trials (spec_hash, kernel, device, size_key, size_json, config_key, config_json, status, error,
                    median_us, min_us, max_us, mean_us, noise, sample_count, samples_json, max_abs_diff,
                    max_rel_err, verified, verify_passed, verify_detail, build_s, machine_json, created_at,
                    origin, slower_factor, slower_best_us, fault, settings, eval_s, verify_s, confirmed, resources,
                    cpu_wait, hash_without_toolchain, toolchain)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
        ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36)
ON CONFLICT (spec_hash, device, size_key, config_key) DO UPDATE SET
  kernel = excluded.kernel, size_json = excluded.size_json, config_json = excluded.config_json,
  status = excluded.status, error = excluded.error, median_us = excluded.median_us, min_us = excluded.min_us,
  max_us = excluded.max_us, mean_us = excluded.mean_us, noise = excluded.noise,
  sample_count = excluded.sample_count, samples_json = excluded.samples_json,
  max_abs_diff = excluded.max_abs_diff, max_rel_err = excluded.max_rel_err, verified = excluded.verified,
  verify_passed = excluded.verify_passed, verify_detail = excluded.verify_detail, build_s = excluded.build_s,
  machine_json = excluded.machine_json, created_at = excluded.created_at,
  slower_factor = excluded.slower_factor, slower_best_us = excluded.slower_best_us,
  fault = excluded.fault, settings = excluded.settings, eval_s = excluded.eval_s, verify_s = excluded.verify_s,
  confirmed = excluded.confirmed, resources = excluded.resources, cpu_wait = excluded.cpu_wait,
  hash_without_toolchain = excluded.hash_without_toolchain, toolchain = excluded.toolchain,
  origin = CASE WHEN excluded.origin = 'search' THEN trials.origin ELSE excluded.origin END
RETURNING id, origin
)sql";

// What to do with a store SQLite finds damaged: nothing tunekit writes
// mends it, and a reading command must not answer from part of it. (No
// rescue is offered: sqlite3's .dump drops the schema version that marks a
// store, and Debian 12's sqlite3 fails at .recover.)
std::string damaged_advice(const std::filesystem::path& path) {
  return fmt::format(
      "; the file is damaged, and tunekit reads nothing from it: move {} aside (or put back a copy) and tune "
      "again",
      path.string());
}

// SQLite's reason for the last failure of `db`, with what to do where it is
// damage.
std::string reason_of(sqlite3* db, const std::filesystem::path& path, std::string reason) {
  if (!db) return reason;
  const int primary = sqlite3_errcode(db) & 0xff;
  if (primary == SQLITE_CORRUPT) reason += damaged_advice(path);
  const int extended = sqlite3_extended_errcode(db);
  if (primary != SQLITE_FULL && extended != SQLITE_IOERR_WRITE) return reason;
  // A write past the file-size limit fails with EFBIG, which SQLite calls
  // "disk I/O error", and its own record of errno is gone by the time it
  // reports: the limit itself says which it was.
  rlimit file_size{};
  const bool limited = ::getrlimit(RLIMIT_FSIZE, &file_size) == 0 && file_size.rlim_cur != RLIM_INFINITY;
  if (limited)
    reason += fmt::format(" (this process may write files of at most {} bytes: ulimit -f)", file_size.rlim_cur);
  reason += fmt::format(
      "; the trials stored before are kept (the latest may be in {0}-wal beside {0}: move or copy the two "
      "together): make room on its disk{1} and run the same command to resume",
      path.filename().string(), limited ? ", or raise the file-size limit," : "");
  return reason;
}

[[noreturn]] void fail(const std::filesystem::path& path, std::string_view what, sqlite3* db) {
  std::string reason = db ? reason_of(db, path, sqlite3_errmsg(db)) : "out of memory";
  throw std::runtime_error(fmt::format("results store {}: {}: {}", path.string(), what, reason));
}

[[noreturn]] void fail(const std::filesystem::path& path, std::string_view what) {
  throw std::runtime_error(fmt::format("results store {}: {}", path.string(), what));
}

// A prepared statement that finalizes itself.
class Statement {
 public:
  Statement(sqlite3* db, const std::filesystem::path& path, const char* sql) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      sqlite3_finalize(stmt_);
      fail(path, "cannot prepare a statement", db);
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int i, std::string_view text) {
    check(sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT), "bind");
  }
  void bind(int i, double d) { check(sqlite3_bind_double(stmt_, i, d), "bind"); }  // NaN becomes NULL
  void bind(int i, std::int64_t n) { check(sqlite3_bind_int64(stmt_, i, n), "bind"); }

  // true while there is a row to read.
  bool step(std::string_view what) {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(path_, what, db_);
  }

  std::string text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    if (!p) return {};
    return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  // NULL (how SQLite stores a NaN) reads back as NaN.
  double real(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::numeric_limits<double>::quiet_NaN();
    return sqlite3_column_double(stmt_, col);
  }
  double real_or(int col, double absent) const {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL ? absent : sqlite3_column_double(stmt_, col);
  }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }

  // Ready to step again, with its bindings kept: one statement prepared once
  // serves a loop.
  void reset() { sqlite3_reset(stmt_); }

 private:
  void check(int rc, std::string_view what) {
    if (rc != SQLITE_OK) fail(path_, what, db_);
  }

  sqlite3* db_;
  const std::filesystem::path& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const std::filesystem::path& path, const char* sql, std::string_view what) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string reason = reason_of(db, path, message ? message : sqlite3_errmsg(db));
    sqlite3_free(message);
    fail(path, fmt::format("{}: {}", what, reason));
  }
}

std::atomic<std::uint64_t> whole_file_checks{0};

// SQLite reads a page only when a query reaches it, and a damaged index
// answers a lookup with fewer rows and no error: a store read so would give
// `select` and `emit` a policy from part of its trials, and a tune a resume
// that measures again what it holds and stores it beside the old rows.
// integrity_check reads every page and matches each index with its table
// (quick_check does not, and passes an index whose keys are damaged); a
// 140 MB store (100,000 trials) takes about half a second.
void check_intact(sqlite3* db, const std::filesystem::path& path) {
  whole_file_checks.fetch_add(1, std::memory_order_relaxed);
  sqlite3_stmt* st = nullptr;
  std::string problem;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check(1)", -1, &st, nullptr) != SQLITE_OK) {
    problem = sqlite3_errmsg(db);
  } else if (sqlite3_step(st) != SQLITE_ROW) {
    problem = sqlite3_errmsg(db);
  } else if (const unsigned char* text = sqlite3_column_text(st, 0);
             !text || std::string_view(reinterpret_cast<const char*>(text)) != "ok") {
    problem = text ? reinterpret_cast<const char*>(text) : "no answer";
  }
  sqlite3_finalize(st);
  if (problem.empty()) return;
  // integrity_check's answer may be several lines under a heading.
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < problem.size();) {
    const std::size_t end = std::min(problem.find('\n', at), problem.size());
    const std::string line = problem.substr(at, end - at);
    if (!line.empty() && line.rfind("*** ", 0) != 0) lines.push_back(line);
    at = end + 1;
  }
  fail(path, fmt::format("SQLite's check of the file finds: {}{}", fmt::join(lines, "; "), damaged_advice(path)));
}

std::string utc_now_iso8601() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string samples_to_json(const std::vector<Microseconds>& samples) {
  detail::ojson arr = detail::ojson::array();
  for (const auto& s : samples) {
    double v = s.count();
    if (std::isfinite(v)) arr.push_back(v);
    else arr.push_back(nullptr);
  }
  return arr.dump();
}

std::vector<Microseconds> samples_from_json(const std::string& text) {
  std::vector<Microseconds> out;
  if (text.empty()) return out;
  auto arr = detail::ojson::parse(text);
  out.reserve(arr.size());
  for (const auto& v : arr)
    out.emplace_back(v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
  return out;
}

TrialRecord read_row(const Statement& st, const std::filesystem::path& path) {
  TrialRecord r;
  r.id = st.integer(0);
  r.spec_hash = st.text(1);
  r.kernel = st.text(2);
  r.device = st.text(3);
  try {
    r.size = detail::bindings_from_json(detail::ojson::parse(st.text(4)));
    r.config = detail::config_from_json(detail::ojson::parse(st.text(5)));
    r.samples = samples_from_json(st.text(14));
  } catch (const std::exception& e) {
    fail(path, fmt::format("trial {} is damaged: {}", r.id, e.what()));
  }
  std::string status = st.text(6);
  auto parsed = status_from_string(status);
  if (!parsed) fail(path, fmt::format("trial {} has an unknown status '{}'", r.id, status));
  r.status = *parsed;
  r.error = st.text(7);
  r.stats.median = Microseconds(st.real_or(8, 0));  // NULL: a failure never timed
  r.stats.min = Microseconds(st.real_or(9, 0));
  r.stats.max = Microseconds(st.real_or(10, 0));
  r.stats.mean = Microseconds(st.real_or(11, 0));
  r.stats.noise = st.real_or(12, 0);
  r.stats.count = static_cast<std::size_t>(std::max<std::int64_t>(0, st.integer(13)));
  // What the samples say is recomputed rather than read: the noise, the
  // spread and the bimodality check then mean the same for trials stored by
  // an older tunekit (whose noise column held the standard deviation).
  if (!r.samples.empty()) {
    const Statistics again = summarize(r.samples);
    r.stats.noise = again.noise;
    r.stats.spread = again.spread;
    r.stats.bimodal = again.bimodal;
  }
  r.verification.max_abs_diff = st.real(15);
  r.verification.max_rel_err = st.real(16);
  r.verification.checked = st.integer(17) != 0;
  r.verification.passed = st.integer(18) != 0;
  r.verification.detail = st.text(19);
  r.build_time = Seconds(st.real(20));
  r.machine = st.text(21);
  r.created_at = st.text(22);
  r.origin = st.text(23);
  if (r.status == Status::slower) {
    const double factor = st.real(24), best = st.real(25);
    if (!(factor > 0) || !(best > 0))
      fail(path, fmt::format("trial {} is 'slower' without the bar it was cut against", r.id));
    r.slower_than = SlowerThan{factor, Microseconds(best)};
  }
  const std::string fault = st.text(26);
  auto parsed_fault = fault_from_string(fault);
  if (!parsed_fault) fail(path, fmt::format("trial {} has an unknown fault '{}'", r.id, fault));
  r.fault = *parsed_fault;
  r.settings = st.text(27);
  r.eval_time = Seconds(st.real_or(28, 0));
  r.verify_time = Seconds(st.real_or(29, 0));
  r.confirmed = st.integer(30) != 0;
  if (const std::string resources = st.text(31); !resources.empty()) {
    try {
      r.resources = detail::ojson::parse(resources).get<KernelResources>();
    } catch (const std::exception& e) {
      fail(path, fmt::format("trial {} has damaged resources: {}", r.id, e.what()));
    }
  }
  r.cpu_wait_share = st.real_or(32, 0);
  r.hash_without_toolchain = st.text(33);
  r.toolchain = st.text(34);
  return r;
}

// Every row a query's statement yields, in its order.
std::vector<TrialRecord> read_rows(Statement& st, const std::filesystem::path& path) {
  std::vector<TrialRecord> out;
  while (st.step("cannot read trials")) out.push_back(read_row(st, path));
  return out;
}

}  // namespace

std::string size_key(const Bindings& size) {
  // Bindings is a std::map: already sorted by name.
  std::string out;
  for (const auto& [name, value] : size) {
    if (!out.empty()) out += ',';
    out += name;
    out += '=';
    out += value.repr();
  }
  return out;
}

namespace {

// The tables of a file that is an SQLite database of something else:
// tables, but no tunekit schema version (tunekit sets one when it creates
// its table). A tune would add its table to it, and a reader would call it
// an old store. Empty for a store, and for an empty database.
std::vector<std::string> foreign_tables(sqlite3* db, const std::filesystem::path& path) {
  {
    Statement v(db, path, "PRAGMA user_version");
    if (v.step("cannot read the schema version") && v.integer(0) != 0) return {};
  }
  std::vector<std::string> tables;
  Statement t(db, path, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
  while (t.step("cannot list the tables")) tables.push_back(t.text(0));
  return tables;
}

std::string not_a_store(const std::vector<std::string>& tables) {
  return fmt::format("is an SQLite database, but not a tunekit results store (its tables: {}); give another file",
                     fmt::join(tables, ", "));
}

}  // namespace

// Switching the journal mode needs the file to itself for a moment; SQLite
// answers "locked" at once, without its busy handler, while another process
// opens or creates the same store. So it is tried again, as a lock is
// waited for elsewhere (a run asked to stop stops waiting).
void Store::switch_to_wal() {
  for (int attempt = 1;; ++attempt) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, &message);
    const std::string reason = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    if (rc == SQLITE_OK) return;
    const int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
        !wait_for_lock(const_cast<char*>(path_.c_str()), attempt))
      fail(path_, "cannot switch to WAL mode: " + reason_of(db_, path_, reason));
  }
}

Store::Store(const std::filesystem::path& file, Access access, WholeFileCheck check)
    : path_(file), columns_(&kColumns) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec)) fail(path_, "cannot open: the path is a directory");
  if (access == Access::read_only) {
    open_read_only(check);
    return;
  }
  if (auto parent = path_.parent_path(); !parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) fail(path_, fmt::format("cannot create directory {}: {}", parent.string(), ec.message()));
  }

  int rc =
      sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  try {
    if (rc != SQLITE_OK) fail(path_, "cannot open", db_);
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_handler(db_, wait_for_lock, const_cast<char*>(path_.c_str()));
    // Before anything is written to it, its journal mode included. One
    // snapshot: another process creating the store meanwhile is seen whole
    // (its schema version with its table), never half.
    exec(db_, path_, "BEGIN", "cannot read the schema");
    std::vector<std::string> tables;
    try {
      tables = foreign_tables(db_, path_);
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    exec(db_, path_, "COMMIT", "cannot read the schema");
    if (!tables.empty()) fail(path_, not_a_store(tables));
    if (check == WholeFileCheck::run) check_intact(db_, path_);
    switch_to_wal();
    exec(db_, path_, "PRAGMA synchronous=NORMAL", "cannot set synchronous mode");

    // Create or check the schema under a write lock, so two processes opening
    // a fresh file at once do not race.
    exec(db_, path_, "BEGIN IMMEDIATE", "cannot lock the database");
    try {
      std::int64_t version = 0;
      {
        Statement v(db_, path_, "PRAGMA user_version");
        if (v.step("cannot read the schema version")) version = v.integer(0);
      }
      if (version == 0) {
        exec(db_, path_, kCreateSchema, "cannot create the schema");
        exec(db_, path_, fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str(),
             "cannot set the schema version");
      } else if (version >= 1 && version < kSchemaVersion) {
        if (version <= 2)
          exec(db_, path_, "ALTER TABLE trials ADD COLUMN origin TEXT NOT NULL DEFAULT 'search'",
               fmt::format("cannot migrate the schema from version {}", version));
        // Version 2's rule-seed flag is the origin 'rules'; version 1 had no seeds.
        if (version == 2)
          exec(db_, path_,
               "UPDATE trials SET origin = 'rules' WHERE rule_seed != 0;"
               "ALTER TABLE trials DROP COLUMN rule_seed;",
               "cannot migrate the schema from version 2");
        // Before version 4 no trial was cut short.
        if (version <= 3)
          exec(db_, path_,
               "ALTER TABLE trials ADD COLUMN slower_factor REAL;"
               "ALTER TABLE trials ADD COLUMN slower_best_us REAL;",
               fmt::format("cannot migrate the schema from version {}", version));
        // Before version 5 every failure was taken for the config's; the
        // settings it ran under are unknown (''), so a resume measures it
        // once more and then keeps what it finds.
        if (version <= 4)
          exec(db_, path_,
               "ALTER TABLE trials ADD COLUMN fault TEXT NOT NULL DEFAULT 'none';"
               "ALTER TABLE trials ADD COLUMN settings TEXT NOT NULL DEFAULT '';"
               "UPDATE trials SET fault = 'config' WHERE status NOT IN ('ok', 'slower');",
               fmt::format("cannot migrate the schema from version {}", version));
        // Before version 6 a trial's evaluation and verification times were
        // not kept: NULL, read as not recorded.
        if (version <= 5)
          exec(db_, path_,
               "ALTER TABLE trials ADD COLUMN eval_s REAL;"
               "ALTER TABLE trials ADD COLUMN verify_s REAL;",
               fmt::format("cannot migrate the schema from version {}", version));
        // Before version 7 no trial was marked confirmed: a resumed size
        // whose best is not confirmed is confirmed then (measure.confirm).
        if (version <= 6)
          exec(db_, path_, "ALTER TABLE trials ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0",
               fmt::format("cannot migrate the schema from version {}", version));
        // Before version 8 no build's resources were kept: '' reads as none.
        if (version <= 7)
          exec(db_, path_, "ALTER TABLE trials ADD COLUMN resources TEXT NOT NULL DEFAULT ''",
               fmt::format("cannot migrate the schema from version {}", version));
        // Before version 9 no trial's wait for a CPU was kept: 0, as on a
        // quiet machine, since nothing better is known.
        if (version <= 8)
          exec(db_, path_, "ALTER TABLE trials ADD COLUMN cpu_wait REAL NOT NULL DEFAULT 0",
               fmt::format("cannot migrate the schema from version {}", version));
        // Before version 10 no trial named its toolchain: '' is found by
        // its spec_hash only, as it was, and no other toolchain's reader
        // takes it for its kernel's.
        exec(db_, path_,
             "ALTER TABLE trials ADD COLUMN hash_without_toolchain TEXT NOT NULL DEFAULT '';"
             "ALTER TABLE trials ADD COLUMN toolchain TEXT NOT NULL DEFAULT '';"
             "CREATE INDEX IF NOT EXISTS trials_by_kernel_without_toolchain ON trials (hash_without_toolchain);",
             fmt::format("cannot migrate the schema from version {}", version));
        exec(db_, path_, fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str(),
             "cannot set the schema version");
      } else if (version != kSchemaVersion) {
        fail(path_, fmt::format("schema version {} is not supported (this tunekit reads version {}){}", version,
                                kSchemaVersion, version > kSchemaVersion ? "; it was written by a newer tunekit" : ""));
      }
      exec(db_, path_, "COMMIT", "cannot commit the schema");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  } catch (...) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
}

void Store::open_read_only(WholeFileCheck check) {
  if (!std::filesystem::exists(path_)) fail(path_, "cannot open: no such file");
  auto version_of = [&]() -> std::optional<std::int64_t> {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &st, nullptr) != SQLITE_OK) {
      sqlite3_finalize(st);
      return std::nullopt;
    }
    std::optional<std::int64_t> v;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
  };
  // A connection opened read-only makes the WAL's -wal and -shm files and,
  // as it may not checkpoint, leaves them behind when it closes: one that
  // may write, made unable to (query_only), removes them when it is the
  // last to close, as a tune does, and leaves a running tune's alone. Where
  // the file cannot be written SQLite opens it read-only by itself; a WAL
  // file needs its shared-memory file, which read-only storage cannot
  // create, so there the file is opened as immutable (nothing else writes it).
  // A reader that may not write the file but may write its folder (a
  // colleague's results in a shared folder) would leave -wal and -shm files
  // of its own there, which the file's owner then cannot write: its next
  // tune fails. So, unless a writer has them open now, it reads the file as
  // immutable at once.
  const auto beside = [&](const char* tail) { return std::filesystem::exists(path_.string() + tail); };
  const bool read_as_immutable = ::access(path_.c_str(), W_OK) != 0 && !beside("-wal") && !beside("-shm");
  for (const bool immutable : {false, true}) {
    if (read_as_immutable && !immutable) continue;
    const std::string uri = "file:" + path_.string() + (immutable ? "?immutable=1" : "");
    const int rc = sqlite3_open_v2(
        uri.c_str(), &db_,
        (immutable ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, nullptr);
    if (rc == SQLITE_OK && sqlite3_exec(db_, "PRAGMA query_only=1", nullptr, nullptr, nullptr) == SQLITE_OK) {
      sqlite3_busy_handler(db_, wait_for_lock, const_cast<char*>(path_.c_str()));
      if (auto version = version_of()) {
        if (*version == 0) {
          const auto tables = foreign_tables(db_, path_);
          sqlite3_close_v2(db_);
          db_ = nullptr;
          if (tables.empty())
            throw EmptyStoreError(
                fmt::format("results store {}: is an empty database: it holds no tunekit results yet", path_.string()));
          fail(path_, not_a_store(tables));
        }
        if (*version == 5) columns_ = &kColumnsReadingVersion5;
        else if (*version == 6) columns_ = &kColumnsReadingVersion6;
        else if (*version == 7) columns_ = &kColumnsReadingVersion7;
        else if (*version == 8) columns_ = &kColumnsReadingVersion8;
        else if (*version == 9) columns_ = &kColumnsReadingVersion9;
        else if (*version != kSchemaVersion) {
          sqlite3_close_v2(db_);
          db_ = nullptr;
          if (*version < kSchemaVersion)
            throw OldStoreError(
                fmt::format("results store {}: schema version {} cannot be read without writing "
                            "(open it once with a command that writes, such as `tunekit tune`, "
                            "to migrate it)",
                            path_.string(), *version));
          fail(path_, fmt::format("schema version {} cannot be read without writing; it was written by a newer "
                                  "tunekit",
                                  *version));
        }
        try {
          if (check == WholeFileCheck::run) check_intact(db_, path_);
        } catch (...) {
          sqlite3_close_v2(db_);
          db_ = nullptr;
          throw;
        }
        return;
      }
    }
    const std::string reason = db_ ? reason_of(db_, path_, sqlite3_errmsg(db_)) : "out of memory";
    sqlite3_close_v2(db_);
    db_ = nullptr;
    if (immutable) fail(path_, "cannot open for reading: " + reason);
  }
}

Store::~Store() {
  if (db_) sqlite3_close_v2(db_);
}

std::optional<std::string> detail::fold_write_ahead_log(const std::filesystem::path& db) {
  const std::filesystem::path wal = db.string() + "-wal";
  std::error_code error;
  if (!std::filesystem::exists(wal, error)) return std::nullopt;
  sqlite3* h = nullptr;
  std::string reason;
  int busy = 0;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    reason = h ? sqlite3_errmsg(h) : "out of memory";
  } else {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "PRAGMA wal_checkpoint(TRUNCATE)", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      busy = sqlite3_column_int(st, 0);
    else if (const int code = sqlite3_errcode(h) & 0xff; code == SQLITE_BUSY || code == SQLITE_LOCKED) busy = 1;
    else reason = sqlite3_errmsg(h);
    sqlite3_finalize(st);
  }
  sqlite3_close_v2(h);
  if (reason.empty() || busy) return std::nullopt;
  const std::string name = db.filename().string();
  return fmt::format(
      "the results store {0} could not take in its write-ahead log as the run ended ({1}): the trials are kept, "
      "but the latest are in {2}-wal beside {2} alone until a run that can write there folds them in; move or copy "
      "{2} and {2}-wal together (a copy of {2} alone lacks them)",
      db.string(), reason, name);
}

std::optional<TrialRecord> Store::find(const std::string& spec_hash, const std::string& device, const Bindings& size,
                                       const Config& config) const {
  std::string sql = fmt::format(
      "SELECT {} FROM trials WHERE spec_hash = ?1 AND device = ?2 AND size_key = ?3 AND config_key = ?4", *columns_);
  Statement st(db_, path_, sql.c_str());
  st.bind(1, spec_hash);
  st.bind(2, device);
  st.bind(3, size_key(size));
  st.bind(4, config.key());
  if (!st.step("cannot look up a trial")) return std::nullopt;
  return read_row(st, path_);
}

void Store::put(TrialRecord& record, bool exclusive_origin) {
  if (record.created_at.empty()) record.created_at = utc_now_iso8601();
  if (record.origin.empty()) record.origin = kOriginSearch;
  if (record.status == Status::ok || record.status == Status::slower) record.fault = Fault::none;  // no failure
  else if (record.fault == Fault::none) record.fault = Fault::config;
  // A store whose file was deleted (a kernel removing the files of the
  // folder it runs in, a user) takes writes that no one will read: the run
  // stops here rather than report results it has lost.
  int moved = 0;
  if (sqlite3_file_control(db_, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved)
    fail(path_,
         "cannot store a trial: the file was deleted or moved during the run (by a kernel that removes the "
         "files of the folder it runs in?); the trials stored since it went are lost");
  if (!exclusive_origin || record.origin == kOriginSearch) {
    upsert(record);
    return;
  }
  // One transaction: the origin moves from the size's old trial to this one
  // at once.
  exec(db_, path_, "SAVEPOINT put_trial", "cannot begin storing a trial");
  try {
    {
      Statement clear(db_, path_,
                      "UPDATE trials SET origin = 'search' WHERE spec_hash = ?1 AND device = ?2 AND size_key = ?3 "
                      "AND config_key != ?4 AND origin = ?5");
      clear.bind(1, record.spec_hash);
      clear.bind(2, record.device);
      clear.bind(3, size_key(record.size));
      clear.bind(4, record.config.key());
      clear.bind(5, record.origin);
      while (clear.step("cannot move a trial's origin")) {
      }
    }
    upsert(record);
    exec(db_, path_, "RELEASE put_trial", "cannot commit a trial");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK TO put_trial; RELEASE put_trial", nullptr, nullptr, nullptr);
    throw;
  }
}

std::optional<Microseconds> Store::best_median(const std::string& spec_hash, const std::string& device,
                                               const Bindings& size) const {
  Statement st(db_, path_,
               "SELECT MIN(median_us) FROM trials WHERE spec_hash = ?1 AND device = ?2 AND size_key = ?3 "
               "AND status = 'ok'");
  st.bind(1, spec_hash);
  st.bind(2, device);
  st.bind(3, size_key(size));
  if (!st.step("cannot look up the best trial")) return std::nullopt;
  const double best = st.real(0);  // NULL (no ok trial) reads as NaN
  if (std::isnan(best)) return std::nullopt;
  return Microseconds(best);
}

void Store::upsert(TrialRecord& record) {
  if (record.status == Status::slower && !record.slower_than)
    fail(path_, "cannot store a 'slower' trial without the bar it was cut against");
  Statement st(db_, path_, kUpsert);
  st.bind(1, record.spec_hash);
  st.bind(2, record.kernel);
  st.bind(3, record.device);
  st.bind(4, size_key(record.size));
  st.bind(5, detail::bindings_to_json(record.size).dump());
  st.bind(6, record.config.key());
  st.bind(7, detail::config_to_json(record.config).dump());
  st.bind(8, to_string(record.status));
  st.bind(9, record.error);
  // A failed trial that was never timed (it did not build, it crashed) has
  // no times: NULL, not 0, which a query of the file would take for the
  // fastest. (A wrong result was timed, and keeps its times.)
  const bool measured = record.status == Status::ok || record.status == Status::slower || record.stats.count > 0;
  const auto timed = [&](double value) { return measured ? value : std::numeric_limits<double>::quiet_NaN(); };
  st.bind(10, timed(record.stats.median.count()));
  st.bind(11, timed(record.stats.min.count()));
  st.bind(12, timed(record.stats.max.count()));
  st.bind(13, timed(record.stats.mean.count()));
  st.bind(14, timed(record.stats.noise));
  st.bind(15, static_cast<std::int64_t>(record.stats.count));
  st.bind(16, samples_to_json(record.samples));
  st.bind(17, record.verification.max_abs_diff);
  st.bind(18, record.verification.max_rel_err);
  st.bind(19, std::int64_t{record.verification.checked ? 1 : 0});
  st.bind(20, std::int64_t{record.verification.passed ? 1 : 0});
  st.bind(21, record.verification.detail);
  st.bind(22, record.build_time.count());
  st.bind(23, record.machine);
  st.bind(24, record.created_at);
  st.bind(25, record.origin);
  const bool slower = record.status == Status::slower && record.slower_than;
  st.bind(26, slower ? record.slower_than->factor : std::numeric_limits<double>::quiet_NaN());
  st.bind(27, slower ? record.slower_than->best.count() : std::numeric_limits<double>::quiet_NaN());
  st.bind(28, to_string(record.fault));
  st.bind(29, record.settings);
  st.bind(30, record.eval_time.count());
  st.bind(31, record.verify_time.count());
  st.bind(32, std::int64_t{record.confirmed ? 1 : 0});
  if (record.resources.empty()) {
    st.bind(33, std::string());
  } else {
    detail::ojson resources = detail::ojson::object();
    for (const auto& [name, count] : record.resources) resources[name] = count;
    st.bind(33, resources.dump());
  }
  st.bind(34, record.cpu_wait_share);
  st.bind(35, record.hash_without_toolchain);
  st.bind(36, record.toolchain);
  if (!st.step("cannot store a trial")) fail(path_, "cannot store a trial: no row id came back");
  record.id = st.integer(0);
  record.origin = st.text(1);
  while (st.step("cannot store a trial")) {
  }
}

std::vector<TrialRecord> Store::trials(const std::string& spec_hash) const {
  std::string sql = fmt::format("SELECT {} FROM trials WHERE spec_hash = ?1 ORDER BY id", *columns_);
  Statement st(db_, path_, sql.c_str());
  st.bind(1, spec_hash);
  return read_rows(st, path_);
}

std::vector<TrialRecord> Store::trials(const std::string& spec_hash, const std::string& device,
                                       const Bindings& size) const {
  std::string sql = fmt::format(
      "SELECT {} FROM trials WHERE spec_hash = ?1 AND device = ?2 AND size_key = ?3 ORDER BY id", *columns_);
  Statement st(db_, path_, sql.c_str());
  st.bind(1, spec_hash);
  st.bind(2, device);
  st.bind(3, size_key(size));
  return read_rows(st, path_);
}

std::vector<TrialRecord> Store::all() const {
  std::string sql = fmt::format("SELECT {} FROM trials ORDER BY id", *columns_);
  Statement st(db_, path_, sql.c_str());
  return read_rows(st, path_);
}

std::vector<Store::OtherVersion> Store::other_versions(const std::string& kernel, const std::string& device,
                                                       const std::string& spec_hash) const {
  Statement st(db_, path_,
               "SELECT spec_hash, COUNT(*), MAX(created_at) FROM trials WHERE kernel = ?1 AND device = ?2 "
               "AND spec_hash <> ?3 GROUP BY spec_hash ORDER BY MAX(created_at) DESC, spec_hash");
  st.bind(1, kernel);
  st.bind(2, device);
  st.bind(3, spec_hash);
  std::vector<OtherVersion> out;
  while (st.step("cannot look up the kernel's other versions"))
    out.push_back({st.text(0), static_cast<std::size_t>(st.integer(1)), st.text(2)});
  return out;
}

std::vector<Store::Toolchain> Store::toolchains(const std::string& hash_without_toolchain) const {
  std::vector<Toolchain> out;
  // An older file read as it is has no such column: none of its trials
  // names a toolchain.
  if (columns_ != &kColumns || hash_without_toolchain.empty()) return out;
  Statement st(db_, path_,
               "SELECT toolchain, spec_hash, COUNT(*) FROM trials WHERE hash_without_toolchain = ?1 "
               "GROUP BY spec_hash, toolchain ORDER BY toolchain, spec_hash");
  st.bind(1, hash_without_toolchain);
  while (st.step("cannot look up the kernel's toolchains"))
    out.push_back({st.text(0), st.text(1), static_cast<std::size_t>(st.integer(2))});
  return out;
}

std::vector<Store::DeviceTrials> Store::devices(const std::string& spec_hash) const {
  Statement st(db_, path_,
               "SELECT device, COUNT(*), MAX(created_at) FROM trials WHERE spec_hash = ?1 "
               "GROUP BY device ORDER BY MAX(created_at) DESC, device");
  st.bind(1, spec_hash);
  std::vector<DeviceTrials> out;
  while (st.step("cannot look up the devices of the kernel's trials"))
    out.push_back({st.text(0), static_cast<std::size_t>(st.integer(1)), st.text(2)});
  return out;
}

std::size_t Store::mark_stale(const std::string& spec_hash, const std::string& device, const Bindings& size,
                              const std::vector<Config>& configs) {
  if (configs.empty()) return 0;
  exec(db_, path_, "BEGIN IMMEDIATE", "cannot mark trials stale");
  std::size_t marked = 0;
  try {
    Statement st(db_, path_,
                 "UPDATE trials SET settings = ?5 || settings, confirmed = 0 WHERE spec_hash = ?1 AND device = ?2 "
                 "AND size_key = ?3 AND config_key = ?4 AND substr(settings, 1, length(?5)) <> ?5 RETURNING id");
    st.bind(1, spec_hash);
    st.bind(2, device);
    st.bind(3, size_key(size));
    st.bind(5, std::string(kStaleSettings));
    for (const Config& c : configs) {
      st.bind(4, c.key());
      while (st.step("cannot mark trials stale")) ++marked;
      st.reset();
    }
    exec(db_, path_, "COMMIT", "cannot mark trials stale");
  } catch (...) {
    exec(db_, path_, "ROLLBACK", "cannot mark trials stale");
    throw;
  }
  return marked;
}

std::size_t Store::erase(const std::string& spec_hash) {
  // Counting the returned rows (not sqlite3_changes) stays right when other
  // threads share the connection.
  Statement st(db_, path_, "DELETE FROM trials WHERE spec_hash = ?1 RETURNING id");
  st.bind(1, spec_hash);
  std::size_t erased = 0;
  while (st.step("cannot erase trials")) ++erased;
  return erased;
}

namespace detail {

std::uint64_t store_whole_file_checks() { return whole_file_checks.load(std::memory_order_relaxed); }

}  // namespace detail

}  // namespace tunekit
