#include "runner/python_rows.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "device/device_kind.h"
#include "runner/worker_events.h"
#include "runner/python_worker.h"
#include "util/json_value.h"

namespace crossdev::conformance {
namespace {

// The process's one waiting worker: started by the first plan or run request, reused by every later
// one (a device's runtime starts once), replaced after it dies, times out or is stopped.
std::unique_ptr<PythonWorker>& session_slot() {
  static std::unique_ptr<PythonWorker> worker;
  return worker;
}

// The session's worker with `request` sent to it; a worker that died while waiting is replaced.
PythonWorker& send_to_session(const std::string& request) {
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<PythonWorker>& slot = session_slot();
    if (!slot || !slot->running()) slot = std::make_unique<PythonWorker>();
    if (slot->send(request) || attempt == 1) return *slot;  // a second failure shows as End on the first read
    end_session_worker(true);
  }
}

}  // namespace

std::string end_session_worker(bool kill) {
  std::unique_ptr<PythonWorker>& slot = session_slot();
  if (!slot) return "";
  const std::string ended = slot->finish(kill);
  slot.reset();
  return ended;
}

void write_worker_kinds(json::Writer& w, const Row& row, const RunContext& ctx) {
  w.key("kinds").begin_object();
  for (const auto& name : row.str_list("devices")) w.field(name, provenance_name(ctx.host.provenance(*kind_from_name(name))));
  w.end_object();
}

std::vector<PlannedCase> plan_python_row(const std::string& request, const Row& row, const char* fatal_key) {
  PythonWorker& worker = send_to_session(request);
  std::vector<PlannedCase> cases;
  WorkerEvent event;
  bool done = false;
  while (!done && worker.next_event(&event, 600) == PythonWorker::Read::Event) {
    if (event.name == "item") {
      PlannedCase c;
      c.id = event.body.string_or("id");
      c.device_kind = event.body.string_or("device_kind");
      cases.push_back(std::move(c));
    } else if (event.name == "fatal") {
      end_session_worker(true);  // its `done` is not read: the next request gets a fresh worker
      throw YamlError(row.where(fatal_key), "row '" + row.id() + "': " + event.body.string_or("message"));
    } else if (event.name == "done") {
      done = true;
    } else if (event.name != "plan") {  // the count of the items that follow
      end_session_worker(true);
      throw std::runtime_error("planning row '" + row.id() + "': " + unknown_event_case(event, "plan, item, fatal and done").message);
    }
  }
  const std::string ended = done ? "" : end_session_worker(true);
  if (!done) throw std::runtime_error("planning row '" + row.id() + "': " + (ended.empty() ? "the python worker stopped" : ended));
  return cases;
}

void check_python_rows(const std::string& request, const std::vector<const Row*>& rows, const char* fatal_key) {
  PythonWorker worker(request);
  WorkerEvent event;
  bool done = false;
  std::vector<std::pair<SourceLocation, std::string>> bad;  // (where, message), in the worker's order
  while (worker.next_event(&event, 600) == PythonWorker::Read::Event) {
    if (event.name == "bad") {
      const long index = event.index_or("row", -1);
      if (index < 0 || static_cast<std::size_t>(index) >= rows.size()) {
        worker.finish(true);
        throw std::runtime_error("checking the rows: unresolved: the worker's bad event names row " + event.text_of("row") +
                                 ", not one of the " + std::to_string(rows.size()) + " rows sent (docs/python-worker.md)");
      }
      const Row& row = *rows[static_cast<std::size_t>(index)];
      bad.emplace_back(row.where(event.body.string_or("key")), "row '" + row.id() + "': " + event.body.string_or("message"));
    } else if (event.name == "fatal") {
      worker.finish(true);
      throw YamlError(rows.front()->where(fatal_key), event.body.string_or("message"));
    } else if (event.name == "done") {
      done = true;
    } else {
      worker.finish(true);
      throw std::runtime_error("checking the rows: " + unknown_event_case(event, "bad, fatal and done").message);
    }
  }
  const std::string ended = worker.finish(!done);
  if (!bad.empty()) {  // every bad value of every row, one "file:line: ..." line each
    std::string rest;
    for (std::size_t i = 1; i < bad.size(); ++i) {
      rest += '\n';
      rest += bad[i].first.str();
      rest += ": ";
      rest += bad[i].second;
    }
    throw YamlError(bad.front().first, bad.front().second + rest);
  }
  if (!done) throw std::runtime_error("checking the rows: " + (ended.empty() ? "the python worker stopped" : ended));
}

