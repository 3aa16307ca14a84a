// crossdev.parity: the comparator (torch.testing.assert_close semantics plus max abs/rel/ULP
// metrics), its default tolerance table, the ULP error and its floor, and the ULP distance, so
// pytest can check verdict parity with assert_close and the metrics against numpy directly.
#include <torch/extension.h>

#include "parity/comparator.h"
#include "parity/tolerance.h"
#include "parity/ulp.h"

namespace py = pybind11;

namespace crossdev::python {
namespace {

py::dict comparison_dict(const parity::Comparison& c) {
  py::dict d;
  d["passed"] = c.pass;
  d["reason"] = c.reason;
  d["rtol"] = c.tolerance.rtol;
  d["atol"] = c.tolerance.atol;
  d["total"] = c.total;
  d["mismatches"] = c.mismatches;
  d["first_mismatch_index"] = c.mismatches ? py::object(py::tuple(py::cast(c.first_mismatch_index))) : py::object(py::none());
  d["max_abs"] = c.max_abs;
  d["max_rel"] = c.max_rel;
  d["max_ulp"] = c.max_ulp;
  d["ulp_floor"] = c.ulp_floor;
  d["summary"] = c.summary();
  return d;
}

}  // namespace

void bind_parity(py::module_& root) {
  py::module_ m = root.def_submodule("parity", "Numerical comparison with torch.testing.assert_close semantics");

  m.def(
      "compare",
      [](const at::Tensor& actual, const at::Tensor& expected, std::optional<double> rtol, std::optional<double> atol,
         bool equal_nan, bool check_dtype) {
        // assert_close's rule: both tolerances or neither, so a lone one cannot silently pair
        // with a default.
        if (rtol.has_value() != atol.has_value())
          throw py::value_error("Both 'rtol' and 'atol' must be either specified or omitted");
        parity::CompareOptions options;
        if (rtol) options.tolerance = parity::Tolerance{*rtol, *atol};
        options.equal_nan = equal_nan;
        options.check_dtype = check_dtype;
        parity::Comparison c;
        {
          py::gil_scoped_release release;
          c = parity::compare(actual, expected, options);
        }
        return comparison_dict(c);
      },
      py::arg("actual"), py::arg("expected"), py::kw_only(), py::arg("rtol") = py::none(), py::arg("atol") = py::none(),
      py::arg("equal_nan") = false, py::arg("check_dtype") = true,
      "Compare like torch.testing.assert_close (check_device=False). Returns a dict: passed, reason, rtol, atol, "
      "total, mismatches, first_mismatch_index, max_abs, max_rel, max_ulp, ulp_floor, summary.");

  m.def(
      "default_tolerance",
      [](at::ScalarType dtype) {
        const parity::Tolerance t = parity::default_tolerance(dtype);
        return py::make_tuple(t.rtol, t.atol);
      },
      py::arg("dtype"), "(rtol, atol) that assert_close uses by default for dtype.");

  m.def("ulp_distance", &parity::ulp_distance, py::arg("a"), py::arg("b"), py::arg("dtype"),
        "Representable steps between a and b (rounded to dtype), via the ordered-integer representation.");
  m.def("ulp_of", &parity::ulp_of, py::arg("e"), py::arg("dtype"),
        "ulp(e) in dtype: 2^(exponent - mantissa bits) for normal e; the smallest normal's ulp for 0 and subnormals.");
  m.def("ulp_error", &parity::ulp_error, py::arg("actual"), py::arg("expected"), py::arg("dtype"), py::kw_only(),
        py::arg("floor"),
        "|actual - expected| / ulp(max(|expected|, floor)), both rounded to dtype: the max_ulp metric of compare() "
        "with floor = ulp_floor(dtype, rtol, atol); floor=0 is the unfloored ulp error of expected.");
  m.def(
      "ulp_floor",
      [](at::ScalarType dtype, double rtol, double atol) {
        const parity::FloatFormat format = parity::float_format(dtype);
        if (format.mantissa_digits == 0)
          throw py::value_error(std::string("ulp_floor needs a floating dtype, got ") + c10::toString(dtype));
        return parity::ulp_floor(rtol, atol, format);
      },
      py::arg("dtype"), py::arg("rtol"), py::arg("atol"),
      "atol / max(rtol, eps(dtype)): the magnitude below which compare() counts errors in ulps of the floor.");
}

}  // namespace crossdev::python
