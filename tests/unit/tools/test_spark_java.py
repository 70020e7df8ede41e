"""A Spark command finds Java before it starts a session (tools/spark/java.py): one line saying what is missing and
what to install. The `java` lookup and `java -version` are faked here (the boundary); tests/e2e/test_fail_fast.py
runs the command with no Java on PATH."""

import subprocess

import pytest

from tools.spark.java import INSTALL, java_problem, java_version


def runs(output: str):
    def run(command, **_kwargs):
        return subprocess.CompletedProcess(command, 0, "", output)

    return run


# `java -version` output of Debian's openjdk-17 (this machine) and of a Java 8 (its 1.x numbering)
JAVA_17 = 'openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)'
JAVA_8 = 'openjdk version "1.8.0_392"\nOpenJDK Runtime Environment (build 1.8.0_392-b08)'


@pytest.mark.parametrize(
    "output, version", [(JAVA_17, 17), (JAVA_8, 8), ('java version "21" 2023-09-19', 21), ("no version here", None)]
)
def test_the_major_version_is_read_from_java_version(output, version):
    assert java_version(output) == version


def test_java_17_on_path_is_enough():
    assert java_problem({}, which=lambda _name: "/usr/bin/java", run=runs(JAVA_17)) is None


def test_no_java_says_what_to_install():
    assert java_problem({}, which=lambda _name: None, run=runs("")) == (
        f"Spark needs Java 17 or newer and no `java` is on PATH (nor JAVA_HOME set): {INSTALL}"
    )
    assert "openjdk-17-jre-headless" in INSTALL and "`make java`" in INSTALL


def test_an_old_java_is_named(tmp_path):
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text("")
    assert java_problem({"JAVA_HOME": str(tmp_path)}, which=lambda _name: None, run=runs(JAVA_8)) == (
        f"Spark needs Java 17 or newer, and {java} is Java 8: {INSTALL}"
    )


def test_a_java_home_without_java_is_named(tmp_path):
    assert java_problem({"JAVA_HOME": str(tmp_path)}, which=lambda _name: "/usr/bin/java", run=runs(JAVA_17)) == (
        f"Spark needs Java, and JAVA_HOME ({tmp_path}) has no bin/java: {INSTALL}"
    )


def test_on_a_cluster_the_cluster_brings_java():
    assert java_problem({"DATABRICKS_RUNTIME_VERSION": "15.4"}, which=lambda _name: None, run=runs("")) is None
