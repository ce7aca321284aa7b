#include "tunekit/store.hpp"

#include <pwd.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "store/detail/write_ahead_log.hpp"
#include "support/cli.hpp"

namespace fs = std::filesystem;
using namespace tunekit;
using namespace std::chrono_literals;

namespace {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() /
            ("tunekit_store_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TrialRecord sample_record() {
  TrialRecord r;
  r.spec_hash = "abc123";
  r.hash_without_toolchain = "abc";
  r.toolchain = "c++ (Fake 12.2.0) 12.2.0 for x86_64-linux-gnu";
  r.kernel = "matmul";
  r.device = "cpu:0";
  r.size = {{"M", Value(512)}, {"N", Value(256)}, {"K", Value(128)}};
  // Deliberately not in name order: order must survive the round trip.
  r.config = Config({{"BN", Value(128)},
                     {"BM", Value(64)},
                     {"ALPHA", Value(2.0)},
                     {"LAYOUT", Value("row'major")},
                     {"SCALE", Value(0.1)}});
  r.status = Status::ok;
  r.error = "";
  r.stats.median = Microseconds(14.982);
  r.stats.min = Microseconds(14.5);
  r.stats.max = Microseconds(16.25);
  r.stats.mean = Microseconds(15.0125);
  r.stats.count = 4;
  r.samples = {Microseconds(14.5), Microseconds(14.9), Microseconds(15.064), Microseconds(16.25)};
  // What the samples say is recomputed on read (the store keeps the samples).
  r.stats.noise = summarize(r.samples).noise;
  r.stats.spread = summarize(r.samples).spread;
  r.verification.checked = true;
  r.verification.passed = true;
  r.verification.max_abs_diff = 1.25e-6;
  r.verification.max_rel_err = 3.5e-7;
  r.verification.detail = "";
  r.build_time = Seconds(0.875);
  r.eval_time = Seconds(0.0625);
  r.verify_time = Seconds(0.015625);
  r.machine = R"({"cpu":"Xeon","cores":16})";
  return r;
}

void expect_same(const TrialRecord& a, const TrialRecord& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.spec_hash, b.spec_hash);
  EXPECT_EQ(a.hash_without_toolchain, b.hash_without_toolchain);
  EXPECT_EQ(a.toolchain, b.toolchain);
  EXPECT_EQ(a.kernel, b.kernel);
  EXPECT_EQ(a.device, b.device);
  ASSERT_EQ(a.size.size(), b.size.size());
  for (const auto& [name, value] : a.size) {
    auto it = b.size.find(name);
    ASSERT_NE(it, b.size.end()) << name;
    EXPECT_EQ(value.raw(), it->second.raw()) << name;
  }
  ASSERT_EQ(a.config.size(), b.config.size());
  auto ia = a.config.begin();
  auto ib = b.config.begin();
  for (; ia != a.config.end(); ++ia, ++ib) {
    EXPECT_EQ(ia->first, ib->first);
    EXPECT_EQ(ia->second.raw(), ib->second.raw()) << ia->first;  // same type and value
  }
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.stats.median.count(), b.stats.median.count());
  EXPECT_EQ(a.stats.min.count(), b.stats.min.count());
  EXPECT_EQ(a.stats.max.count(), b.stats.max.count());
  EXPECT_EQ(a.stats.mean.count(), b.stats.mean.count());
  EXPECT_EQ(a.stats.noise, b.stats.noise);
  EXPECT_EQ(a.stats.spread, b.stats.spread);
  EXPECT_EQ(a.stats.bimodal, b.stats.bimodal);
  EXPECT_EQ(a.stats.count, b.stats.count);
  ASSERT_EQ(a.samples.size(), b.samples.size());
  for (std::size_t i = 0; i < a.samples.size(); ++i) EXPECT_EQ(a.samples[i].count(), b.samples[i].count());
  EXPECT_EQ(a.verification.checked, b.verification.checked);
  EXPECT_EQ(a.verification.passed, b.verification.passed);
  EXPECT_EQ(a.verification.max_abs_diff, b.verification.max_abs_diff);
  EXPECT_EQ(a.verification.max_rel_err, b.verification.max_rel_err);
  EXPECT_EQ(a.verification.detail, b.verification.detail);
  EXPECT_EQ(a.build_time.count(), b.build_time.count());
  EXPECT_EQ(a.eval_time.count(), b.eval_time.count());
  EXPECT_EQ(a.verify_time.count(), b.verify_time.count());
  EXPECT_EQ(a.machine, b.machine);
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.origin, b.origin);
  EXPECT_EQ(a.slower_than, b.slower_than);
}

std::size_t row_count(const fs::path& file) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM trials", -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  auto n = static_cast<std::size_t>(sqlite3_column_int64(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

}  // namespace

TEST(SizeKey, SortedNamesAndRepr) {
  Bindings size{{"N", Value(256)}, {"M", Value(256)}, {"K", Value(512)}};
  EXPECT_EQ(size_key(size), "K=512,M=256,N=256");
  EXPECT_EQ(size_key({}), "");
  EXPECT_EQ(size_key({{"alpha", Value(1.0)}, {"mode", Value("fast")}}), "alpha=1.0,mode='fast'");
}

