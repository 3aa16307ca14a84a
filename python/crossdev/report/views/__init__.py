"""HTML views of a merged report: one module per section, assembled by page.py."""