namespace {

// The crashed case `index` once more, alone, its worker writing each sample's record to a file before the
// call: the last record is the sample it died on. Its details join `crash`; a rerun that does not crash
// says so instead (details.repro).
void record_crash_sample(const RunRequestFor& request_for, long index, double case_timeout_s, CaseResult& crash) {
  static std::atomic<int> serial{0};
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("crossdev_crash_record_" + std::to_string(::getpid()) + "_" +
                                      std::to_string(serial++) + ".json");
  PythonWorker& worker = send_to_session(request_for(index, file.string()));
  WorkerEvent event;
  std::string rerun;  // the rerun's own status, when it ended the case
  bool done = false, stopped = false;
  for (bool reading = true; reading && !done;) {
    switch (worker.next_event(&event, case_timeout_s)) {
      case PythonWorker::Read::Event:
        if (auto r = case_from(event)) rerun = status_name(r->status);
        done = event.name == "done";
        break;
      case PythonWorker::Read::Stopped: stopped = true; reading = false; break;
      case PythonWorker::Read::Timeout:
      case PythonWorker::Read::End: reading = false; break;
    }
  }
  if (!done) end_session_worker(true);
  std::error_code ec;
  std::string text;
  if (std::ifstream in(file); in) text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::filesystem::remove(file, ec);
  if (stopped) return;
  if (!rerun.empty()) {
    crash.details.emplace_back("repro", "no standalone script: run again alone, the case did not crash (it was " + rerun +
                                            "): the crash depends on what ran before it in the row");
    return;
  }
  const std::optional<json::Value> doc = json::parse(text);
  const json::Value* details = doc ? doc->find("details") : nullptr;
  if (!details || !details->is(json::Value::Type::Object)) {
    crash.details.emplace_back("repro", "no standalone script: run again alone, the case died before its first sample "
                                        "was recorded (while making op_db's samples on the device)");
    return;
  }
  for (const auto& [key, value] : details->members)
    if (value.is(json::Value::Type::String)) crash.details.emplace_back(key, value.string);
}

}  // namespace

std::vector<CaseResult> run_python_row(const Row& row, const Suite& suite, const RunRequestFor& request_for,
                                       double case_timeout_s, bool records_crashes) {
  std::vector<CaseResult> results;
  long start = 0, planned = -1;
  for (;;) {
    PythonWorker& worker = send_to_session(request_for(start, ""));
    long current = -1;
    std::string current_id, fatal, failure;
    WorkerEvent event;
    bool done = false, timed_out = false;
    for (bool reading = true; reading && !done;) {
      switch (worker.next_event(&event, case_timeout_s)) {
        case PythonWorker::Read::Event: {
          if (event.name == "plan") {
            planned = event.index_or("count", -1);
          } else if (event.name == "start") {
            current = event.index_or("index", -1);
            current_id = event.body.string_or("id");
          } else if (event.name == "fatal") {
            fatal = event.body.string_or("message");
          } else if (event.name == "done") {
            done = true;
          } else {  // a case, or an event a run does not know: an error case naming it, never dropped
            std::optional<CaseResult> r = case_from(event);
            const bool is_case = r.has_value();
            if (!is_case) r = unknown_event_case(event, "plan, start, case, fatal and done");
            CaseResult c = result_for(row, suite);  // the row's bookkeeping is the engine's
            // A malformed case without an id: the running case's; an unknown event: the row's.
            c.id = !r->id.empty() ? r->id : is_case ? current_id : row.id() + "/(unknown event)";
            c.status = r->status;
            c.device = r->device;
            c.execution = r->execution;
            c.message = r->message;
            c.metrics = r->metrics;
            c.details = r->details;
            c.data_json = r->data_json;
            c.duration_s = r->duration_s;
            results.push_back(std::move(c));
            if (is_case) current = -1;
          }
          break;
        }
        case PythonWorker::Read::End: reading = false; break;
        case PythonWorker::Read::Timeout: {
          char msg[96];
          std::snprintf(msg, sizeof msg, "timed out after %.0f s (case_timeout; python worker killed)", case_timeout_s);
          failure = msg;
          timed_out = true;
          end_session_worker(true);
          reading = false;
          break;
        }
        case PythonWorker::Read::Stopped: end_session_worker(true); return results;  // the runner reports the rest
      }
    }
    const std::string ended = done ? "" : end_session_worker(false);  // it died: how
    if (failure.empty()) failure = ended;
    if (!fatal.empty() || done) {
      if (!fatal.empty()) {
        CaseResult err = result_for(row, suite);
        err.status = Status::Error;
        err.execution = Execution::NotRun;
        err.message = "python worker: " + fatal;
        results.push_back(std::move(err));
      }
      return results;
    }
    if (current < 0) {  // died between cases or before its plan: nothing to blame a case for
      CaseResult err = result_for(row, suite);
      err.status = Status::Error;
      err.execution = Execution::NotRun;
      err.message = (failure.empty() ? "python worker stopped without finishing" : failure) +
                    (planned < 0 ? " before running any case" : " between cases");
      results.push_back(std::move(err));
      return results;
    }
    CaseResult crash = result_for(row, suite);
    crash.id = current_id.empty() ? row.id() + "/case" + std::to_string(current) : current_id;
    crash.status = Status::Crash;
    crash.execution = Execution::NotRun;
    crash.message = failure + " while running this case";
    // A worker that died is run once more to record the sample it died on; one that hung is not (its rerun
    // would hang as long again, and the script of a hang would hang).
    if (records_crashes && !timed_out && !current_id.empty()) record_crash_sample(request_for, current, case_timeout_s, crash);
    results.push_back(std::move(crash));
    start = current + 1;
    if (planned >= 0 && start >= planned) return results;
  }
}

}  // namespace crossdev::conformance