TEST(Store, CreatesSchemaAndParentDirectories) {
  TempDir dir;
  fs::path file = dir.path() / "a" / "b" / "results.db";
  {
    Store store(file);
    EXPECT_EQ(store.path(), file);
    EXPECT_TRUE(store.all().empty());
  }
  ASSERT_TRUE(fs::exists(file));

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto single = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sql;
    std::string out;
    if (sqlite3_step(st) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
  };
  EXPECT_EQ(single("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(single("PRAGMA user_version"), "10");
  std::string schema = single("SELECT sql FROM sqlite_master WHERE name = 'trials'");
  for (const char* column :
       {"spec_hash",   "kernel",        "device",         "size_key",     "size_json",    "config_key",
        "config_json", "status",        "error",          "median_us",    "min_us",       "max_us",
        "mean_us",     "noise",         "sample_count",   "samples_json", "max_abs_diff", "max_rel_err",
        "verified",    "verify_passed", "verify_detail",  "build_s",      "machine_json", "created_at",
        "origin",      "slower_factor", "slower_best_us", "fault",        "settings",     "eval_s",
        "verify_s",    "confirmed",     "resources",      "cpu_wait"})
    EXPECT_NE(schema.find(column), std::string::npos) << column;
  for (const char* column : {"hash_without_toolchain", "toolchain"})
    EXPECT_NE(schema.find(column), std::string::npos) << column;
  EXPECT_NE(schema.find("UNIQUE (spec_hash, device, size_key, config_key)"), std::string::npos);
  EXPECT_FALSE(single("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'trials_by_spec'").empty());
  EXPECT_FALSE(single("SELECT name FROM sqlite_master WHERE type = 'index' AND name = "
                      "'trials_by_kernel_without_toolchain'")
                   .empty());
  sqlite3_close(db);
}

// A read-only store leaves no -wal or -shm file beside the database (a
// connection that cannot write cannot remove them), and reads a database
// that a writer holds open, whose files it leaves alone.
TEST(Store, AReadOnlyStoreLeavesNoWalFilesBehind) {
  TempDir dir;
  const fs::path file = dir.path() / "t.db";
  const fs::path wal = file.string() + "-wal", shm = file.string() + "-shm";
  auto record = [](int bm) {
    TrialRecord r = sample_record();
    r.config = Config({{"BM", Value(bm)}});
    return r;
  };
  {
    Store writer(file);
    TrialRecord r = record(1);
    writer.put(r);
  }
  ASSERT_FALSE(fs::exists(wal));
  ASSERT_FALSE(fs::exists(shm));
  {
    const Store read(file, Store::Access::read_only);
    EXPECT_EQ(read.all().size(), 1u);
  }
  EXPECT_FALSE(fs::exists(wal));
  EXPECT_FALSE(fs::exists(shm));

  Store writer(file);  // a tune in progress
  TrialRecord second = record(2);
  writer.put(second);
  {
    const Store read(file, Store::Access::read_only);
    EXPECT_EQ(read.all().size(), 2u);
  }
  EXPECT_TRUE(fs::exists(wal));  // the writer's, still in use
  TrialRecord third = record(3);
  writer.put(third);
  EXPECT_EQ(writer.all().size(), 3u);
  EXPECT_EQ(Store(file, Store::Access::read_only).all().size(), 3u);
}

// A reader that may write the folder but not the file (a colleague's
// results in a shared folder) leaves no -wal or -shm file of its own there:
// the owner could not write them, and its next tune would fail. Read as
// `nobody` in a child process, which needs root to become it.
TEST(Store, AReaderThatCannotWriteTheFileLeavesNothingInItsFolder) {
  const passwd* nobody = ::getpwnam("nobody");
  if (::geteuid() != 0 || !nobody) GTEST_SKIP() << "needs root and a user 'nobody' to read as another user";
  TempDir dir;
  fs::permissions(dir.path(), fs::perms::all);  // anyone may write the folder
  const fs::path file = dir.path() / "t.db";
  {
    Store writer(file);
    TrialRecord r = sample_record();
    writer.put(r);
  }
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                            fs::perms::others_read);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 3;
    if (::setgid(nobody->pw_gid) == 0 && ::setuid(nobody->pw_uid) == 0 && ::access(file.c_str(), W_OK) != 0) {
      try {
        code = Store(file, Store::Access::read_only).all().size() == 1 ? 0 : 1;
      } catch (...) {
        code = 2;
      }
    }
    std::_Exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "0: read; 1: read wrong; 2: threw; 3: could not become nobody";
  EXPECT_FALSE(fs::exists(file.string() + "-wal"));
  EXPECT_FALSE(fs::exists(file.string() + "-shm"));
}

TEST(Store, PutFindRoundTripsEveryField) {
  TempDir dir;
  Store store(dir.path() / "t.db");
  TrialRecord r = sample_record();
  store.put(r);
  EXPECT_GT(r.id, 0);
  ASSERT_FALSE(r.created_at.empty());
  // ISO 8601 UTC: 2024-01-02T03:04:05Z
  EXPECT_EQ(r.created_at.size(), 20u);
  EXPECT_EQ(r.created_at[10], 'T');
  EXPECT_EQ(r.created_at.back(), 'Z');

  // Looked up with the config in a different order and an equal size.
  Config shuffled({{"SCALE", Value(0.1)},
                   {"ALPHA", Value(2.0)},
                   {"BM", Value(64)},
                   {"LAYOUT", Value("row'major")},
                   {"BN", Value(128)}});
  Bindings size{{"K", Value(128)}, {"N", Value(256)}, {"M", Value(512)}};
  auto found = store.find("abc123", "cpu:0", size, shuffled);
  ASSERT_TRUE(found.has_value());
  expect_same(r, *found);

  // Float values that are integral stay floats; ints stay ints.
  EXPECT_TRUE(found->config.at("ALPHA").is_float());
  EXPECT_EQ(found->config.at("ALPHA").as_float(), 2.0);
  EXPECT_TRUE(found->config.at("BM").is_int());
  EXPECT_TRUE(found->config.at("LAYOUT").is_string());
  EXPECT_EQ(found->config.str(), "{BN: 128, BM: 64, ALPHA: 2.0, LAYOUT: 'row\\'major', SCALE: 0.1}");

  EXPECT_FALSE(store.find("abc123", "cpu:1", size, shuffled).has_value());
  EXPECT_FALSE(store.find("other", "cpu:0", size, shuffled).has_value());
  EXPECT_FALSE(store.find("abc123", "cpu:0", {{"M", Value(512)}}, shuffled).has_value());
  EXPECT_FALSE(store.find("abc123", "cpu:0", size, Config({{"BM", Value(64)}})).has_value());
  // 64.0 is not the same key as 64.
  Config as_float({{"BN", Value(128)},
                   {"BM", Value(64.0)},
                   {"ALPHA", Value(2.0)},
                   {"LAYOUT", Value("row'major")},
                   {"SCALE", Value(0.1)}});
  EXPECT_FALSE(store.find("abc123", "cpu:0", size, as_float).has_value());
}

TEST(Store, NoiseIsRecomputedFromTheStoredSamples) {
  // An older tunekit stored the standard deviation in the noise column: on
  // read, the samples say what the noise is, so old and new trials compare.
  TempDir dir;
  Store store(dir.path() / "t.db");
  TrialRecord r = sample_record();
  r.stats.noise = 0.5;  // what an old writer might have put there
  store.put(r);
  auto found = store.find(r.spec_hash, r.device, r.size, r.config);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->stats.noise, summarize(r.samples).noise);
  EXPECT_NE(found->stats.noise, 0.5);
  EXPECT_GT(found->stats.spread, 0.0);
}

TEST(Store, RoundTripsFailuresAndEmptyFields) {
  TempDir dir;
  Store store(dir.path() / "t.db");
  TrialRecord r;
  r.spec_hash = "h";
  r.device = "cpu";
  r.status = Status::compile_error;
  r.error = "kernel.cpp:3:5: error: 'foo' was not declared\n  3 | foo();\n    | ^~~";
  r.verification.checked = false;
  r.verification.passed = false;
  r.verification.detail = "C[3]: got 1, expected 2";
  r.created_at = "2020-01-02T03:04:05Z";  // kept when given
  store.put(r);
  EXPECT_EQ(r.created_at, "2020-01-02T03:04:05Z");
  auto found = store.find("h", "cpu", {}, Config());
  ASSERT_TRUE(found.has_value());
  expect_same(r, *found);
  EXPECT_TRUE(found->samples.empty());
  EXPECT_TRUE(found->config.empty());
  EXPECT_TRUE(found->size.empty());
  EXPECT_EQ(found->machine, "");

  TrialRecord w = sample_record();
  w.status = Status::wrong_result;
  w.verification.passed = false;
  w.verification.max_abs_diff = 0.5;
  w.verification.detail = "C[0]: got 1.5, expected 1";
  w.size = {{"mode", Value("big")}, {"alpha", Value(1.5)}};
  store.put(w);
  auto fw = store.find(w.spec_hash, w.device, w.size, w.config);
  ASSERT_TRUE(fw.has_value());
  expect_same(w, *fw);
  EXPECT_TRUE(fw->size.at("alpha").is_float());
  EXPECT_TRUE(fw->size.at("mode").is_string());
}

