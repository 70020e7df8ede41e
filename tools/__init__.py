"""Command-line tools around the connector: qn-tester, the local Functions host, the local catalog, replay."""
