#!/bin/bash
if [ "$1" = "-m" ] && [ "$2" = "crossdev.worker" ]; then shift 2; exec /work/main/build/venv/bin/python /tmp/prof/wrap.py "$@"; fi
exec /work/main/build/venv/bin/python "$@"
