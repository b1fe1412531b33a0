"""The frozen app's entry point: the same command line as the ``crewagent`` console script."""

from crewagent.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
