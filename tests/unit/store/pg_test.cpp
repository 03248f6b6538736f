// The server engine's pure parts (lib/store/pg.hpp): SQL translation and URL redaction.
#include <gtest/gtest.h>

#include "store/db.hpp"
#include "store/pg.hpp"
#include "store/scan.hpp"

namespace ctxfold {
namespace {

TEST(PgTranslate, NumberedPlaceholdersBecomeDollars) {
  int n = 0;
  EXPECT_EQ(pg::translate("SELECT a FROM t WHERE b=?1 AND c<=?12 OR d=?1", n),
            "SELECT a FROM t WHERE b=$1 AND c<=$12 OR d=$1");
  EXPECT_EQ(n, 12);
}

TEST(PgTranslate, QuotedTextIsKept) {
  int n = 0;
  EXPECT_EQ(pg::translate("SELECT '?1', \"a?2\" FROM t WHERE x = ?1 AND y = 'it''s ?3'", n),
            "SELECT '?1', \"a?2\" FROM t WHERE x = $1 AND y = 'it''s ?3'");
  EXPECT_EQ(n, 1);
}

TEST(PgTranslate, BarePlaceholdersAreNumbered) {
  int n = 0;
  EXPECT_EQ(pg::translate("VALUES (?, ?)", n), "VALUES ($1, $2)");
  EXPECT_EQ(n, 2);
}

TEST(PgTranslate, IndexedByIsDropped) {
  int n = 0;
  EXPECT_EQ(pg::translate("SELECT * FROM nodes INDEXED BY nodes_session_kind WHERE session=?1", n),
            "SELECT * FROM nodes WHERE session=$1");
  EXPECT_EQ(pg::translate("SELECT reindexed BY_x FROM t", n), "SELECT reindexed BY_x FROM t");
}

TEST(PgTranslate, CrossJoinIsAPlainJoin) {
  int n = 0;
  EXPECT_EQ(pg::translate("FROM node_marks m CROSS JOIN nodes x ON x.seq = m.seq", n), "FROM node_marks m JOIN nodes x ON x.seq = m.seq");
}

TEST(PgUrl, ServerUrlsAreRecognised) {
  EXPECT_TRUE(is_server_url("postgresql://u@h/db"));
  EXPECT_TRUE(is_server_url("postgres://h/db"));
  EXPECT_FALSE(is_server_url("./postgresql.db"));
  EXPECT_FALSE(is_server_url("s.db"));
  EXPECT_FALSE(is_server_url(":memory:"));
}

TEST(PgUrl, PasswordsAreRedacted) {
  EXPECT_EQ(pg::redact("postgresql://me:s3cret@db.example:5432/ctx"), "postgresql://me:***@db.example:5432/ctx");
  EXPECT_EQ(pg::redact("postgres://me@h/ctx?password=s3cret&sslmode=require"),
            "postgres://me@h/ctx?password=***&sslmode=require");
  EXPECT_EQ(pg::redact("postgresql://me@h/ctx"), "postgresql://me@h/ctx");
  EXPECT_EQ(pg::redact("postgresql://me:p%40ss@/ctx?host=/tmp/x"), "postgresql://me:***@/ctx?host=/tmp/x");
}

TEST(PgUrl, PasswordsAreTakenOutForCommandsToRun) {
  EXPECT_EQ(pg::without_password("postgresql://me:s3cret@db.example:5432/ctx"), "postgresql://me@db.example:5432/ctx");
  EXPECT_EQ(pg::without_password("postgres://me@h/ctx?password=s3cret&sslmode=require"), "postgres://me@h/ctx?sslmode=require");
  EXPECT_EQ(pg::without_password("postgres://me@h/ctx?sslmode=require&password=s3cret"), "postgres://me@h/ctx?sslmode=require");
  EXPECT_EQ(pg::without_password("postgres://me@h/ctx?sslmode=require&password=s3cret&host=/x"),
            "postgres://me@h/ctx?sslmode=require&host=/x");
  EXPECT_EQ(pg::without_password("postgres://me@h/ctx?password=s3cret"), "postgres://me@h/ctx");
  EXPECT_EQ(pg::without_password("postgresql://me:a:b@/ctx?host=/tmp/x"), "postgresql://me@/ctx?host=/tmp/x");
  EXPECT_EQ(pg::without_password("postgresql://me@h/ctx"), "postgresql://me@h/ctx");
}

TEST(PgUrl, ProgressLinesNameTheDatabaseNotItsSocketFolder) {
  EXPECT_EQ(database_label("postgresql://ctxfold@/f_0123?host=/tmp/ctxfold-pg.x"), "f_0123");
  EXPECT_EQ(database_label("postgres://me:s3cret@db.example:5432/team"), "team");
  EXPECT_EQ(database_label("postgresql://me@h?dbname=arch&sslmode=require"), "arch");
  EXPECT_EQ(database_label("postgresql://me:s3cret@h"), "postgresql://me:***@h");
  EXPECT_EQ(database_label("/home/me/archive/ctxfold.db"), "ctxfold.db");
  EXPECT_EQ(database_label("ctxfold.db"), "ctxfold.db");
}

}  // namespace
}  // namespace ctxfold
