#pragma once
// Real LibTorch errors this CPU-only host can produce, as a table. The errors matrix uses
// them to prove its verbatim texts are the ones the installed PyTorch raises: a row with
// `trigger:` runs the trigger, and its `text` must appear in the message LibTorch produced.
#include <string>
#include <vector>

namespace crossdev::manager {

struct ErrorTrigger {
  const char* name;
  const char* what;           // what it does, in one line
  void (*fire)();             // always throws
};

const std::vector<ErrorTrigger>& error_triggers();
const ErrorTrigger* find_error_trigger(const std::string& name);
std::string error_trigger_list();

}  // namespace crossdev::manager
