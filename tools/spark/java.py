"""Java for a local Spark: found before the session starts, so that a missing or old Java is one line that says
what to install, not pyspark's traceback. pyspark starts `$JAVA_HOME/bin/java`, else the `java` on PATH; Spark 4
needs Java 17 or newer."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Callable, Mapping

MINIMUM_VERSION = 17
INSTALL = "install Debian's openjdk-17-jre-headless (`make java` does, as root) or set JAVA_HOME to a Java 17+"
ON_A_CLUSTER = ("DATABRICKS_RUNTIME_VERSION", "SPARK_ENV_LOADED")  # Databricks, spark-submit: the cluster has Java


def java_version(output: str) -> int | None:
    """The major version in `java -version`'s output (`version "17.0.15"`, `version "1.8.0_392"` is 8)."""
    found = re.search(r'version "(\d+)(?:\.(\d+))?', output)
    if not found:
        return None
    major = int(found.group(1))
    return int(found.group(2) or 0) if major == 1 else major


def java_problem(
    env: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> str | None:
    """What keeps a local Spark from starting for want of Java, in one line; None when Java 17+ is there (or when
    this runs on a cluster, which brings its own)."""
    env = os.environ if env is None else env
    if any(name in env for name in ON_A_CLUSTER):
        return None
    home = env.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else which("java")
    if home and java is not None and not Path(java).is_file():
        return f"Spark needs Java, and JAVA_HOME ({home}) has no bin/java: {INSTALL}"
    if not java:
        return f"Spark needs Java {MINIMUM_VERSION} or newer and no `java` is on PATH (nor JAVA_HOME set): {INSTALL}"
    try:
        done = run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Spark needs Java, and {java} could not be run ({exc}): {INSTALL}"
    version = java_version(done.stderr + done.stdout)
    if version is not None and version < MINIMUM_VERSION:
        return f"Spark needs Java {MINIMUM_VERSION} or newer, and {java} is Java {version}: {INSTALL}"
    return None
