"""Allow ``python -m crewagent``."""

from crewagent.cli import main

raise SystemExit(main())
