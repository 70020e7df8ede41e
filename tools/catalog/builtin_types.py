"""The typedefs every catalog starts with: the Atlas base model and the Purview scanner types the connector targets.

Written for this project as plain data (not copied from Atlas or Purview). The connector's own types (databricks_*,
spark_*, placeholder datasets) are not here: `ol2purview typedefs` registers them like it does on a real Purview.
"""
from __future__ import annotations

from typing import Any

JSON = dict[str, Any]


def _attr(name: str, type_name: str = "string", *, optional: bool = True, unique: bool = False,
          cardinality: str = "SINGLE") -> JSON:
    return {"name": name, "typeName": type_name, "cardinality": cardinality, "isOptional": optional,
            "isUnique": unique, "isIndexable": unique or not optional, "valuesMinCount": 0 if optional else 1,
            "valuesMaxCount": 1}


def _entity(name: str, super_types: list[str], attributes: list[JSON], service_type: str, description: str) -> JSON:
    return {"category": "ENTITY", "name": name, "description": description, "serviceType": service_type,
            "typeVersion": "1.0", "superTypes": super_types, "attributeDefs": attributes}


def _end(type_name: str, name: str, cardinality: str, *, container: bool = False, legacy: bool = False) -> JSON:
    return {"type": type_name, "name": name, "isContainer": container, "cardinality": cardinality,
            "isLegacyAttribute": legacy}


def _relationship(name: str, category: str, end1: JSON, end2: JSON, service_type: str) -> JSON:
    return {"category": "RELATIONSHIP", "name": name, "description": name, "serviceType": service_type,
            "typeVersion": "1.0", "relationshipCategory": category, "propagateTags": "NONE",
            "attributeDefs": [], "endDef1": end1, "endDef2": end2}


_CORE = "atlas_core"

_PATH_ATTRIBUTES = [_attr("path"), _attr("isFile", "boolean"), _attr("size", "long"), _attr("modifiedTime", "long"),
                    _attr("contentType")]

# (type name, service type, extra attributes) for the DataSet subtypes Purview's scanners create.
_DATASET_TYPES: list[tuple[str, str, list[JSON]]] = [
    ("azure_blob_path", "Azure Blob Storage", _PATH_ATTRIBUTES),
    ("azure_blob_container", "Azure Blob Storage", [_attr("modifiedTime", "long")]),
    ("azure_datalake_gen2_path", "Azure Data Lake Storage Gen2", _PATH_ATTRIBUTES),
    ("azure_datalake_gen2_filesystem", "Azure Data Lake Storage Gen2", [_attr("modifiedTime", "long")]),
    ("azure_datalake_gen2_resource_set", "Azure Data Lake Storage Gen2",
     [_attr("partitionCount", "int"), _attr("schemaCount", "int"), _attr("totalSizeBytes", "long"),
      _attr("modifiedTime", "long")]),
    ("azure_datalake_gen1_path", "Azure Data Lake Storage Gen1", _PATH_ATTRIBUTES),
    ("azure_sql_table", "Azure SQL Database", [_attr("principalId", "int"), _attr("objectType")]),
    ("azure_synapse_dedicated_sql_table", "Azure Synapse Analytics", [_attr("objectType")]),
    ("mssql_table", "SQL Server", [_attr("objectType")]),
    ("azure_postgresql_table", "Azure Database for PostgreSQL", []),
    ("postgresql_table", "PostgreSQL", []),
    ("azure_mysql_table", "Azure Database for MySQL", []),
    ("mysql_table", "MySQL", []),
    ("azure_cosmosdb_sqlapi_collection", "Azure Cosmos DB", []),
    ("azure_data_explorer_table", "Azure Data Explorer", [_attr("folder")]),
    ("hive_table", "Hive", [_attr("tableType"), _attr("temporary", "boolean"), _attr("comment"),
                            _attr("createTime", "long"), _attr("lastAccessTime", "long")]),
    ("snowflake_table", "Snowflake", []),
    ("hive_column", "Hive", [_attr("type"), _attr("comment"), _attr("position", "int")]),
    ("azure_sql_column", "Azure SQL Database", [_attr("data_type")]),
]


def builtin_typedefs() -> list[JSON]:
    """Every built-in typedef, dependencies first (a fresh list of fresh dicts on each call)."""
    defs: list[JSON] = [
        _entity("Referenceable", [], [_attr("qualifiedName", optional=False, unique=True)], _CORE,
                "Anything that can be referenced by its unique qualifiedName"),
        _entity("Asset", ["Referenceable"],
                [_attr("name", optional=False), _attr("displayName"), _attr("description"), _attr("userDescription"),
                 _attr("owner")], _CORE, "A named asset"),
        _entity("DataSet", ["Asset"], [], _CORE, "Data that a process reads or writes"),
        _entity("Process", ["Asset"],
                [_attr("inputs", "array<DataSet>", cardinality="SET"),
                 _attr("outputs", "array<DataSet>", cardinality="SET")], _CORE,
                "A process that reads datasets and writes datasets"),
        _entity("Infrastructure", ["Asset"], [], _CORE, "Servers, accounts and other infrastructure"),
        _relationship("dataset_process_inputs", "AGGREGATION",
                      _end("Process", "inputs", "SET", container=True, legacy=True),
                      _end("DataSet", "inputToProcesses", "SET"), _CORE),
        _relationship("process_dataset_outputs", "AGGREGATION",
                      _end("Process", "outputs", "SET", container=True, legacy=True),
                      _end("DataSet", "outputFromProcesses", "SET"), _CORE),
        _entity("azure_storage_account", ["Infrastructure"],
                [_attr("publicAccessLevel"), _attr("createTime", "long"), _attr("modifiedTime", "long")],
                "Azure Storage", "An Azure storage account"),
    ]
    defs += [_entity(name, ["DataSet"], list(attrs), service, name) for name, service, attrs in _DATASET_TYPES]
    defs += [
        _relationship("hive_table_columns", "COMPOSITION", _end("hive_table", "columns", "SET", container=True),
                      _end("hive_column", "table", "SINGLE"), "Hive"),
        _relationship("azure_sql_table_columns", "COMPOSITION",
                      _end("azure_sql_table", "columns", "SET", container=True),
                      _end("azure_sql_column", "table", "SINGLE"), "Azure SQL Database"),
    ]
    return defs
