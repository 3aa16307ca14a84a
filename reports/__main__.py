"""`python3 -m reports BUNDLE... --out DIR` is `python3 reports/render.py`."""
import sys

from reports.render import main

sys.exit(main())
