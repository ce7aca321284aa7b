#pragma once
// The end of a run that wrote a store: SQLite folds the write-ahead log
// (DB-wal) into the file when its last connection closes, and says nothing
// when it cannot (a full disk): the trials then live in DB-wal alone, and a
// copy of DB without it lacks them.
#include <filesystem>
#include <optional>
#include <string>

namespace tunekit::detail {

// Folds `db`'s write-ahead log into the file, through a connection of its
// own. nullopt when done, or when another connection holds the log (its
// process folds it in as it ends); else what the user must know: where
// the trials are, and to move or copy the two files together.
std::optional<std::string> fold_write_ahead_log(const std::filesystem::path& db);

}  // namespace tunekit::detail
