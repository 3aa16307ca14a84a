// The workers' one vocabulary (runner/worker_events.h): every record is an event, one JSON object per line,
// read by util/json_value.h. A result crosses the process boundary whole: every field, statuses and
// executions by name (never an ordinal), NaN metrics, any text, and `data` verbatim.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "runner/event_stream.h"
#include "runner/worker_events.h"
#include "util/json_value.h"

namespace crossdev::conformance {
namespace {

// `line` with the first `"key":"old"` member's value replaced by `value` (JSON text).
std::string with_member(std::string line, const std::string& key, const std::string& old, const std::string& value) {
  const std::string from = "\"" + key + "\":\"" + old + "\"";
  const std::size_t at = line.find(from);
  EXPECT_NE(at, std::string::npos) << from << " in " << line;
  return at == std::string::npos ? line : line.replace(at, from.size(), "\"" + key + "\":" + value);
}

CaseResult full_case() {
  CaseResult r;
  r.id = "row/add/cuda/float32/forward";
  r.row_id = "row";
  r.suite = "opinfo";
  r.source = "seed 000";
  r.intent = "tab\there, newline\nthere, quote \" and backslash \\";
  r.file = "matrices/opinfo/ops.yaml";
  r.line = 42;
  r.status = Status::XPass;
  r.device = "cuda:0";
  r.execution = Execution::Simulated;
  r.message = "non-ASCII: \xc3\xa9 \xe2\x88\x9e \xf0\x9f\x98\x80, a control \x01 and the separators \x1e\x1f";
  r.metrics = {{"max_abs", 0.1}, {"max_ulp", std::numeric_limits<double>::quiet_NaN()},
               {"max_rel", std::numeric_limits<double>::infinity()}, {"tiny", 4.9406564584124654e-324}};
  r.details = {{"expected", "[1, 2]"}, {"actual", "{\"not\": \"data\"}"}};
  r.data_json = "{\"layers\":[{\"name\":\"fc\",\"max_abs\":1.5e-07}],\"steps\":3}";
  r.duration_s = 0.123456789;
  return r;
}

TEST(WorkerEvents, ACaseCrossesWholeEveryFieldAndDataVerbatim) {
  const CaseResult r = full_case();
  const std::string line = case_event(r);
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line";
  const auto event = read_event(line);
  ASSERT_TRUE(event.has_value()) << line;
  EXPECT_EQ(event->name, "case");
  const auto back = case_from(*event);
  ASSERT_TRUE(back.has_value()) << line;
  EXPECT_EQ(back->id, r.id);
  EXPECT_EQ(back->row_id, r.row_id);
  EXPECT_EQ(back->suite, r.suite);
  EXPECT_EQ(back->source, r.source);
  EXPECT_EQ(back->intent, r.intent);
  EXPECT_EQ(back->file, r.file);
  EXPECT_EQ(back->line, 42);
  EXPECT_EQ(back->status, Status::XPass);
  EXPECT_EQ(back->device, r.device);
  EXPECT_EQ(back->execution, Execution::Simulated);
  EXPECT_EQ(back->message, r.message);
  EXPECT_DOUBLE_EQ(back->duration_s, r.duration_s);
  ASSERT_EQ(back->metrics.size(), 4u);
  EXPECT_EQ(back->metrics[0], r.metrics[0]);
  EXPECT_EQ(back->metrics[1].first, "max_ulp");
  EXPECT_TRUE(std::isnan(back->metrics[1].second)) << "a NaN metric stays NaN";
  EXPECT_EQ(back->metrics[2], r.metrics[2]);
  EXPECT_EQ(back->metrics[3], r.metrics[3]) << "the smallest subnormal, exactly";
  EXPECT_EQ(back->details, r.details);
  EXPECT_EQ(back->data_json, r.data_json) << "data reaches the bundle as written";
}

TEST(WorkerEvents, StatusAndExecutionTravelByName) {
  const auto event = read_event(case_event(full_case()));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->body.string_or("status"), "xpass");
  EXPECT_EQ(event->body.string_or("execution"), "simulated");
}

// A case event the engine cannot read is that case's error (lit's UNRESOLVED), never dropped.
static void expect_unresolved(const std::optional<CaseResult>& r, const std::string& what, const std::string& id = "row/case") {
  ASSERT_TRUE(r.has_value()) << what;
  EXPECT_EQ(r->status, Status::Error) << what;
  EXPECT_EQ(r->execution, Execution::NotRun) << what;
  EXPECT_EQ(r->id, id) << what;
  EXPECT_NE(r->message.find("unresolved: the worker's case event has " + what), std::string::npos) << r->message;
}

TEST(WorkerEvents, AnOrdinalOrAnUnknownNameIsAnUnresolvedCase) {
  CaseResult r;
  r.id = "row/case";
  const std::string line = case_event(r);
  auto decode = [](const std::string& text) {
    const auto e = read_event(text);
    return e ? case_from(*e) : std::nullopt;
  };
  const auto good = decode(line);
  ASSERT_TRUE(good.has_value());
  EXPECT_EQ(good->status, Status::Pass);
  expect_unresolved(decode(with_member(line, "status", "pass", "3")), "unknown status ''");  // the old ordinal of xpass
  expect_unresolved(decode(with_member(line, "status", "pass", "\"passed\"")), "unknown status 'passed'");
  expect_unresolved(decode(with_member(line, "execution", "real", "1")), "unknown execution ''");
  expect_unresolved(decode(with_member(line, "execution", "real", "\"\"")), "unknown execution ''");
  expect_unresolved(decode(with_member(line, "id", "row/case", "null")), "no string id", "");
}

TEST(WorkerEvents, DataThatIsNoObjectIsAnUnresolvedCase) {
  CaseResult r;
  r.id = "row/case";
  r.data_json = "{\"a\":1}";
  const std::string line = case_event(r);
  for (const char* data : {"[1]", "1", "\"{}\"", "null"}) {
    std::string bad = line;
    bad.replace(bad.find("{\"a\":1}"), 7, data);
    const auto e = read_event(bad);
    ASSERT_TRUE(e.has_value()) << bad;
    const auto c = case_from(*e);
    expect_unresolved(c, "data that is no object");
    EXPECT_TRUE(c->data_json.empty()) << "data " << data << " would break the bundle's structure";
  }
}

TEST(WorkerEvents, AnEventOfAnUnknownNameIsAnUnresolvedCaseNamingIt) {
  const auto event = read_event("{\"event\":\"surprise\",\"index\":1}");
  ASSERT_TRUE(event.has_value());
  EXPECT_FALSE(case_from(*event).has_value()) << "no case event";
  const CaseResult r = unknown_event_case(*event, "row, case, oplog and done");
  EXPECT_EQ(r.status, Status::Error);
  EXPECT_EQ(r.execution, Execution::NotRun);
  EXPECT_TRUE(r.id.empty()) << "the caller names it";
  EXPECT_EQ(r.message, "unresolved: the worker sent an unknown event 'surprise'; expected row, case, oplog and done "
                       "(docs/python-worker.md)");
  ASSERT_EQ(r.details.size(), 1u);
  EXPECT_EQ(r.details[0], std::make_pair(std::string("malformed_event"), std::string("unknown event 'surprise'")));
}

TEST(WorkerEvents, ALineThatIsNoEventIsNone) {
  for (const char* line : {"", "DONE", "CASE\tr/c\t\t\t", "[\"event\"]", "{\"event\": 1}", "{\"name\":\"done\"}",
                                  "{\"event\":\"done\"", "{\"event\":\"done\"} trailing"})
    EXPECT_FALSE(read_event(line).has_value()) << line;
  const auto done = read_event(event_line("done"));
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->name, "done");
  const auto row = read_event(event_line("row", "index", 7));
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->index_or("index", -1), 7);
  EXPECT_EQ(row->index_or("missing", -1), -1);
  EXPECT_FALSE(case_from(*row).has_value()) << "a row event is no case";
}

