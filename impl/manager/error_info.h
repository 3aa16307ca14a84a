#pragma once
// An exception reduced to what classification needs: the Python-visible exception type
// (c10::NotImplementedError -> "NotImplementedError", c10::OutOfMemoryError ->
// "OutOfMemoryError", other c10::Error -> "RuntimeError", ...) and the message without the
// C++ backtrace, i.e. the text a PyTorch user sees.
#include <exception>
#include <functional>
#include <string>

namespace crossdev::manager {

struct ErrorInfo {
  std::string type;
  std::string message;
};

ErrorInfo describe_exception(std::exception_ptr error);

// Hook for exceptions the C++ side cannot see into (the Python binding supplies one for
// pybind11::error_already_set). Returns false when it does not recognise the exception.
using ErrorDescriber = std::function<bool(std::exception_ptr, ErrorInfo&)>;

// Builds the exception PyTorch would raise for `type` with exactly `message`
// (fault injection and the docs' examples use it).
[[noreturn]] void throw_error_of_type(const std::string& type, const std::string& message);
bool is_known_error_type(const std::string& type);
const std::string& error_type_list();

}  // namespace crossdev::manager
