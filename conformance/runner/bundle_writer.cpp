#include "runner/bundle_writer.h"

#include <cmath>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <random>

#include <unistd.h>

#include "util/json.h"

namespace crossdev::conformance {
namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void write_summary(json::Writer& w, const std::vector<CaseResult>& cases) {
  RunSummary total;
  std::map<std::string, RunSummary> by_suite;
  for (const auto& c : cases) {
    total.add(c);
    by_suite[c.suite].add(c);
  }
  auto counts = [&](const RunSummary& s) {
    w.begin_object().field("total", s.total);
    for (const Status status : kAllStatuses) w.field(status_name(status), s.count(status));
    for (const Execution execution : kAllExecutions) w.field(execution_name(execution), s.count(execution));
    w.field("gates", s.gates());
    w.end_object();
  };
  w.key("summary");
  counts(total);
  w.key("summary_by_suite").begin_object();
  for (const auto& [suite, s] : by_suite) {
    w.key(suite);
    counts(s);
  }
  w.end_object();
}

}  // namespace

std::string new_run_id() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::random_device rd;
  char out[96];
  std::snprintf(out, sizeof out, "%s-%ld-%08x", stamp, static_cast<long>(::getpid()), static_cast<unsigned>(rd()));
  return out;
}

std::string bundle_json(const BundleInput& in) {
  json::Writer w;
  w.begin_object();
  w.field("schema", "crossdev.bundle").field("schema_version", kBundleSchemaVersion).field("created_utc", utc_now());
  if (!in.run_id.empty()) w.field("run_id", in.run_id);
  if (!in.interrupted.empty()) w.field("interrupted", in.interrupted);
  w.key("tool").begin_object().field("name", "crossdev").field("version", "0.1.0").end_object();

  const auto& t = in.target;
  w.key("execution_target").begin_object();
  w.field("device_kind", t.device_kind).field("device_model", t.device_model).field("driver", t.driver);
  w.field("libtorch_version", t.libtorch_version).field("cuda_version", t.cuda_version);
  if (!t.cuda_kernels.empty()) w.field("cuda_kernels", t.cuda_kernels);
  w.field("compiler", t.compiler).field("git_commit", t.git_commit).field("host", t.host);
  w.field("simulated", t.simulated).field("simulate_spec", t.simulate_spec);
  if (!t.sim_diverge.empty()) w.field("sim_diverge", t.sim_diverge);
  if (!t.shard.empty()) w.field("shard", t.shard);
  w.key("devices").begin_array();
  if (in.host) {
    for (DeviceKind kind : kAllDeviceKinds) {
      const auto& p = in.host->presence(kind);
      if (p.count == 0) continue;
      w.begin_object().field("kind", kind_name(kind)).field("count", p.count)
          .field("provenance", provenance_name(p.provenance));
      w.key("names").begin_array();
      for (const auto& d : p.devices) w.value(d.name);
      w.end_array().end_object();
    }
  }
  w.end_array();
  w.end_object();

  w.key("matrices").begin_array();
  for (const auto& m : in.matrices) w.value(m);
  w.end_array();
  const auto write_entries = [&w](const char* key, const std::vector<StaleExpectation>& entries) {
    if (entries.empty()) return;
    w.key(key).begin_array();
    for (const auto& s : entries) {
      w.begin_object().field("where", s.where).field("match", s.match).field("status", s.status);
      w.field("reason", s.reason).field("device_kind", s.device_kind).end_object();
    }
    w.end_array();
  };
  write_entries("stale_expectations", in.stale_expectations);
  write_entries("shard_unmatched_expectations", in.shard_unmatched_expectations);

  const std::vector<CaseResult> none;
  const auto& cases = in.cases ? *in.cases : none;
  write_summary(w, cases);

  w.key("cases").begin_array();
  for (const auto& c : cases) {
    w.begin_object();
    w.field("id", c.id).field("row_id", c.row_id).field("suite", c.suite).field("source", c.source);
    w.field("intent", c.intent).field("file", c.file).field("line", c.line);
    w.field("status", status_name(c.status)).field("device", c.device);
    w.field("execution", execution_name(c.execution)).field("simulated", c.execution == Execution::Simulated);
    w.field("message", c.message).field("duration_s", c.duration_s);
    w.key("metrics").begin_object();
    for (const auto& [k, v] : c.metrics) w.field(k, v);
    w.end_object();
    w.key("details").begin_object();
    for (const auto& [k, v] : c.details) w.field(k, v);
    w.end_object();
    if (!c.data_json.empty()) w.key("data").raw(c.data_json);
    w.end_object();
  }
  w.end_array();

  w.key("benchmarks");
  if (in.benchmarks_json.empty()) w.null(); else w.raw(in.benchmarks_json);
  w.key("device_log");
  if (in.device_log_json.empty()) w.null(); else w.raw(in.device_log_json);
  w.end_object();
  return w.str() + "\n";
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          out += '?';
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string junit_xml(const std::vector<CaseResult>& cases, const ExecutionTarget& target, const std::string& run_id) {
  std::map<std::string, std::vector<const CaseResult*>> by_suite;
  for (const auto& c : cases) by_suite[c.suite].push_back(&c);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"crossdev\">\n";
  for (const auto& [suite, list] : by_suite) {
    int failures = 0, errors = 0, skipped = 0;
    double time = 0;
    for (const auto* c : list) {
      failures += c->status == Status::Fail || c->status == Status::XPass;
      errors += c->status == Status::Error || c->status == Status::Crash;
      skipped += c->status == Status::Skip || c->status == Status::XFail;
      time += c->duration_s;
    }
    // junit-10.xsd's SUREFIRE_TIME: a plain decimal with at most 3 places; nan, inf and -0 are
    // written as 0.000 so every consumer's schema accepts the file.
    const auto junit_time = [](double t) { return std::isfinite(t) && t > 0 ? t : 0.0; };
    char header[512];
    std::snprintf(header, sizeof header,
                  "  <testsuite name=\"crossdev.%s\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
                  xml_escape(suite).c_str(), list.size(), failures, errors, skipped, junit_time(time));
    out += header;
    out += "    <properties>\n      <property name=\"device_kind\" value=\"" + xml_escape(target.device_kind) +
           "\"/>\n      <property name=\"simulated\" value=\"" + (target.simulated ? "true" : "false") +
           "\"/>\n" + (run_id.empty() ? std::string() : "      <property name=\"run_id\" value=\"" + xml_escape(run_id) + "\"/>\n") +
           "    </properties>\n";
    for (const auto* c : list) {
      // The execution label is part of the classname so no CI view can show a simulated pass as real.
      char tc[128];
      std::snprintf(tc, sizeof tc, "\" time=\"%.3f\"", junit_time(c->duration_s));
      out += "    <testcase classname=\"crossdev." + xml_escape(suite) + "." + execution_name(c->execution) +
             "\" name=\"" + xml_escape(c->id) + tc;
      const std::string msg = xml_escape(c->message);
      const std::string where = xml_escape(c->file + ":" + std::to_string(c->line));
      const std::string element = status_junit_element(c->status);  // case_statuses.json's `junit`
      if (element.empty()) {
        out += "/>\n";
      } else if (element == "skipped") {
        out += ">\n      <skipped message=\"" + std::string(status_name(c->status)) + ": " + msg + "\"/>\n    </testcase>\n";
      } else {
        out += ">\n      <" + element + " message=\"" + std::string(status_name(c->status)) + ": " + msg + "\">" + where +
               "\n" + msg + "</" + element + ">\n    </testcase>\n";
      }
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace crossdev::conformance
