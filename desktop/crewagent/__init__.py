"""CrewAgent Desktop: a desktop workbench for LLM agents."""

__version__ = "0.1.0"