TEST(Store, ReplaceOnSameKeyKeepsOneRow) {
  TempDir dir;
  fs::path file = dir.path() / "t.db";
  Store store(file);
  TrialRecord a = sample_record();
  store.put(a);
  TrialRecord other = sample_record();
  other.config.set("BM", Value(32));
  store.put(other);

  TrialRecord b = sample_record();
  b.status = Status::timeout;
  b.error = "exceeded 60 s";
  b.samples.clear();
  b.stats = {};
  store.put(b);
  EXPECT_EQ(b.id, a.id);  // replaced in place
  EXPECT_EQ(row_count(file), 2u);

  auto rows = store.trials("abc123");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].id, a.id);
  EXPECT_EQ(rows[0].status, Status::timeout);
  EXPECT_EQ(rows[0].error, "exceeded 60 s");
  EXPECT_TRUE(rows[0].samples.empty());
  EXPECT_EQ(rows[0].stats.count, 0u);
  EXPECT_EQ(rows[1].id, other.id);
}

TEST(Store, TrialsInInsertionOrderAndErase) {
  TempDir dir;
  Store store(dir.path() / "t.db");
  std::vector<std::int64_t> ids;
  for (int bm : {128, 16, 64, 32}) {
    TrialRecord r = sample_record();
    r.config = Config({{"BM", Value(bm)}});
    store.put(r);
    ids.push_back(r.id);
  }
  TrialRecord other = sample_record();
  other.spec_hash = "other";
  store.put(other);

  auto rows = store.trials("abc123");
  ASSERT_EQ(rows.size(), 4u);
  std::vector<std::int64_t> expected_bm{128, 16, 64, 32};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].id, ids[i]);
    EXPECT_EQ(rows[i].config.at("BM").as_int(), expected_bm[i]);
  }
  EXPECT_EQ(store.all().size(), 5u);
  EXPECT_TRUE(store.trials("nothing").empty());

  EXPECT_EQ(store.erase("abc123"), 4u);
  EXPECT_EQ(store.erase("abc123"), 0u);
  EXPECT_TRUE(store.trials("abc123").empty());
  auto rest = store.all();
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].spec_hash, "other");
}

TEST(Store, AKernelsOtherVersionsAreItsNameUnderAnotherSpecHashOnTheDevice) {
  TempDir dir;
  Store store(dir.path() / "t.db");
  auto put = [&](const std::string& hash, const std::string& kernel, const std::string& device, int bm,
                 const std::string& created) {
    TrialRecord r = sample_record();
    r.spec_hash = hash;
    r.kernel = kernel;
    r.device = device;
    r.config = Config({{"BM", Value(bm)}});
    r.created_at = created;
    store.put(r);
  };
  put("now", "matmul", "cpu:0", 16, "2026-12-07T10:00:00Z");  // the version being tuned
  put("old", "matmul", "cpu:0", 16, "2026-12-01T10:00:00Z");  // an earlier one, two trials
  put("old", "matmul", "cpu:0", 32, "2026-12-02T10:00:00Z");
  put("older", "matmul", "cpu:0", 16, "2026-11-01T10:00:00Z");
  put("gpu", "matmul", "cuda:0", 16, "2026-12-06T10:00:00Z");  // another device
  put("saxpy", "saxpy", "cpu:0", 16, "2026-12-06T10:00:00Z");  // another kernel

  const auto others = store.other_versions("matmul", "cpu:0", "now");
  ASSERT_EQ(others.size(), 2u);
  EXPECT_EQ(others[0].spec_hash, "old");  // the most recent first
  EXPECT_EQ(others[0].trials, 2u);
  EXPECT_EQ(others[0].last_created_at, "2026-12-02T10:00:00Z");
  EXPECT_EQ(others[1].spec_hash, "older");
  EXPECT_EQ(others[1].trials, 1u);
  EXPECT_TRUE(store.other_versions("saxpy", "cpu:0", "saxpy").empty());
  EXPECT_TRUE(store.other_versions("gemm", "cpu:0", "now").empty());
}

TEST(Store, ReopenKeepsData) {
  TempDir dir;
  fs::path file = dir.path() / "t.db";
  TrialRecord r = sample_record();
  {
    Store store(file);
    store.put(r);
  }
  Store again(file);
  auto found = again.find(r.spec_hash, r.device, r.size, r.config);
  ASSERT_TRUE(found.has_value());
  expect_same(r, *found);
}

TEST(Store, TwoStoresOnOneFileSeeEachOther) {
  TempDir dir;
  fs::path file = dir.path() / "t.db";
  Store a(file);
  Store b(file);
  TrialRecord r = sample_record();
  a.put(r);
  auto seen = b.find(r.spec_hash, r.device, r.size, r.config);
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->id, r.id);

  TrialRecord s = sample_record();
  s.config = Config({{"BM", Value(8)}});
  b.put(s);
  EXPECT_EQ(a.trials("abc123").size(), 2u);

  // Concurrent writers from two threads, each through its own Store.
  std::thread t1([&] {
    for (int i = 0; i < 50; ++i) {
      TrialRecord x = sample_record();
      x.config = Config({{"I", Value(i)}, {"W", Value("a")}});
      a.put(x);
    }
  });
  std::thread t2([&] {
    for (int i = 0; i < 50; ++i) {
      TrialRecord x = sample_record();
      x.config = Config({{"I", Value(i)}, {"W", Value("b")}});
      b.put(x);
    }
  });
  t1.join();
  t2.join();
  EXPECT_EQ(a.trials("abc123").size(), 102u);
  EXPECT_EQ(b.all().size(), 102u);
}

TEST(Store, BadPathGivesClearError) {
  TempDir dir;
  try {
    Store store(dir.path());
    FAIL() << "opening a directory should throw";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(dir.path().string()), std::string::npos) << what;
    EXPECT_NE(what.find("directory"), std::string::npos) << what;
  }

  // A parent that is a file.
  fs::path blocker = dir.path() / "file";
  std::ofstream(blocker) << "x";
  try {
    Store store(blocker / "t.db");
    FAIL() << "should throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((blocker / "t.db").string()), std::string::npos) << e.what();
  }

  // Not a database.
  fs::path junk = dir.path() / "junk.db";
  std::ofstream(junk) << std::string(4096, 'j');
  try {
    Store store(junk);
    FAIL() << "should throw";
  } catch (const std::runtime_error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(junk.string()), std::string::npos) << what;
    EXPECT_NE(what.find("not a database"), std::string::npos) << what;
  }
}