TEST(WorkerEvents, AnOpLogEntryCrossesWhole) {
  manager::OpLogEntry entry;
  entry.ts_ms = 12.5;
  entry.duration_us = 3.25;
  entry.category = "attempt";
  entry.op = "matmul";
  entry.device = "cuda:0";
  entry.outcome = "recovered";
  entry.fields = {{"reason", "out of memory\ttried 2 GiB"}, {"to", "cpu"}};
  const auto event = read_event(oplog_event(entry));
  ASSERT_TRUE(event.has_value());
  EXPECT_FALSE(case_from(*event).has_value());
  const auto back = oplog_from(*event);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->ts_ms, 12.5);
  EXPECT_EQ(back->duration_us, 3.25);
  EXPECT_EQ(back->category, "attempt");
  EXPECT_EQ(back->op, "matmul");
  EXPECT_EQ(back->device, "cuda:0");
  EXPECT_EQ(back->outcome, "recovered");
  EXPECT_EQ(back->fields, entry.fields);
}

// What Python's json.dumps writes reads as Python reads it.
TEST(JsonValue, ReadsPythonsJsonDialect) {
  const std::string text =
      R"({"s":"\u00e9\ud83d\ude00\t\"\\\/","lone":"\ud800x","n":[-0.5e-3,1E2,NaN,Infinity,-Infinity],"t":true,"f":false,"z":null,"o":{}})";
  const auto v = json::parse(text);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->string_or("s"), "\xc3\xa9\xf0\x9f\x98\x80\t\"\\/") << "a surrogate pair is one code point";
  EXPECT_EQ(v->string_or("lone"), "\xef\xbf\xbdx") << "a lone surrogate is U+FFFD";
  const json::Value* n = v->find("n");
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->items.size(), 5u);
  EXPECT_EQ(n->items[0].number, -0.5e-3);
  EXPECT_EQ(n->items[1].number, 100.0);
  EXPECT_TRUE(std::isnan(n->items[2].number));
  EXPECT_EQ(n->items[3].number, std::numeric_limits<double>::infinity());
  EXPECT_EQ(n->items[4].number, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(v->find("t")->boolean);
  EXPECT_TRUE(v->find("f")->is(json::Value::Type::Bool));
  EXPECT_TRUE(v->find("z")->is(json::Value::Type::Null));
  EXPECT_EQ(text.substr(v->find("o")->begin, v->find("o")->end - v->find("o")->begin), "{}");
}

