import sys

from syncscan.cli import main

if __name__ == "__main__":  # importing syncscan.__main__ (e.g. by a doc tool) must not run the CLI
    sys.exit(main())
