"""`python -m crossdev ...` is the `crossdev` command (crossdev/cli.py)."""
import sys

from crossdev.cli import main

sys.exit(main())
