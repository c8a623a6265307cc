// The one table of snowflake_stats columns (core/stats_columns.hpp): it
// matches the SQL function's declared columns, and /metrics shows each
// column it names.
#include "core/prometheus.hpp"
#include "core/stats_columns.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace snowflake::core;

namespace {

// The OUT columns of snowflake_stats in an install or upgrade script (run
// from the top of the source tree, as make unit and test/run_all.sh do).
std::vector<std::string> sql_columns(const std::string& script) {
    std::ifstream in(script);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    std::vector<std::string> out;
    const size_t start = s.find("FUNCTION snowflake_stats(");
    if (start == std::string::npos) return out;
    const size_t end = s.find("RETURNS", start);
    const std::string decl = s.substr(start, end - start);
    // Each "OUT name type" (no std::regex: GCC 12 warns inside it under
    // the sanitizers' -O1).
    std::istringstream words(decl);
    std::string word;
    while (words >> word)
        if (word == "OUT" && words >> word) out.push_back(word);
    return out;
}

std::string default_version() {
    std::ifstream in("snowflake.control");
    std::string line;
    const std::string key = "default_version";
    while (std::getline(in, line)) {
        if (line.compare(0, key.size(), key) != 0) continue;
        const size_t open = line.find('\''), close = line.rfind('\'');
        if (open != std::string::npos && close > open) return line.substr(open + 1, close - open - 1);
    }
    return "";
}

}  // namespace

TEST(StatsColumns, MatchTheSqlFunction) {
    const std::string v = default_version();
    ASSERT_FALSE(v.empty()) << "run from the top of the source tree";
    const std::vector<std::string> cols = sql_columns("snowflake--" + v + ".sql");
    ASSERT_EQ(static_cast<int>(cols.size()), kStatsColumnCount);
    for (int i = 0; i < kStatsColumnCount; i++) EXPECT_EQ(cols[i], kStatsColumns[i].column) << "column " << i;
}

// The update script to the current version declares the same columns as
// the install script, and 1.1's and 1.2's columns (which stats.cpp still
// serves to a database not yet updated) are the table's first
// kStatsColumnCount_1_1 and kStatsColumnCount_1_2.
TEST(StatsColumns, MatchTheUpdateAndTheOlderDefinitions) {
    const std::vector<std::string> updated = sql_columns("snowflake--1.2--1.3.sql");
    ASSERT_EQ(static_cast<int>(updated.size()), kStatsColumnCount);
    for (int i = 0; i < kStatsColumnCount; i++) EXPECT_EQ(updated[i], kStatsColumns[i].column) << "column " << i;
    for (const char* script : {"snowflake--1.2.sql", "snowflake--1.1--1.2.sql"}) {
        const std::vector<std::string> v12 = sql_columns(script);
        ASSERT_EQ(static_cast<int>(v12.size()), kStatsColumnCount_1_2) << script;
        for (int i = 0; i < kStatsColumnCount_1_2; i++)
            EXPECT_EQ(v12[i], kStatsColumns[i].column) << script << ", column " << i;
    }
    const std::vector<std::string> old = sql_columns("snowflake--1.1.sql");
    ASSERT_EQ(static_cast<int>(old.size()), kStatsColumnCount_1_1);
    for (int i = 0; i < kStatsColumnCount_1_1; i++) EXPECT_EQ(old[i], kStatsColumns[i].column) << "column " << i;
}

TEST(StatsColumns, NamesUniqueAndEachShown) {
    std::set<std::string> columns, metrics;
    for (const StatsColumn& c : kStatsColumns) {
        EXPECT_TRUE(columns.insert(c.column).second) << c.column;
        if (c.kind == MetricKind::None) {
            EXPECT_EQ(c.metric, nullptr) << c.column;
            continue;
        }
        ASSERT_NE(c.metric, nullptr) << c.column;
        EXPECT_TRUE(metrics.insert(c.metric).second) << c.metric;
    }
    StatsSnapshot s;
    http::Health h;
    std::vector<char> buf(1 << 16);
    const std::string text(buf.data(), http::format_metrics(buf.data(), buf.size(), s, h));
    // HELP ends "(snowflake_stats.COLUMN)", or "(snowflake_stats.lease_state,
    // snowflake_stats.lease_id)" for the metric that shows two.
    for (const StatsColumn& c : kStatsColumns) {
        const std::string name = "snowflake_stats." + std::string(c.column);
        EXPECT_TRUE(text.find(name + ")") != std::string::npos || text.find(name + ",") != std::string::npos)
            << c.column;
    }
}

TEST(StatsColumns, ValuesAndNulls) {
    StatsSnapshot s;
    s.epoch_unix_us = 1735689600000000;
    s.last_ms = 1500;
    s.clock_known = true;
    s.clock_max_error_us = 1501;
    auto value = [&s](const char* column) {
        for (const StatsColumn& c : kStatsColumns)
            if (std::string(c.column) == column) return c.value(s);
        ADD_FAILURE() << column;
        return StatValue{};
    };
    EXPECT_FALSE(value("worker_id").present);       // -1: NULL in SQL
    EXPECT_EQ(value("worker_id").n, -1);            // the metric shows -1
    EXPECT_EQ(value("last_timestamp").n, 1735689600000000 + 1500000);
    EXPECT_FALSE(value("high_water_mark").present);
    EXPECT_FALSE(value("lease_id").present);
    EXPECT_FALSE(value("lease_last_error").present);
    EXPECT_STREQ(value("lease_state").text, "static");
    EXPECT_EQ(value("clock_max_error_ms").n, 2);    // whole ms, rounded up, for the metric
    EXPECT_DOUBLE_EQ(value("clock_max_error_ms").f, 1.501);
    EXPECT_FALSE(value("clock_est_error_ms").present);
    EXPECT_STREQ(value("coordinator").text, "none");
    EXPECT_FALSE(value("lease_session").present);
    EXPECT_FALSE(value("lease_granted_ttl_ms").present);
}

TEST(HttpCount, MessageFromTheConstant) {
    EXPECT_EQ(std::string(http::kCountMessage.text),
              "count must be a number from 1 to " + std::to_string(http::kMaxCount));
    int32_t n = 0;
    EXPECT_TRUE(http::parse_count(1, std::to_string(http::kMaxCount).c_str(), &n));
    EXPECT_EQ(n, http::kMaxCount);
    EXPECT_FALSE(http::parse_count(1, std::to_string(http::kMaxCount + 1).c_str(), &n));
}
