// OpSpec::dispatch: fused when every fused predicate passes, otherwise the fallback. Eligibility
// is decided by predicates up front, never by catching a failed fused launch: an exception from
// an eligible kernel is a bug and propagates. Silent by default; at debug level the "dispatch"
// category says what ran and why the others did not.
#include "log/logger.h"
#include "ops/op_registry.h"

namespace crossdev::ops {
namespace {

std::string join_reasons(const std::vector<PredicateResult>& failed) {
  std::string text;
  for (const PredicateResult& r : failed) {
    text += text.empty() ? "" : "; ";
    text += r.explanation + " (predicate " + r.predicate + ")";
  }
  return text;
}

}  // namespace

at::Tensor OpSpec::dispatch(const OpCall& call, DispatchRecord* record) const {
  DispatchRecord local;
  DispatchRecord& rec = record != nullptr ? *record : local;
  rec = DispatchRecord{};

  for (Impl impl : {Impl::Fused, Impl::Fallback}) {
    std::vector<PredicateResult> failed = failed_predicates(impl, call);
    if (!failed.empty()) {
      rec.rejected.push_back({impl, join_reasons(failed)});
      continue;
    }
    rec.ran = impl;
    Logger& log = Logger::global();
    if (log.enabled(LogLevel::Debug)) {
      std::string message = std::string(name()) + ": ran " + impl_name(impl);
      for (const Rejection& r : rec.rejected) message += "; " + std::string(impl_name(r.impl)) + " rejected: " + r.reason;
      log.log(LogLevel::Debug, "dispatch", message, {{"op", name()}, {"impl", impl_name(impl)}});
    }
    return run(impl, call);
  }
  // Neither is eligible: the call itself is malformed; report the fallback's reasons.
  throw NotEligible(name(), Impl::Fallback, failed_predicates(Impl::Fallback, call));
}

}  // namespace crossdev::ops