// A damaged page of the unique index: SQLite reads it only when a lookup
// reaches it, and then answers with fewer rows and no error, so a reading
// command would choose from part of the trials. Both opens refuse the file.
TEST(Store, ADamagedStoreIsRefusedAtOpenNotReadInPart) {
  TempDir dir;
  const fs::path file = dir.path() / "t.db";
  {
    Store store(file);
    for (int m = 1; m <= 200; ++m) {
      TrialRecord r = sample_record();
      r.size["M"] = Value(m);
      store.put(r);
    }
  }
  std::int64_t page_size = 0, index_root = 0;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_trials_1'", -1,
                                 &st, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    index_root = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    page_size = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  ASSERT_GT(index_root, 1);
  {
    // Flips bits in the keys at the end of the index's root page, as a bad
    // disk block would: its header and cell pointers stay whole.
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    const std::streamoff start = (index_root - 1) * page_size;
    for (std::streamoff at = start + page_size / 2; at < start + page_size; at += 31) {
      f.seekg(at);
      const int byte = f.get();
      f.seekp(at);
      f.put(static_cast<char>(byte ^ 0x5a));
    }
  }
  for (const bool read_only : {true, false}) {
    try {
      const Store store(file, read_only ? Store::Access::read_only : Store::Access::read_write);
      int found = 0;
      for (int m = 1; m <= 200; ++m) {
        TrialRecord r = sample_record();
        r.size["M"] = Value(m);
        found += store.find(r.spec_hash, r.device, r.size, r.config).has_value();
      }
      ADD_FAILURE() << (read_only ? "read-only" : "read-write") << " open of a damaged store: a lookup found " << found
                    << " of its 200 trials";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(file.string()), std::string::npos) << what;
      EXPECT_NE(what.find("the file is damaged"), std::string::npos) << what;
      EXPECT_NE(what.find("move " + file.string() + " aside"), std::string::npos) << what;
    }
  }
}

TEST(Store, RejectsNewerSchema) {
  TempDir dir;
  fs::path file = dir.path() / "t.db";
  { Store store(file); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    Store store(file);
    FAIL() << "should throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
}

// A trial's origin: a seed origin survives a re-measure by the search; an
// exclusive origin (one seed per size, as the tile rules give) moves from
// the size's old trial to the new one, in that size only.
TEST(Store, OriginsSurviveSearchPutsAndExclusiveOnesMove) {
  TempDir dir;
  Store store(dir.path() / "t.db");
  TrialRecord a = sample_record();
  a.origin = "rules";
  store.put(a, /*exclusive_origin=*/true);
  EXPECT_EQ(a.origin, "rules");
  TrialRecord other_size = sample_record();
  other_size.size["M"] = Value(1024);
  other_size.origin = "rules";
  store.put(other_size, true);
  TrialRecord b = sample_record();
  b.config.set("BM", Value(32));
  store.put(b);
  EXPECT_EQ(b.origin, "search");

  // Re-measured by the search (--no-rules --fresh): the origin stays.
  TrialRecord again = sample_record();
  again.origin = "search";
  store.put(again);
  EXPECT_EQ(again.origin, "rules");
  EXPECT_EQ(again.id, a.id);
  ASSERT_TRUE(store.find("abc123", "cpu:0", a.size, a.config));
  EXPECT_EQ(store.find("abc123", "cpu:0", a.size, a.config)->origin, "rules");

  // The rules now choose b: the origin moves from a to b, in that size only.
  b.origin = "rules";
  store.put(b, true);
  auto rows = store.trials("abc123");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].origin, "search");  // a
  EXPECT_EQ(rows[1].origin, "rules");   // the other size keeps its own
  EXPECT_EQ(rows[2].origin, "rules");   // b

  // A non-exclusive origin (listed seeds: several per size) moves nothing.
  TrialRecord c = sample_record();
  c.config.set("BM", Value(16));
  c.origin = "spec";
  store.put(c);
  TrialRecord d = sample_record();
  d.config.set("BM", Value(8));
  d.origin = "spec";
  store.put(d);
  EXPECT_EQ(store.find("abc123", "cpu:0", c.size, c.config)->origin, "spec");
  EXPECT_EQ(store.find("abc123", "cpu:0", d.size, d.config)->origin, "spec");
}

namespace {

int schema_version(const fs::path& file) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW);
  const int v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

// The version-1 table; version 2 added rule_seed.
constexpr const char* kVersion1Table = R"sql(
CREATE TABLE trials (
  id INTEGER PRIMARY KEY, spec_hash TEXT NOT NULL, kernel TEXT NOT NULL DEFAULT '', device TEXT NOT NULL DEFAULT '',
  size_key TEXT NOT NULL, size_json TEXT NOT NULL DEFAULT '{}', config_key TEXT NOT NULL,
  config_json TEXT NOT NULL DEFAULT '{}', status TEXT NOT NULL, error TEXT NOT NULL DEFAULT '', median_us REAL,
  min_us REAL, max_us REAL, mean_us REAL, noise REAL, sample_count INTEGER NOT NULL DEFAULT 0,
  samples_json TEXT NOT NULL DEFAULT '[]', max_abs_diff REAL, max_rel_err REAL, verified INTEGER NOT NULL DEFAULT 0,
  verify_passed INTEGER NOT NULL DEFAULT 1, verify_detail TEXT NOT NULL DEFAULT '', build_s REAL,
  machine_json TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL,
  UNIQUE (spec_hash, device, size_key, config_key));
CREATE INDEX trials_by_spec ON trials (spec_hash, id);
)sql";

// The columns versions 3 and 4 added (version 3 replaced version 2's
// rule_seed with origin), and those version 5 added.
constexpr const char* kVersion4Columns = R"sql(
ALTER TABLE trials ADD COLUMN origin TEXT NOT NULL DEFAULT 'search';
ALTER TABLE trials ADD COLUMN slower_factor REAL;
ALTER TABLE trials ADD COLUMN slower_best_us REAL;
)sql";
// A version-4 file's ok trial of spec 'v4', open for more rows.
constexpr const char* kVersion4OkTrial = R"sql(
INSERT INTO trials (spec_hash, device, size_key, size_json, config_key, config_json, status, error, median_us,
                    created_at, origin, slower_factor, slower_best_us)
  VALUES ('v4', 'cpu', 'M=4', '{"M": 4}', 'BM=16', '{"BM": 16}', 'ok', '', 12.5, '2024-01-01T00:00:00Z', 'rules',
          NULL, NULL))sql";
constexpr const char* kVersion5Columns = R"sql(
ALTER TABLE trials ADD COLUMN fault TEXT NOT NULL DEFAULT 'none';
ALTER TABLE trials ADD COLUMN settings TEXT NOT NULL DEFAULT '';
)sql";

void create(const fs::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

}  // namespace

