"""The wheel's layout, which pyproject.toml cannot say by itself (the rest of the metadata is in pyproject.toml).

The wheel claims two top-level names, both the project's own: `olparser` (the connector) and `ol2purview_tools`
(the repository's tools/ folder under a name no other distribution uses; tools/ modules import each other
relatively, so the same code runs as `tools` in the repository and as `ol2purview_tools` installed). The mapping
rules have one committed copy, config/OlToPurviewMappings.json; the build packages it as
olparser/naming/shipped/OlToPurviewMappings.json, which an installed connector reads unless OL_TO_PURVIEW_MAPPINGS_PATH
or OlToPurviewMappings names others (olparser/settings.py `default_mappings_path`). `ol2purview serve` needs the
function app itself: function_app.py and host.json travel as ol2purview_tools/app/ (tests/unit/test_wheel.py checks
the names and the packaged rules).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

TOOLS = "ol2purview_tools"
APP_FILES = ("function_app.py", "host.json")  # what `ol2purview serve` runs, from the repository's root
RULES = Path("config", "OlToPurviewMappings.json")  # the one rule file, packaged where olparser.settings reads it
PACKAGED_RULES = Path("olparser", "naming", "shipped", "OlToPurviewMappings.json")


class BuildWithApp(build_py):
    """build_py, plus the function app copied into ol2purview_tools/app/ and the rule file into olparser's package
    data (a built wheel only, not an editable install, which reads the repository's own files)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib, TOOLS, "app")
        target.mkdir(parents=True, exist_ok=True)
        for name in APP_FILES:
            shutil.copy2(name, target / name)
        rules = Path(self.build_lib, PACKAGED_RULES)
        rules.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(RULES, rules)


# Folders of data without __init__.py (olparser/lineage/typedefs, tools/catalog/static) are
# packages too, so that their files travel as package data (pyproject.toml: tool.setuptools.package-data).
CACHES = ["__pycache__", "*.__pycache__"]

setup(
    packages=find_namespace_packages(include=["olparser", "olparser.*"], exclude=CACHES)
    + [TOOLS]
    + [f"{TOOLS}.{name}" for name in find_namespace_packages("tools", exclude=["docs", "docs.*", *CACHES])],
    package_dir={TOOLS: "tools"},
    cmdclass={"build_py": BuildWithApp},
)