TEST(JsonValue, MalformedTextSaysWhereAndWhatWasExpected) {
  const struct {
    const char* text;
    const char* error;
  } cases[] = {
      {"{\"a\" 1}", "offset 5: expected ':' after a member name"},
      {"[1,]", "offset 3: expected a value (object, array, string, number, true, false or null)"},
      {"\"ab", "offset 3: expected the closing '\"' of a string"},
      {"\"a\\x\"", "offset 3: expected one of"},
      {"{} {}", "offset 3: expected the end of the text after its one value"},
      {"1.", "offset 2: expected digits after a decimal point"},
      {"\"a\nb\"", "offset 2: expected no raw control character inside a string"},
  };
  for (const auto& c : cases) {
    std::string error;
    EXPECT_FALSE(json::parse(c.text, &error).has_value()) << c.text;
    EXPECT_EQ(error.rfind(c.error, 0), 0u) << c.text << " -> " << error;
  }
  std::string error;
  EXPECT_FALSE(json::parse(std::string(100000, '['), &error).has_value()) << "deep nesting is refused, not a crash";
  EXPECT_NE(error.find("at most 256 nested"), std::string::npos) << error;
}

// The one way the engine waits on a child: events in order, whatever else the child printed skipped, a last
// line without its newline kept, then End; a silent child is a Timeout, not a hang.
TEST(EventStream, ReadsTheEventsOfAPipeSkippingWhatIsNoEvent) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = event_line("row", "index", 0) + "\nprinted by an op\n{\"not\": \"an event\"}\n" +
                           event_line("done");  // no newline at the end
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  EventStream events(fds[0]);
  WorkerEvent e;
  ASSERT_EQ(events.next(&e, 5), EventStream::Read::Event);
  EXPECT_EQ(e.name, "row");
  EXPECT_EQ(e.index_or("index", -1), 0);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(events.next(&e, 0.2), EventStream::Read::Timeout) << "the last line is not complete while the pipe is open";
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  ::close(fds[1]);
  ASSERT_EQ(events.next(&e, 5), EventStream::Read::Event) << "at the end, a last line without its newline";
  EXPECT_EQ(e.name, "done");
  EXPECT_EQ(events.next(&e, 5), EventStream::Read::End);
  EXPECT_FALSE(events.is_open());
}

// The library check reads every line of its child (what the libraries print too): next_line answers each; once
// the stream is closed (the child reaped while something it started holds the pipe), what was read is still
// answered, a last line without its newline too, then End.
TEST(EventStream, NextLineAnswersEveryLineAndCloseKeepsWhatWasRead) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = event_line("loading") + "\nprinted by a library\nhalf a line";
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  EventStream lines(fds[0]);
  std::string line;
  ASSERT_EQ(lines.next_line(&line, 5, /*stoppable=*/false), EventStream::Read::Event);
  EXPECT_EQ(line, event_line("loading"));
  ASSERT_EQ(lines.next_line(&line, 5, false), EventStream::Read::Event);
  EXPECT_EQ(line, "printed by a library");
  EXPECT_EQ(lines.next_line(&line, 0, false), EventStream::Read::Timeout) << "the pipe is still open";
  lines.close();
  ASSERT_EQ(lines.next_line(&line, 0, false), EventStream::Read::Event);
  EXPECT_EQ(line, "half a line");
  EXPECT_EQ(lines.next_line(&line, 0, false), EventStream::Read::End);
  ::close(fds[1]);
}

}  // namespace
}  // namespace crossdev::conformance
