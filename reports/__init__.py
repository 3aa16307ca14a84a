"""crossdev reports: load and validate result bundles, merge runners, render HTML/JUnit/Markdown.

Stdlib only, so a CI merge job needs nothing but Python 3.9+. Entry points:
  python3 reports/render.py BUNDLE... --out DIR   (or python3 -m reports)
  python3 reports/validate.py BUNDLE...
"""
