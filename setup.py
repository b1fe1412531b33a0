"""Package discovery that pyproject.toml cannot express: resources/ lives beside desktop/."""

from setuptools import find_packages, setup

setup(packages=find_packages("desktop") + ["crewagent.resources"])