// A version-1 file (before rule_seed) opens, gains the origin column, keeps
// its trials (origin 'search') and takes new ones.
TEST(Store, MigratesAVersion1File) {
  TempDir dir;
  fs::path file = dir.path() / "old.db";
  create(file, std::string(kVersion1Table) + R"sql(
INSERT INTO trials (spec_hash, device, size_key, size_json, config_key, config_json, status, median_us, created_at)
  VALUES ('old', 'cpu', 'M=4', '{"M": 4}', 'BM=16', '{"BM": 16}', 'ok', 12.5, '2024-01-01T00:00:00Z');
PRAGMA user_version=1;
)sql");
  {
    Store store(file);
    auto rows = store.trials("old");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].config.at("BM"), Value(16));
    EXPECT_DOUBLE_EQ(rows[0].stats.median.count(), 12.5);
    EXPECT_EQ(rows[0].origin, "search");
    rows[0].origin = "rules";
    store.put(rows[0], true);
    EXPECT_EQ(store.trials("old").size(), 1u);
  }
  Store reopened(file);  // version 6 now: no second migration
  auto rows = reopened.trials("old");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].origin, "rules");
  EXPECT_EQ(schema_version(file), 10);
}

// A version-2 file: its rule-seed flags become the origin 'rules', the old
// column is gone, and the trials are kept.
TEST(Store, MigratesAVersion2File) {
  TempDir dir;
  fs::path file = dir.path() / "v2.db";
  create(file, std::string(kVersion1Table) + R"sql(
ALTER TABLE trials ADD COLUMN rule_seed INTEGER NOT NULL DEFAULT 0;
INSERT INTO trials (spec_hash, device, size_key, size_json, config_key, config_json, status, median_us, created_at,
                    rule_seed)
  VALUES ('v2', 'cpu', 'M=4', '{"M": 4}', 'BM=16', '{"BM": 16}', 'ok', 12.5, '2024-01-01T00:00:00Z', 1),
         ('v2', 'cpu', 'M=4', '{"M": 4}', 'BM=32', '{"BM": 32}', 'ok', 10.0, '2024-01-01T00:00:00Z', 0);
PRAGMA user_version=2;
)sql");
  {
    Store store(file);
    auto rows = store.trials("v2");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].origin, "rules");
    EXPECT_EQ(rows[1].origin, "search");
    EXPECT_DOUBLE_EQ(rows[1].stats.median.count(), 10.0);
  }
  EXPECT_EQ(schema_version(file), 10);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  // The flag's column is gone: selecting it fails.
  EXPECT_NE(sqlite3_prepare_v2(db, "SELECT rule_seed FROM trials", -1, &st, nullptr), SQLITE_OK);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// A trial cut short by the early stop keeps its few samples, its partial
// statistics and the bar it was judged against.
TEST(Store, ATrialCutShortRoundTripsWithItsBar) {
  TempDir dir;
  Store store(dir.path() / "t.db");
  TrialRecord r = sample_record();
  r.status = Status::slower;
  r.samples = {Microseconds(61), Microseconds(60), Microseconds(64)};
  r.stats = summarize(r.samples);
  r.slower_than = SlowerThan{3.0, Microseconds(14.982)};
  store.put(r);
  auto back = store.find(r.spec_hash, r.device, r.size, r.config);
  ASSERT_TRUE(back);
  expect_same(r, *back);
  EXPECT_EQ(back->stats.count, 3u);

  // Measured again, ok: the bar goes with the old status.
  TrialRecord ok = sample_record();
  store.put(ok);
  back = store.find(ok.spec_hash, ok.device, ok.size, ok.config);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->status, Status::ok);
  EXPECT_FALSE(back->slower_than);
}

TEST(Store, ASlowerTrialWithoutItsBarIsRefused) {
  TempDir dir;
  Store store(dir.path() / "t.db");
  TrialRecord r = sample_record();
  r.status = Status::slower;
  EXPECT_THROW(store.put(r), std::runtime_error);
  EXPECT_TRUE(store.trials(r.spec_hash).empty());
}

TEST(Store, BestMedianIsTheFastestOkTrialOfItsSize) {
  TempDir dir;
  Store store(dir.path() / "t.db");
  TrialRecord a = sample_record();
  EXPECT_FALSE(store.best_median(a.spec_hash, a.device, a.size));
  store.put(a);  // ok, 14.982
  TrialRecord cut = sample_record();
  cut.config = Config({{"BM", Value(8)}});
  cut.status = Status::slower;  // faster than nothing that counts
  cut.stats.median = Microseconds(1.0);
  cut.slower_than = SlowerThan{3.0, Microseconds(0.1)};
  store.put(cut);
  TrialRecord other_size = sample_record();
  other_size.size = {{"M", Value(1)}};
  other_size.stats.median = Microseconds(2.0);
  store.put(other_size);
  TrialRecord faster = sample_record();
  faster.config = Config({{"BM", Value(16)}});
  faster.stats.median = Microseconds(12.0);
  store.put(faster);
  EXPECT_DOUBLE_EQ(store.best_median(a.spec_hash, a.device, a.size)->count(), 12.0);
  EXPECT_FALSE(store.best_median(a.spec_hash, "cuda:0", a.size));
  EXPECT_FALSE(store.best_median("other", a.device, a.size));
}

// A version-3 file (origins, no early stop) gains the bar's columns and
// keeps its trials.
TEST(Store, MigratesAVersion3File) {
  TempDir dir;
  fs::path file = dir.path() / "v3.db";
  create(file, std::string(kVersion1Table) + R"sql(
ALTER TABLE trials ADD COLUMN origin TEXT NOT NULL DEFAULT 'search';
INSERT INTO trials (spec_hash, device, size_key, size_json, config_key, config_json, status, median_us, created_at,
                    origin)
  VALUES ('v3', 'cpu', 'M=4', '{"M": 4}', 'BM=16', '{"BM": 16}', 'ok', 12.5, '2024-01-01T00:00:00Z', 'rules');
PRAGMA user_version=3;
)sql");
  {
    Store store(file);
    auto rows = store.trials("v3");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].origin, "rules");
    EXPECT_FALSE(rows[0].slower_than);
    TrialRecord cut = rows[0];
    cut.config = Config({{"BM", Value(32)}});
    cut.status = Status::slower;
    cut.slower_than = SlowerThan{2.5, Microseconds(12.5)};
    store.put(cut);
  }
  EXPECT_EQ(schema_version(file), 10);
  Store reopened(file);
  auto rows = reopened.trials("v3");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].slower_than, (SlowerThan{2.5, Microseconds(12.5)}));
}

