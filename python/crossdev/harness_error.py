"""A case the harness itself could not evaluate (an exception in crossdev's own code, outside the op or model
under test): the case's `error`, its message led by PREFIX. It is crossdev's bug, never a difference of the
device, so `crossdev expectations accept` never turns one into an expectation entry."""
PREFIX = "harness: "


def message(error: BaseException) -> str:
    return f"{PREFIX}{type(error).__name__}: {error}"


def is_harness_error(case: dict) -> bool:
    return case.get("status") == "error" and case.get("message", "").startswith(PREFIX)
