"""`python -m crossdev.report BUNDLE... --out DIR` is `crossdev report`."""
import sys

from crossdev.report.render import main

sys.exit(main())
