"""Class Data Sharing for a local Spark session: its JVM maps the classes Spark loads from an archive instead of
loading and verifying them again, which is about 2 s of CPU of every local run's start (a third of the session start
on 2 cores).

The command line's first local session on a machine (per Java and Spark installation) has its JVM write the archive
as it exits (`-XX:ArchiveClassesAtExit`, Java 13 and later) into a file of its own; `publish` waits for that JVM to
exit and renames the file into place, so that no JVM ever maps a file another is still writing. Every later local
session maps it (`-XX:SharedArchiveFile`); a JVM that cannot use it (another Java, another class path) loads its
classes as before. The archive is about 110 MB under $XDG_CACHE_HOME/ol2purview (~/.cache/ol2purview); delete it at
any time.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

EXIT_SECONDS = 120  # how long `publish` waits for the JVM to write the archive and exit
WRITE_OPTION = "-XX:ArchiveClassesAtExit="
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"  # an archive it cannot use is no news: the JVM loads its classes


def archive_path() -> Path | None:
    """The archive for the Java that Spark will start and this pyspark; None when there is no such Java or the path
    cannot go into a JVM option (white space)."""
    import pyspark

    java_home = os.environ.get("JAVA_HOME")
    java = os.path.join(java_home, "bin", "java") if java_home else shutil.which("java")
    if java is None:
        return None
    identity = f"{os.path.realpath(java)}\0{os.path.dirname(pyspark.__file__)}\0{pyspark.__version__}"
    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ol2purview"
    path = folder / f"spark-classes-{hashlib.sha256(identity.encode()).hexdigest()[:16]}.jsa"
    return None if any(c.isspace() for c in str(path)) else path


def java_options(write: bool) -> str:
    """The JVM options that map the archive, else (when `write`) that write it at exit into a file of this
    process's own (see `publish`); else none."""
    path = archive_path()
    if path is None:
        return ""
    if path.is_file():
        return f"-XX:SharedArchiveFile={path} {QUIET}"
    if not write:
        return ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return ""
    return f"{WRITE_OPTION}{path.with_name(f'{path.stem}.{os.getpid()}.tmp')} {QUIET}"


def publish(spark: Any) -> None:
    """When the session's JVM writes the archive (`java_options(write=True)`): stop the session, let its JVM exit,
    then put the archive in place (or remove what it left). Any other session is left as it is."""
    options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "")
    pending = next(
        (Path(option[len(WRITE_OPTION) :]) for option in options.split() if option.startswith(WRITE_OPTION)), None
    )
    if pending is None:
        return
    from pyspark import SparkContext

    spark.stop()

    process = getattr(SparkContext._gateway, "proc", None)  # the JVM, started by pyspark
    final = pending.with_name(pending.name.split(".", 1)[0] + ".jsa")
    try:
        exited = None
        if process is not None:
            process.stdin.close()  # the JVM exits when its driver's pipe closes
            exited = process.wait(EXIT_SECONDS)
        # only a JVM that exited normally has finished its archive (one killed while writing leaves a partial file)
        if exited == 0 and pending.is_file() and pending.stat().st_size > 0 and not final.exists():
            os.replace(pending, final)
    except (OSError, subprocess.TimeoutExpired):
        pass
    finally:
        pending.unlink(missing_ok=True)
