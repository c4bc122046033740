import sys

from syncscan.cli import main

sys.exit(main())
