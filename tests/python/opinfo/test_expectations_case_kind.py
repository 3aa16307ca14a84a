"""`crossdev expectations accept` writes an entry into the file the engine reads for the case's kind: a
CPU-capability case (`cpu@avx2`) belongs to cpu.yaml, as the engine's opinfo_kind_of_case strips the
capability (engine/suites/opinfo_expectations.cpp); a cpu@avx2.yaml would never be read."""
from crossdev.expectations import case_kind


def test_the_capability_is_not_part_of_the_kind():
    assert case_kind({"id": "opinfo.cpu_capabilities/abs/cpu@avx2/float32/forward",
                      "row_id": "opinfo.cpu_capabilities"}) == "cpu"


def test_a_plain_kind_is_its_own():
    assert case_kind({"id": "opinfo.sweep/nn.functional.pixel_shuffle/xla/float32/forward/out",
                      "row_id": "opinfo.sweep"}) == "xla"
