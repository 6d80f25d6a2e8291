"""GitHub Action entry point (container and host variants): see harness/action/main.py."""

import sys

from harness.action.main import main

if __name__ == "__main__":
    sys.exit(main())
