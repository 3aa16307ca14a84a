#include "runner/python_rows.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "device/device_kind.h"
#include "runner/case_codec.h"
#include "runner/python_worker.h"

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
  std::string line;
  bool done = false;
  while (!done && worker.next_line(&line, 600) == PythonWorker::Read::Line) {
    if (line.rfind("ITEM ", 0) == 0) {
      const std::size_t tab1 = line.find('\t'), tab2 = line.find('\t', tab1 + 1);
      if (tab1 == std::string::npos || tab2 == std::string::npos) continue;
      PlannedCase c;
      c.id = unescape_field(line.substr(tab1 + 1, tab2 - tab1 - 1));
      c.device_kind = unescape_field(line.substr(tab2 + 1));
      cases.push_back(std::move(c));
    } else if (line.rfind("FATAL ", 0) == 0) {
      end_session_worker(true);  // its DONE is not read: the next request gets a fresh worker
      throw YamlError(row.where(fatal_key), "row '" + row.id() + "': " + unescape_field(line.substr(6)));
    } else if (line == "DONE") {
      done = true;
    }
  }
  const std::string ended = done ? "" : end_session_worker(true);
  if (!done) throw std::runtime_error("planning row '" + row.id() + "': " + (ended.empty() ? "the python worker stopped" : ended));
  return cases;
}

void check_python_rows(const std::string& request, const std::vector<const Row*>& rows, const char* fatal_key) {
  PythonWorker worker(request);
  std::string line;
  bool done = false;
  std::vector<std::pair<SourceLocation, std::string>> bad;  // (where, message), in the worker's order
  while (worker.next_line(&line, 600) == PythonWorker::Read::Line) {
    if (line.rfind("BAD ", 0) == 0) {
      const std::size_t tab1 = line.find('\t'), tab2 = line.find('\t', tab1 + 1);
      const std::size_t index = std::strtoul(line.c_str() + 4, nullptr, 10);
      if (tab1 == std::string::npos || tab2 == std::string::npos || index >= rows.size()) continue;
      const Row& row = *rows[index];
      bad.emplace_back(row.where(unescape_field(line.substr(tab1 + 1, tab2 - tab1 - 1))),
                       "row '" + row.id() + "': " + unescape_field(line.substr(tab2 + 1)));
    }
    if (line.rfind("FATAL ", 0) == 0) {
      worker.finish(true);
      throw YamlError(rows.front()->where(fatal_key), unescape_field(line.substr(6)));
    }
    if (line == "DONE") done = true;
  }
  const std::string ended = worker.finish(!done);
  if (!bad.empty()) {  // every bad value of every row, one "file:line: ..." line each
    std::string rest;
    for (std::size_t i = 1; i < bad.size(); ++i) rest += "\n" + bad[i].first.str() + ": " + bad[i].second;
    throw YamlError(bad.front().first, bad.front().second + rest);
  }
  if (!done) throw std::runtime_error("checking the rows: " + (ended.empty() ? "the python worker stopped" : ended));
}

std::vector<CaseResult> run_python_row(const Row& row, const Suite& suite, const std::function<std::string(long)>& request_for,
                                       double case_timeout_s) {
  std::vector<CaseResult> results;
  long start = 0, planned = -1;
  for (;;) {
    PythonWorker& worker = send_to_session(request_for(start));
    long current = -1;
    std::string current_id, fatal, line, failure;
    bool done = false;
    for (bool reading = true; reading && !done;) {
      switch (worker.next_line(&line, case_timeout_s)) {
        case PythonWorker::Read::Line:
          if (line.rfind("PLAN ", 0) == 0) {
            planned = std::strtol(line.c_str() + 5, nullptr, 10);
          } else if (line.rfind("START ", 0) == 0) {
            current = std::strtol(line.c_str() + 6, nullptr, 10);
            const std::size_t tab = line.find('\t');
            current_id = tab == std::string::npos ? "" : unescape_field(line.substr(tab + 1));
          } else if (auto r = decode_case(line)) {
            CaseResult c = result_for(row, suite);
            c.id = r->id;
            c.status = r->status;
            c.device = r->device;
            c.execution = r->execution;
            c.message = r->message;
            c.metrics = r->metrics;
            c.details = r->details;
            c.data_json = r->data_json;
            c.duration_s = r->duration_s;
            results.push_back(std::move(c));
            current = -1;
          } else if (line.rfind("FATAL ", 0) == 0) {
            fatal = unescape_field(line.substr(6));
          } else if (line == "DONE") {
            done = true;
          }
          break;
        case PythonWorker::Read::End: reading = false; break;
        case PythonWorker::Read::Timeout: {
          char msg[96];
          std::snprintf(msg, sizeof msg, "timed out after %.0f s (case_timeout; python worker killed)", case_timeout_s);
          failure = msg;
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
    results.push_back(std::move(crash));
    start = current + 1;
    if (planned >= 0 && start >= planned) return results;
  }
}

}  // namespace crossdev::conformance
