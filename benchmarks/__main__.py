"""`python -m benchmarks`: the plain runner (see benchmarks/run.py)."""
import sys

if __name__ == "__main__":  # asv imports every module of the suite while discovering
    from .run import main

    sys.exit(main())
