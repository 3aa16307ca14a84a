#include "manager/error_info.h"

#include "util/named_table.h"

#include <stdexcept>

#include <c10/util/Exception.h>

namespace crossdev::manager {
namespace {

struct ErrorType {
  const char* name;
  void (*raise)(const std::string& message);
};

template <class E>
[[noreturn]] void raise_c10(const std::string& message) {
  throw E(message, /*backtrace=*/nullptr, /*caller=*/nullptr);
}

// Python's name for each c10 exception class (torch/csrc/Exceptions.h translates them so).
const ErrorType kErrorTypes[] = {
    {"RuntimeError", raise_c10<c10::Error>},
    {"NotImplementedError", raise_c10<c10::NotImplementedError>},
    {"OutOfMemoryError", raise_c10<c10::OutOfMemoryError>},
    {"ValueError", raise_c10<c10::ValueError>},
    {"TypeError", raise_c10<c10::TypeError>},
    {"IndexError", raise_c10<c10::IndexError>},
};

}  // namespace

ErrorInfo describe_exception(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const c10::OutOfMemoryError& e) {
    return {"OutOfMemoryError", e.what_without_backtrace()};
  } catch (const c10::NotImplementedError& e) {
    return {"NotImplementedError", e.what_without_backtrace()};
  } catch (const c10::ValueError& e) {
    return {"ValueError", e.what_without_backtrace()};
  } catch (const c10::TypeError& e) {
    return {"TypeError", e.what_without_backtrace()};
  } catch (const c10::IndexError& e) {
    return {"IndexError", e.what_without_backtrace()};
  } catch (const c10::Error& e) {
    return {"RuntimeError", e.what_without_backtrace()};
  } catch (const std::invalid_argument& e) {
    return {"ValueError", e.what()};
  } catch (const std::exception& e) {
    return {"RuntimeError", e.what()};
  } catch (...) {
    return {"unknown", ""};
  }
}

[[noreturn]] void throw_error_of_type(const std::string& type, const std::string& message) {
  if (const auto* t = named::find(kErrorTypes, type)) t->raise(message);
  throw std::invalid_argument("unknown error type '" + type + "'; expected one of " + error_type_list());
}

bool is_known_error_type(const std::string& type) {
  return named::contains(kErrorTypes, type);
}

const std::string& error_type_list() {
  static const std::string list = named::names(kErrorTypes);
  return list;
}

}  // namespace crossdev::manager