// A version-4 file (early stop, no faults): its failures become the
// config's, with unknown settings (so a resume measures them once more); ok
// and cut-short trials have no fault.
TEST(Store, MigratesAVersion4File) {
  TempDir dir;
  fs::path file = dir.path() / "v4.db";
  create(file, std::string(kVersion1Table) + kVersion4Columns + kVersion4OkTrial + R"sql(,
         ('v4', 'cpu', 'M=4', '{"M": 4}', 'BM=32', '{"BM": 32}', 'crash', 'worker killed by SIGKILL', NULL,
          '2024-01-01T00:00:00Z', 'search', NULL, NULL),
         ('v4', 'cpu', 'M=4', '{"M": 4}', 'BM=64', '{"BM": 64}', 'slower', '', 40.0, '2024-01-01T00:00:00Z',
          'search', 3.0, 12.5);
PRAGMA user_version=4;
)sql");
  try {
    Store read(file, Store::Access::read_only);
    FAIL() << "a version-4 file is not read without writing";
  } catch (const OldStoreError& e) {  // which `tunekit tune` lets its own open migrate
    EXPECT_NE(std::string(e.what()).find("open it once with a command that writes"), std::string::npos) << e.what();
  }
  {
    Store store(file);
    auto rows = store.trials("v4");
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].origin, "rules");
    EXPECT_EQ(rows[0].fault, Fault::none);
    EXPECT_EQ(rows[1].status, Status::crash);
    EXPECT_EQ(rows[1].fault, Fault::config);
    EXPECT_EQ(rows[1].settings, "");
    EXPECT_EQ(rows[2].fault, Fault::none);
    EXPECT_TRUE(rows[2].slower_than);
    rows[1].fault = Fault::environment;
    rows[1].settings = "timeout=60s";
    store.put(rows[1]);
  }
  EXPECT_EQ(schema_version(file), 10);
  Store reopened(file);
  auto rows = reopened.trials("v4");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].fault, Fault::environment);
  EXPECT_EQ(rows[1].settings, "timeout=60s");
}

// What the read-only open's message advises works: `tunekit tune` into a
// version-4 store migrates it (its check of the path opened it read-only
// and refused it) and adds its trials beside the old ones.
TEST(Store, ATuneMigratesAnOldStoreItIsGiven) {
  TempDir dir;
  fs::path file = dir.path() / "v4.db";
  create(file, std::string(kVersion1Table) + kVersion4Columns + kVersion4OkTrial + R"sql(;
PRAGMA user_version=4;
)sql");
  const auto r =
      tunekit::testing::tunekit_cli({"tune",         std::string(TUNEKIT_SOURCE_DIR) + "/examples/saxpy/saxpy.cpp",
                                     "--size",       "N=64",
                                     "--entry",      "saxpy",
                                     "--arg",        "x:f32:N",
                                     "--arg",        "y:f32:N:1.0:inout",
                                     "--arg",        "n:i32=N",
                                     "--where",      "TUNE_UNROLL == 1",
                                     "--where",      "TUNE_BLOCK == 1024",
                                     "--db",         file.string(),
                                     "--out-dir",    (dir.path() / "out").string(),
                                     "--no-progress"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(schema_version(file), 10);
  Store store(file, Store::Access::read_only);
  EXPECT_EQ(store.trials("v4").size(), 1u);
}

// Version 5 lacks only the evaluation and verification times: read as it
// is (the times not recorded, 0), also without writing; migrated on a
// writable open, where they can be stored.
TEST(Store, ReadsAndMigratesAVersion5File) {
  TempDir dir;
  fs::path file = dir.path() / "v5.db";
  create(file, std::string(kVersion1Table) + kVersion4Columns + kVersion5Columns + R"sql(
INSERT INTO trials (spec_hash, device, size_key, size_json, config_key, config_json, status, error, median_us,
                    created_at, build_s)
  VALUES ('v5', 'cpu', 'M=4', '{"M": 4}', 'BM=16', '{"BM": 16}', 'ok', '', 12.5, '2024-01-01T00:00:00Z', 0.5);
PRAGMA user_version=5;
)sql");
  {
    Store read(file, Store::Access::read_only);
    auto rows = read.trials("v5");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].stats.median.count(), 12.5);
    EXPECT_EQ(rows[0].build_time.count(), 0.5);
    EXPECT_EQ(rows[0].eval_time.count(), 0);
    EXPECT_EQ(rows[0].verify_time.count(), 0);
  }
  EXPECT_EQ(schema_version(file), 5);  // reading changed nothing
  {
    Store store(file);
    auto rows = store.trials("v5");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].eval_time.count(), 0);
    rows[0].eval_time = Seconds(0.75);
    rows[0].verify_time = Seconds(0.125);
    store.put(rows[0]);
  }
  EXPECT_EQ(schema_version(file), 10);
  Store reopened(file, Store::Access::read_only);
  auto rows = reopened.trials("v5");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].eval_time.count(), 0.75);
  EXPECT_EQ(rows[0].verify_time.count(), 0.125);
}

// Version 6 lacks only the confirmed mark: read as it is (not confirmed),
// also without writing; migrated on a writable open, where it can be stored.
TEST(Store, ReadsAndMigratesAVersion6File) {
  TempDir dir;
  fs::path file = dir.path() / "v6.db";
  create(file, std::string(kVersion1Table) + kVersion4Columns + kVersion5Columns + R"sql(
ALTER TABLE trials ADD COLUMN eval_s REAL;
ALTER TABLE trials ADD COLUMN verify_s REAL;
INSERT INTO trials (spec_hash, device, size_key, size_json, config_key, config_json, status, error, median_us,
                    created_at, eval_s)
  VALUES ('v6', 'cpu', 'M=4', '{"M": 4}', 'BM=16', '{"BM": 16}', 'ok', '', 12.5, '2024-01-01T00:00:00Z', 0.25);
PRAGMA user_version=6;
)sql");
  {
    Store read(file, Store::Access::read_only);
    auto rows = read.trials("v6");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].eval_time.count(), 0.25);
    EXPECT_FALSE(rows[0].confirmed);
  }
  EXPECT_EQ(schema_version(file), 6);  // reading changed nothing
  {
    Store store(file);
    auto rows = store.trials("v6");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_FALSE(rows[0].confirmed);
    rows[0].confirmed = true;
    store.put(rows[0]);
  }
  EXPECT_EQ(schema_version(file), 10);
  Store reopened(file, Store::Access::read_only);
  auto rows = reopened.trials("v6");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].confirmed);
  EXPECT_EQ(rows[0].eval_time.count(), 0.25);
}

