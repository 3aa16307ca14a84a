// suite: redirect — seed 002's redirect policy, one row per behaviour.
//
//   - {id: table.cpu.mps-host, source: "seed 002 table: \"cpu\" x Accelerator MPS",
//      intent: "...", host: mps, request: cpu, expect: "mps:0", action: redirected}
//
// `request`, `expect`, `action` (and optionally `via`) are scalars or equal-length lists; a
// list is a sequence of requests resolved against one evolving state, so cpu:-1 toggling is
// visible. `~` or "none" requests no device. Optional: policy (preset), override (initial CPU
// override state), allow_redirects (the TORCH_ALLOW_REDIRECTS value).
//
// `host: this` resolves against the run's own host instead of a named profile: real where the host is
// (torch_xla's xla on any CPU host, runner/python_runtimes.h). Such a row names the kind it is about in
// `when_host_has`; on a host without a real device of that kind it is `skip` (matrices/xla/redirect_xla.yaml).
#include <memory>
#include <optional>

#include "device/device_kind.h"
#include "log/logger.h"
#include "policy/redirect_policy.h"
#include "runner/suite.h"
#include "runner/suite_table.h"

namespace crossdev::conformance {
namespace {

struct Step {
  bool has_request = false;
  DeviceSpec request;
  DeviceSpec expect;
  Action action = Action::Honored;
  Via via = Via::Create;
};

constexpr const char* kThisHost = "this";

struct Case {
  HostProfile host;             // a named profile; unused for `host: this`
  bool this_host = false;       // `host: this`: the run's own host
  std::optional<DeviceKind> when_host_has;
  const Preset* preset = nullptr;
  PolicyState initial;
  std::vector<Step> steps;
};

bool is_none(const std::string& s) { return s.empty() || s == "none"; }

Case parse_case(const Row& row) {
  Case c;
  const std::string host_name = row.str("host");
  c.this_host = host_name == kThisHost;
  try {
    if (!c.this_host) c.host = HostProfile::named_or_spec(host_name);
  } catch (const std::exception& e) {
    row.fail("host", std::string("unknown host '") + host_name + "'; expected one of " + named_host_list() +
                         ", a simulate spec such as \"cuda:2,mps\", or \"" + kThisHost + "\" (the run's own host)");
  }
  if (row.has("when_host_has")) {
    if (!c.this_host) row.fail("when_host_has", std::string("only a row with host: ") + kThisHost + " depends on the host it runs on");
    c.when_host_has = kind_from_name(row.str("when_host_has"));
    if (!c.when_host_has)
      row.fail("when_host_has", "unknown device kind '" + row.str("when_host_has") + "'; expected one of " + valid_kind_list());
  }
  const std::string preset_name = row.str_or("policy", default_preset().name);
  c.preset = find_preset(preset_name);
  if (!c.preset) row.fail("policy", "unknown policy preset '" + preset_name + "'; expected one of " + preset_names());
  c.initial = PolicyState::for_preset(*c.preset, row.str_or("allow_redirects", ""));
  c.initial.cpu_override = row.boolean_or("override", false);

  const auto requests = row.str_list("request", /*allow_null=*/true);
  const auto expects = row.str_list("expect");
  const auto actions = row.str_list("action");
  const auto vias = row.has("via") ? row.str_list("via") : std::vector<std::string>{"create"};
  if (expects.size() != requests.size())
    row.fail("expect", "expected " + std::to_string(requests.size()) + " devices, one per request, got " + std::to_string(expects.size()));
  if (actions.size() != requests.size())
    row.fail("action", "expected " + std::to_string(requests.size()) + " actions, one per request, got " + std::to_string(actions.size()));
  if (vias.size() != 1 && vias.size() != requests.size())
    row.fail("via", "expected one value or one per request");

  for (std::size_t i = 0; i < requests.size(); ++i) {
    Step step;
    std::string error;
    if (!is_none(requests[i])) {
      step.has_request = true;
      if (try_parse_device(requests[i], step.request, &error) != ParseStatus::Ok) row.fail("request", error);
    }
    if (try_parse_device(expects[i], step.expect, &error) != ParseStatus::Ok) row.fail("expect", error);
    if (step.expect.cpu_override) row.fail("expect", "'cpu:-1' is a request, not a device; expect 'cpu'");
    const auto action = action_from_name(actions[i]);
    if (!action) row.fail("action", "unknown action '" + actions[i] + "'; expected one of " + action_list());
    step.action = *action;
    const std::string& via_text = vias.size() == 1 ? vias[0] : vias[i];
    const auto via = via_from_name(via_text);
    if (!via) row.fail("via", "unknown via '" + via_text + "'; expected create, to or implicit");
    step.via = *via;
    c.steps.push_back(step);
  }
  return c;
}

class RedirectSuite final : public Suite {
 public:
  const char* name() const override { return "redirect"; }
  const SuiteSchema& schema() const override {
    static const SuiteSchema s{{"host", "request", "expect", "action"},
                               {"policy", "override", "allow_redirects", "via", "when_host_has"}};
    return s;
  }
  void validate(const Row& row) const override { (void)parse_case(row); }

  std::vector<CaseResult> run(const Row& row, const RunContext& ctx) const override {
    const Case c = parse_case(row);
    CaseResult r = result_for(row, *this);
    const HostProfile& host = c.this_host ? ctx.host : c.host;
    r.device = c.this_host ? std::string("this host: ") + host.summary() : c.host.source();
    // A named profile is hypothetical by construction; the run's own host is what it is.
    r.execution = c.this_host && !host.any_simulated() ? Execution::Real : Execution::Simulated;
    if (c.when_host_has && host.provenance(*c.when_host_has) != Provenance::Real) {
      r.status = Status::Skip;
      r.execution = Execution::NotRun;
      r.message = std::string("this host has no real ") + kind_name(*c.when_host_has) + " (when_host_has)";
      return {r};
    }
    RedirectPolicy policy(*c.preset);
    PolicyState state = c.initial;
    std::string trace;
    // The policy's redirect log lines belong to this case: keep them in its details instead of
    // interleaving them with the run's console output.
    std::string log;
    Logger::global().set_text_sink([&log](std::string_view line) { log.append(line).append("\n"); });
    struct RestoreSink {
      ~RestoreSink() { Logger::global().set_text_sink(nullptr); }
    } restore;
    for (std::size_t i = 0; i < c.steps.size(); ++i) {
      const Step& step = c.steps[i];
      const Decision d = policy.resolve(step.has_request ? &step.request : nullptr, host, state, step.via);
      trace += (trace.empty() ? "" : "; ") + d.describe();
      const bool ok = d.resolved.same_device(step.expect) && d.action == step.action;
      if (!ok && r.status == Status::Pass) {
        r.status = Status::Fail;
        r.message = "step " + std::to_string(i + 1) + " (" + d.requested_str() + "): expected " + step.expect.str() +
                    " [" + action_name(step.action) + "], got " + d.resolved.str() + " [" + action_name(d.action) +
                    "]: " + reason_text(d.reason);
      }
    }
    r.details = {{"policy", c.preset->name}, {"host", host.summary()}, {"trace", trace}};
    if (!log.empty()) r.details.emplace_back("log", log);
    r.metrics = {{"steps", static_cast<double>(c.steps.size())}};
    return {r};
  }
};

}  // namespace

std::unique_ptr<Suite> make_redirect_suite() { return std::make_unique<RedirectSuite>(); }

}  // namespace crossdev::conformance
