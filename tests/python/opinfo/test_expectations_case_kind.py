"""`crossdev expectations accept` writes an entry into the file the engine reads for the case's kind: a
CPU-capability case (`cpu@avx2`) belongs to cpu.yaml, as the engine's opinfo_kind_of_case strips the
capability (conformance/suites/suite_expectations.cpp); a cpu@avx2.yaml would never be read."""
from crossdev.expectations import case_kind


def test_the_capability_is_not_part_of_the_kind():
    assert case_kind({"id": "opinfo.cpu_capabilities/abs/cpu@avx2/float32/forward", "suite": "opinfo",
                      "row_id": "opinfo.cpu_capabilities", "details": {"device_kind": "cpu@avx2"}}) == "cpu"


def test_a_plain_kind_is_its_own():
    assert case_kind({"id": "opinfo.sweep/nn.functional.pixel_shuffle/xla/float32/forward/out", "suite": "opinfo",
                      "row_id": "opinfo.sweep"}) == "xla"  # no recorded kind: the segment the suite's record names
    assert case_kind({"id": "m.gpt2/xla/float32", "suite": "models", "row_id": "m.gpt2",
                      "details": {"device_kind": "xla"}}) == "xla"


def test_the_glob_prefixes_are_the_ones_the_suites_record_names():
    from crossdev.expectations import group_keys
    assert group_keys({"id": "r/add/mps/float16/forward", "suite": "opinfo", "row_id": "r"}) == \
        ["r/add/mps", "r/add/mps/float16"]
    assert group_keys({"id": "m.gpt2/xla/float32", "suite": "models", "row_id": "m.gpt2"}) == ["m.gpt2/xla"]