// A version-7 file (before resources were kept) reads without them, and a
// write migrates it: its old rows still have none, a new trial keeps its own.
TEST(Store, ReadsAndMigratesAVersion7FileAndKeepsABuildsResources) {
  TempDir dir;
  fs::path file = dir.path() / "v7.db";
  create(file, std::string(kVersion1Table) + kVersion4Columns + kVersion5Columns + R"sql(
ALTER TABLE trials ADD COLUMN eval_s REAL;
ALTER TABLE trials ADD COLUMN verify_s REAL;
ALTER TABLE trials ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0;
INSERT INTO trials (spec_hash, device, size_key, size_json, config_key, config_json, status, error, median_us,
                    created_at, confirmed)
  VALUES ('v7', 'cuda', 'M=4', '{"M": 4}', 'BM=16', '{"BM": 16}', 'ok', '', 12.5, '2024-01-01T00:00:00Z', 1);
PRAGMA user_version=7;
)sql");
  {
    Store read(file, Store::Access::read_only);
    auto rows = read.trials("v7");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_TRUE(rows[0].confirmed);
    EXPECT_TRUE(rows[0].resources.empty());
  }
  EXPECT_EQ(schema_version(file), 7);  // reading changed nothing
  {
    Store store(file);
    TrialRecord r = store.trials("v7").at(0);
    EXPECT_TRUE(r.resources.empty());
    r.config = Config({{"BM", Value(32)}});
    r.resources = {{"registers", 168}, {"spills", 12}, {"shared_memory", 49152}};
    store.put(r);
  }
  EXPECT_EQ(schema_version(file), 10);
  Store reopened(file, Store::Access::read_only);
  auto rows = reopened.trials("v7");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].resources.empty());
  EXPECT_TRUE(rows[0].confirmed);
  EXPECT_EQ(rows[1].resources, (KernelResources{{"registers", 168}, {"shared_memory", 49152}, {"spills", 12}}));
}

TEST(Store, ReadsAndMigratesAVersion8FileAndKeepsATrialsWaitForACpu) {
  TempDir dir;
  fs::path file = dir.path() / "v8.db";
  create(file, std::string(kVersion1Table) + kVersion4Columns + kVersion5Columns + R"sql(
ALTER TABLE trials ADD COLUMN eval_s REAL;
ALTER TABLE trials ADD COLUMN verify_s REAL;
ALTER TABLE trials ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN resources TEXT NOT NULL DEFAULT '';
INSERT INTO trials (spec_hash, device, size_key, size_json, config_key, config_json, status, error, median_us,
                    created_at, resources)
  VALUES ('v8', 'cpu', 'M=4', '{"M": 4}', 'BM=16', '{"BM": 16}', 'ok', '', 12.5, '2024-01-01T00:00:00Z',
          '{"registers": 40}');
PRAGMA user_version=8;
)sql");
  {
    Store read(file, Store::Access::read_only);
    auto rows = read.trials("v8");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].resources, (KernelResources{{"registers", 40}}));
    EXPECT_EQ(rows[0].cpu_wait_share, 0.0);
  }
  EXPECT_EQ(schema_version(file), 8);  // reading changed nothing
  {
    Store store(file);
    TrialRecord r = store.trials("v8").at(0);
    r.config = Config({{"BM", Value(32)}});
    r.cpu_wait_share = 0.37;
    store.put(r);
  }
  EXPECT_EQ(schema_version(file), 10);
  Store reopened(file, Store::Access::read_only);
  auto rows = reopened.trials("v8");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].cpu_wait_share, 0.0);
  EXPECT_EQ(rows[0].resources, (KernelResources{{"registers", 40}}));
  EXPECT_DOUBLE_EQ(rows[1].cpu_wait_share, 0.37);
}

// A version-9 file (before trials named their toolchain) reads without
// one, and a write migrates it: its old rows name none and are listed under
// no toolchain, while new trials are listed by theirs, one entry per
// spec_hash of the kernel.
TEST(Store, ReadsAndMigratesAVersion9FileAndListsAKernelsToolchains) {
  TempDir dir;
  fs::path file = dir.path() / "v9.db";
  create(file, std::string(kVersion1Table) + kVersion4Columns + kVersion5Columns + R"sql(
ALTER TABLE trials ADD COLUMN eval_s REAL;
ALTER TABLE trials ADD COLUMN verify_s REAL;
ALTER TABLE trials ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN resources TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN cpu_wait REAL NOT NULL DEFAULT 0;
INSERT INTO trials (spec_hash, device, size_key, size_json, config_key, config_json, status, error, median_us,
                    created_at, cpu_wait)
  VALUES ('v9', 'cpu', 'M=4', '{"M": 4}', 'BM=16', '{"BM": 16}', 'ok', '', 12.5, '2024-01-01T00:00:00Z', 0.5);
PRAGMA user_version=9;
)sql");
  {
    Store read(file, Store::Access::read_only);
    auto rows = read.trials("v9");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].cpu_wait_share, 0.5);
    EXPECT_EQ(rows[0].hash_without_toolchain, "");
    EXPECT_EQ(rows[0].toolchain, "");
    EXPECT_TRUE(read.toolchains("kernel").empty());
  }
  EXPECT_EQ(schema_version(file), 9);  // reading changed nothing
  {
    Store store(file);
    TrialRecord r = store.trials("v9").at(0);
    auto put = [&](const std::string& spec_hash, const std::string& toolchain, int bm) {
      r.spec_hash = spec_hash;
      r.hash_without_toolchain = "kernel";
      r.toolchain = toolchain;
      r.config = Config({{"BM", Value(bm)}});
      store.put(r);
    };
    put("v10-gcc13", "g++ (Fake) 13.1.0 for x86_64-linux-gnu", 16);
    put("v10-gcc13", "g++ (Fake) 13.1.0 for x86_64-linux-gnu", 32);
    put("v10-gcc12", "g++ (Fake) 12.2.0 for x86_64-linux-gnu", 16);
  }
  EXPECT_EQ(schema_version(file), 10);
  Store reopened(file, Store::Access::read_only);
  auto rows = reopened.trials("v9");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].hash_without_toolchain, "");
  EXPECT_EQ(rows[0].toolchain, "");
  const auto toolchains = reopened.toolchains("kernel");
  ASSERT_EQ(toolchains.size(), 2u);
  EXPECT_EQ(toolchains[0].text, "g++ (Fake) 12.2.0 for x86_64-linux-gnu");
  EXPECT_EQ(toolchains[0].spec_hash, "v10-gcc12");
  EXPECT_EQ(toolchains[0].trials, 1u);
  EXPECT_EQ(toolchains[1].text, "g++ (Fake) 13.1.0 for x86_64-linux-gnu");
  EXPECT_EQ(toolchains[1].spec_hash, "v10-gcc13");
  EXPECT_EQ(toolchains[1].trials, 2u);
  EXPECT_EQ(reopened.trials("v10-gcc13").at(1).toolchain, "g++ (Fake) 13.1.0 for x86_64-linux-gnu");
  // The old rows name no toolchain: no reader of another's takes them.
  EXPECT_TRUE(reopened.toolchains("").empty());
}

// An ok trial has no fault; a failure stored without one is the config's.
TEST(Store, AFailureWithoutAFaultIsTheConfigs) {
  TempDir dir;
  Store store(dir.path() / "t.db");
  TrialRecord r;
  r.spec_hash = "h";
  r.device = "cpu";
  r.config = Config({{"BM", Value(16)}});
  r.status = Status::timeout;
  store.put(r);
  EXPECT_EQ(store.find("h", "cpu", r.size, r.config)->fault, Fault::config);
  r.status = Status::ok;
  r.fault = Fault::environment;
  store.put(r);
  EXPECT_EQ(store.find("h", "cpu", r.size, r.config)->fault, Fault::none);
}

