"""crossdev.report: load and validate result bundles, merge runners, render HTML/JUnit/Markdown.

Stdlib only (no torch, no compiled core), so a CI merge job needs nothing but Python 3.9+ and the
crossdev package. Entry points:
  crossdev report BUNDLE... --out DIR        (crossdev.report.render; python -m crossdev.report)
  python -m crossdev.report.validate BUNDLE...
A BUNDLE is a crossdev.bundle, or a crossdev.bundle_set written by `crossdev merge`.
"""
