"""The frozen app's entry point: the same command line as the ``crewagent`` console script.

One exception, checked before anything else loads: the app's executable is also the command
reaper of command tools (desktop/crewagent/core/tools/reaper_script.py), since a frozen build
has no Python interpreter to run it with.
"""

import sys

if __name__ == "__main__":
    if sys.argv[1:] == ["--crewagent-command-reaper"]:
        from crewagent.core.tools.reaper_script import run

        run()
        raise SystemExit(0)
    from crewagent.cli import main

    raise SystemExit(main())