// Item 13: another process that holds the write lock for longer than the
// old 30-second limit delays a put(); it does not fail it (the trial in
// flight would be lost).
TEST(Store, APutWaitsForALockHeldLongerThanThirtySeconds) {
  TempDir dir;
  const fs::path file = dir.path() / "locked.db";
  { Store create(file); }
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::thread holder([&] {
    std::this_thread::sleep_for(std::chrono::seconds(32));
    sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
  });
  Store store(file);
  TrialRecord r;
  r.spec_hash = "h";
  r.device = "cpu";
  r.config = Config({{"BM", Value(16)}});
  EXPECT_NO_THROW(store.put(r));
  holder.join();
  sqlite3_close(other);
  EXPECT_EQ(store.all().size(), 1u);
}

// An SQLite file of something else is not made a store: no table is added,
// nothing is changed, and both kinds of open say what the file is.
TEST(Store, ADatabaseOfSomethingElseIsRefusedUnchanged) {
  TempDir dir;
  const fs::path file = dir.path() / "notes.db";
  create(file, "CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('keep me');");
  for (const auto access : {Store::Access::read_write, Store::Access::read_only}) {
    try {
      Store s(file, access);
      ADD_FAILURE() << "a database of notes was opened as a store";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("is an SQLite database, but not a tunekit results store (its tables: "
                                           "notes); give another file"),
                std::string::npos)
          << e.what();
    }
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT group_concat(name) FROM sqlite_master WHERE type = 'table'", -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "notes");
  sqlite3_finalize(st);
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "delete");  // not switched to WAL
  sqlite3_finalize(st);
  sqlite3_close(db);

  // An empty database becomes a store; read without writing, it has no results yet.
  const fs::path empty = dir.path() / "empty.db";
  create(empty, "");
  try {
    Store s(empty, Store::Access::read_only);
    ADD_FAILURE() << "an empty database was read as a store";
  } catch (const EmptyStoreError& e) {  // a tune may write it (ReliabilityCli.ATuneIntoADatabaseBeingCreatedGoesOn)
    EXPECT_NE(std::string(e.what()).find("is an empty database: it holds no tunekit results yet"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(Store(empty).all().empty());
}

// A store whose write-ahead log cannot be folded into its file as a run
// ends (a full disk; here a file-size limit the file has passed) says where
// the trials are and to move or copy the two files together: SQLite's own
// fold as the last connection closes fails without a word, and a copy of
// the file alone lacks them.
TEST(Store, AWriteAheadLogThatCannotBeFoldedInIsSaid) {
  TempDir dir;
  const fs::path db = dir.path() / "t.db";
  {
    Store s(db);
    for (int i = 0; i < 40; ++i) {
      TrialRecord r = sample_record();
      r.config = Config({{"BM", Value(i)}});
      r.error = std::string(4000, 'x');
      s.put(r);
    }
  }
  ASSERT_GT(fs::file_size(db), 128u * 1024);
  Store open(db);
  TrialRecord r = sample_record();
  r.config = Config({{"BM", Value(1000)}});
  r.error = std::string(8000, 'y');  // pages past the file's end, where the limit below forbids writing
  open.put(r);
  ASSERT_GT(fs::file_size(db.string() + "-wal"), 0u);

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const auto said = detail::fold_write_ahead_log(db);
    const std::string text = said ? *said : "(nothing said)";
    (void)!::write(fds[1], text.data(), text.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string said;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) said.append(buffer, n);
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(
      said.rfind("the results store " + db.string() + " could not take in its write-ahead log as the run ended (", 0),
      0u)
      << said;
  EXPECT_NE(said.find("the latest are in t.db-wal beside t.db alone until a run that can write there folds them in; "
                      "move or copy t.db and t.db-wal together (a copy of t.db alone lacks them)"),
            std::string::npos)
      << said;

  // With room, it is folded in, and nothing is said.
  EXPECT_EQ(detail::fold_write_ahead_log(db), std::nullopt);
  EXPECT_EQ(fs::file_size(db.string() + "-wal"), 0u);
  EXPECT_EQ(Store(db, Store::Access::read_only).all().size(), 41u);
}

// Two tuners started at once on a fresh output folder (docs/reliability.md:
// they may share one): each process creates or opens the same new store, and
// every one opens it, whoever creates the schema. Before, one could see the
// other's schema half made ("not a tunekit results store") or be refused the
// switch to WAL mode ("database is locked"). Processes, not threads: SQLite's
// locks between processes are what is raced.
TEST(Store, ProcessesCreatingTheSameStoreAtOnceAllOpenIt) {
  TempDir dir;
  for (int round = 0; round < 20; ++round) {
    const fs::path file = dir.path() / ("fresh" + std::to_string(round) + ".db");
    std::vector<pid_t> children;
    for (int i = 0; i < 4; ++i) {
      const pid_t child = ::fork();
      ASSERT_GE(child, 0);
      if (child == 0) {
        int code = 0;
        try {
          Store store(file);
          TrialRecord r;
          r.spec_hash = "h";
          r.device = "cpu";
          r.config = Config({{"BM", Value(i)}});
          store.put(r);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s\n", e.what());
          code = 1;
        }
        std::_Exit(code);
      }
      children.push_back(child);
    }
    for (pid_t child : children) {
      int status = 0;
      ASSERT_EQ(::waitpid(child, &status, 0), child);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round;
    }
    EXPECT_EQ(Store(file).trials("h").size(), 4u) << "round " << round;
  }
}

// A store whose file is deleted during the run (a kernel that removes the
// files of its folder) refuses the next trial, saying so, instead of taking
// writes that vanish with it.
TEST(Store, AStoreWhoseFileWasDeletedRefusesTheNextTrial) {
  TempDir dir;
  const fs::path file = dir.path() / "results.db";
  Store store(file);
  TrialRecord r = sample_record();
  store.put(r);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(file.string() + suffix);
  TrialRecord next = sample_record();
  next.config = Config({{"BM", Value(std::int64_t{7})}});
  try {
    store.put(next);
    ADD_FAILURE() << "a trial was stored in a deleted file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("deleted or moved during the run"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
}

// A failure that was never timed stores no times (NULL), which a query of
// the file cannot take for the fastest; it reads back as no times (0).
TEST(Store, AFailureNeverTimedHasNoTimesInTheFile) {
  TempDir dir;
  const auto path = dir.path() / "t.db";
  {
    Store store(path);
    TrialRecord r;
    r.spec_hash = "h";
    r.device = "cpu";
    r.status = Status::compile_error;
    store.put(r);
    const auto found = store.find("h", "cpu", {}, Config());
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->stats.median.count(), 0.0);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT median_us IS NULL, min_us IS NULL FROM trials", -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 1);
  EXPECT_EQ(sqlite3_column_int(st, 1), 1);
  sqlite3_finalize(st);
  sqlite3_close(db);
}
