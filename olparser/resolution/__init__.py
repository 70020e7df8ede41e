"""Which catalog asset a dataset is: the identities Purview's own scanners give the data our rules name.

Pure functions over plain data (no I/O): the candidates of a dataset, in order, and the qualifiedNames of the scanned
forms (resource sets, Unity Catalog tables, Fabric lakehouse tables). Checking which candidate exists is I/O and
lives in `olparser/adapters/catalog`.
"""
