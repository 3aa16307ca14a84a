#include "runner/worker_events.h"

#include <cmath>

#include "util/json.h"

namespace crossdev::conformance {
namespace {

using json::Value;

template <class V, class F>
void write_pairs(json::Writer& w, std::string_view key, const std::vector<std::pair<std::string, V>>& items, F write) {
  w.key(key).begin_object();
  for (const auto& [k, v] : items) {
    w.key(k);
    write(v);
  }
  w.end_object();
}

std::string member_string(const Value& body, std::string_view key) { return body.string_or(key); }

}  // namespace

std::string WorkerEvent::text_of(std::string_view key) const {
  const Value* v = body.find(key);
  return v ? line.substr(v->begin, v->end - v->begin) : "";
}

long WorkerEvent::index_or(std::string_view key, long when_absent) const {
  const Value* v = body.find(key);
  if (!v || !v->is(Value::Type::Number) || !std::isfinite(v->number) || v->number != std::floor(v->number)) return when_absent;
  return static_cast<long>(v->number);
}

std::optional<WorkerEvent> read_event(const std::string& line) {
  auto body = json::parse(line);
  if (!body || !body->is(Value::Type::Object)) return std::nullopt;
  const Value* name = body->find("event");
  if (!name || !name->is(Value::Type::String)) return std::nullopt;
  WorkerEvent e;
  e.name = name->string;
  e.body = std::move(*body);
  e.line = line;
  return e;
}

std::string event_line(std::string_view name) {
  json::Writer w(0);
  w.begin_object().field("event", name).end_object();
  return w.str();
}

std::string event_line(std::string_view name, std::string_view key, long value) {
  json::Writer w(0);
  w.begin_object().field("event", name).field(key, static_cast<long long>(value)).end_object();
  return w.str();
}

std::string case_event(const CaseResult& r) {
  json::Writer w(0);
  w.begin_object().field("event", "case");
  w.field("id", r.id).field("row_id", r.row_id).field("suite", r.suite).field("source", r.source);
  w.field("intent", r.intent).field("file", r.file).field("line", r.line);
  w.field("status", status_name(r.status)).field("device", r.device).field("execution", execution_name(r.execution));
  w.field("message", r.message);
  w.key("duration_s").raw(json::number_token(r.duration_s, "%.9g"));
  write_pairs(w, "metrics", r.metrics, [&](double v) { w.raw(json::number_token(v)); });
  write_pairs(w, "details", r.details, [&](const std::string& v) { w.value(v); });
  if (!r.data_json.empty()) w.key("data").raw(r.data_json);
  w.end_object();
  return w.str();
}

std::optional<CaseResult> case_from(const WorkerEvent& e) {
  if (e.name != "case") return std::nullopt;
  const Value& b = e.body;
  const Value* id = b.find("id");
  const auto status = status_named(b.string_or("status"));  // by name (case_statuses.json): never an ordinal
  const auto execution = execution_named(b.string_or("execution"));
  const Value* data = b.find("data");
  // A case event the engine cannot read is that case's `error` (lit's UNRESOLVED), never dropped: the id as
  // the event gives it ("" when it gives none: the caller names the running case).
  std::string malformed;
  if (!id || !id->is(Value::Type::String))
    malformed = "no string id";
  else if (!status)
    malformed = "unknown status '" + b.string_or("status") + "'";
  else if (!execution)
    malformed = "unknown execution '" + b.string_or("execution") + "'";
  else if (data && !data->is(Value::Type::Object))  // written verbatim into the bundle: only an object keeps its structure
    malformed = "data that is no object";
  if (!malformed.empty()) {
    CaseResult r = unresolved_case("the worker's case event has " + malformed + " (docs/python-worker.md; " +
                                       "python/crossdev/case_statuses.json names the statuses and executions)",
                                   malformed);
    r.id = id && id->is(Value::Type::String) ? id->string : "";
    return r;
  }
  CaseResult r;
  r.id = id->string;
  r.row_id = member_string(b, "row_id");
  r.suite = member_string(b, "suite");
  r.source = member_string(b, "source");
  r.intent = member_string(b, "intent");
  r.file = member_string(b, "file");
  r.line = static_cast<int>(e.index_or("line", 0));
  r.status = *status;
  r.device = member_string(b, "device");
  r.execution = *execution;
  r.message = member_string(b, "message");
  r.duration_s = b.number_or("duration_s", 0.0);
  if (const Value* m = b.find("metrics"); m && m->is(Value::Type::Object))
    for (const auto& [k, v] : m->members)
      if (v.is(Value::Type::Number)) r.metrics.emplace_back(k, v.number);
  if (const Value* d = b.find("details"); d && d->is(Value::Type::Object))
    for (const auto& [k, v] : d->members)
      if (v.is(Value::Type::String)) r.details.emplace_back(k, v.string);
  if (data) r.data_json = e.text_of("data");
  return r;
}

CaseResult unresolved_case(const std::string& what, const std::string& malformed) {
  CaseResult r;
  r.status = Status::Error;
  r.execution = Execution::NotRun;
  r.message = "unresolved: " + what;
  r.details.emplace_back("malformed_event", malformed);
  return r;
}

CaseResult unknown_event_case(const WorkerEvent& e, std::string_view expected) {
  const std::string unknown = "unknown event '" + e.name + "'";
  return unresolved_case("the worker sent an " + unknown + "; expected " + std::string(expected) +
                             " (docs/python-worker.md)",
                         unknown);
}

std::string oplog_event(const manager::OpLogEntry& entry) {
  json::Writer w(0);
  w.begin_object().field("event", "oplog");
  w.key("ts_ms").raw(json::number_token(entry.ts_ms, "%.9g"));
  w.key("duration_us").raw(json::number_token(entry.duration_us, "%.9g"));
  w.field("category", entry.category).field("op", entry.op).field("device", entry.device).field("outcome", entry.outcome);
  write_pairs(w, "fields", entry.fields, [&](const std::string& v) { w.value(v); });
  w.end_object();
  return w.str();
}

std::optional<manager::OpLogEntry> oplog_from(const WorkerEvent& e) {
  if (e.name != "oplog") return std::nullopt;
  const Value& b = e.body;
  manager::OpLogEntry entry;
  entry.ts_ms = b.number_or("ts_ms", 0.0);
  entry.duration_us = b.number_or("duration_us", 0.0);
  entry.category = member_string(b, "category");
  entry.op = member_string(b, "op");
  entry.device = member_string(b, "device");
  entry.outcome = member_string(b, "outcome");
  if (const Value* f = b.find("fields"); f && f->is(Value::Type::Object))
    for (const auto& [k, v] : f->members)
      if (v.is(Value::Type::String)) entry.fields.emplace_back(k, v.string);
  return entry;
}

}  // namespace crossdev::conformance
