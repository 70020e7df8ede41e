"""The typedefs every catalog starts with: the Atlas base model, the Purview scanner types the connector targets, and
Purview's built-in Databricks model (olparser/lineage/databricks_model.py, as a Purview account ships it).

Written for this project as plain data (not copied from Atlas or Purview). The connector's own types (spark_*,
placeholder datasets, what it adds beside the Databricks model) are not here: `ol2purview typedefs` registers them
like it does on a real Purview.
"""

from __future__ import annotations

from typing import Sequence

from olparser.jsontypes import JSON
from olparser.lineage.databricks_model import purview_databricks_typedefs


def _attr(
    name: str, type_name: str = "string", *, optional: bool = True, unique: bool = False, cardinality: str = "SINGLE"
) -> JSON:
    return {
        "name": name,
        "typeName": type_name,
        "cardinality": cardinality,
        "isOptional": optional,
        "isUnique": unique,
        "isIndexable": unique or not optional,
        "valuesMinCount": 0 if optional else 1,
        "valuesMaxCount": 1,
    }


def _entity(name: str, super_types: list[str], attributes: list[JSON], service_type: str, description: str) -> JSON:
    return {
        "category": "ENTITY",
        "name": name,
        "description": description,
        "serviceType": service_type,
        "typeVersion": "1.0",
        "superTypes": super_types,
        "attributeDefs": attributes,
    }


def _end(type_name: str, name: str, cardinality: str, *, container: bool = False, legacy: bool = False) -> JSON:
    return {
        "type": type_name,
        "name": name,
        "isContainer": container,
        "cardinality": cardinality,
        "isLegacyAttribute": legacy,
    }


def _relationship(
    name: str,
    category: str,
    end1: JSON,
    end2: JSON,
    service_type: str,
    propagate: str = "NONE",
    attributes: list[JSON] | None = None,
) -> JSON:
    """A relationshipDef; `propagate`: which way classifications flow over it (NONE, ONE_TO_TWO, TWO_TO_ONE, BOTH)."""
    return {
        "category": "RELATIONSHIP",
        "name": name,
        "description": name,
        "serviceType": service_type,
        "typeVersion": "1.0",
        "relationshipCategory": category,
        "propagateTags": propagate,
        "attributeDefs": attributes or [],
        "endDef1": end1,
        "endDef2": end2,
    }


def _enum(
    name: str, elements: Sequence[tuple[str, int, str | None]], service_type: str | None, description: str
) -> JSON:
    """An enumDef: (value, ordinal, description or None) per element."""
    return {
        "category": "ENUM",
        "name": name,
        "description": description,
        **({"serviceType": service_type} if service_type else {}),
        "typeVersion": "1.0",
        "elementDefs": [
            {"value": value, "ordinal": ordinal, **({"description": text} if text else {})}
            for value, ordinal, text in elements
        ],
    }


_CORE = "atlas_core"

_PATH_ATTRIBUTES = [
    _attr("path"),
    _attr("isFile", "boolean"),
    _attr("size", "long"),
    _attr("modifiedTime", "long"),
    _attr("contentType"),
]
# what Purview's storage scanners keep on a resource set (Learn, "Understanding resource sets": partition count,
# schema count, total size; `ol2purview catalog scan` writes partitionCount)
_RESOURCE_SET_ATTRIBUTES = [
    _attr("partitionCount", "int"),
    _attr("schemaCount", "int"),
    _attr("totalSizeBytes", "long"),
    _attr("modifiedTime", "long"),
]
_UNITY_CATALOG = "Azure Databricks"
_FABRIC = "Microsoft Fabric"
_COLUMN_ATTRIBUTES = [
    _attr("dataType"),
    _attr("isNullable", "boolean"),
    _attr("ordinalPosition", "int"),
    _attr("comment"),
]
_UC_TABLE_ATTRIBUTES = [
    _attr("catalogName"),
    _attr("schemaName"),
    _attr("tableType"),
    _attr("dataSourceFormat"),
    _attr("storageLocation"),
    _attr("comment"),
    _attr("createTime", "long"),
    _attr("modifiedTime", "long"),
]

# (type name, service type, extra attributes) for the DataSet subtypes Purview's scanners create.
_DATASET_TYPES: list[tuple[str, str, list[JSON]]] = [
    ("azure_blob_path", "Azure Blob Storage", _PATH_ATTRIBUTES),
    ("azure_blob_container", "Azure Blob Storage", [_attr("modifiedTime", "long")]),
    ("azure_datalake_gen2_path", "Azure Data Lake Storage Gen2", _PATH_ATTRIBUTES),
    ("azure_datalake_gen2_filesystem", "Azure Data Lake Storage Gen2", [_attr("modifiedTime", "long")]),
    ("azure_datalake_gen2_resource_set", "Azure Data Lake Storage Gen2", _RESOURCE_SET_ATTRIBUTES),
    ("azure_blob_resource_set", "Azure Blob Storage", _RESOURCE_SET_ATTRIBUTES),
    ("azure_datalake_gen1_path", "Azure Data Lake Storage Gen1", _PATH_ATTRIBUTES),
    ("azure_datalake_gen1_resource_set", "Azure Data Lake Storage Gen1", _RESOURCE_SET_ATTRIBUTES),
    ("azure_file", "Azure Files", _PATH_ATTRIBUTES),
    ("azure_file_share", "Azure Files", [_attr("modifiedTime", "long")]),
    ("azure_file_resource_set", "Azure Files", _RESOURCE_SET_ATTRIBUTES),
    ("aws_s3_v2_object", "Amazon S3", _PATH_ATTRIBUTES),
    ("aws_s3_v2_bucket", "Amazon S3", [_attr("modifiedTime", "long")]),
    ("aws_s3_v2_resource_set", "Amazon S3", _RESOURCE_SET_ATTRIBUTES),
    ("azure_sql_table", "Azure SQL Database", [_attr("principalId", "int"), _attr("objectType")]),
    ("azure_synapse_dedicated_sql_table", "Azure Synapse Analytics", [_attr("objectType")]),
    ("mssql_table", "SQL Server", [_attr("objectType")]),
    ("azure_postgresql_table", "Azure Database for PostgreSQL", []),
    ("postgresql_table", "PostgreSQL", []),
    ("azure_mysql_table", "Azure Database for MySQL", []),
    ("mysql_table", "MySQL", []),
    ("azure_cosmosdb_sqlapi_collection", "Azure Cosmos DB", []),
    ("azure_data_explorer_table", "Azure Data Explorer", [_attr("folder")]),
    (
        "hive_table",
        "Hive",
        [
            _attr("tableType"),
            _attr("temporary", "boolean"),
            _attr("comment"),
            _attr("createTime", "long"),
            _attr("lastAccessTime", "long"),
        ],
    ),
    ("snowflake_table", "Snowflake", []),
    ("hive_column", "Hive", [_attr("type"), _attr("comment"), _attr("position", "int")]),
    ("azure_sql_column", "Azure SQL Database", [_attr("data_type")]),
    # Purview's Azure Databricks Unity Catalog scan: databricks://{metastore}/catalogs/{c}/schemas/{s}/tables/{t}
    ("databricks_table", _UNITY_CATALOG, _UC_TABLE_ATTRIBUTES),
    ("databricks_view", _UNITY_CATALOG, [*_UC_TABLE_ATTRIBUTES, _attr("viewDefinition")]),
    ("databricks_table_column", _UNITY_CATALOG, _COLUMN_ATTRIBUTES),
    ("databricks_view_column", _UNITY_CATALOG, _COLUMN_ATTRIBUTES),
    # Purview's Microsoft Fabric scan: https://app.fabric.microsoft.com/groups/{ws}/lakehouses/{lh}/tables/{t}
    ("fabric_lakehouse_table", _FABRIC, [_attr("format"), _attr("tableType"), _attr("location")]),
    ("fabric_lakehouse_table_column", _FABRIC, _COLUMN_ATTRIBUTES),
    ("fabric_lakehouse_path", _FABRIC, _PATH_ATTRIBUTES),
]
# containers above the tables (Asset subtypes): (type name, service type, extra attributes)
_CONTAINER_TYPES: list[tuple[str, str, list[JSON]]] = [
    ("databricks_metastore", _UNITY_CATALOG, [_attr("region"), _attr("cloud")]),
    ("databricks_catalog", _UNITY_CATALOG, [_attr("comment"), _attr("catalogType")]),
    ("databricks_schema", _UNITY_CATALOG, [_attr("catalogName"), _attr("comment")]),
    ("fabric_lake_warehouse", _FABRIC, [_attr("workspaceId"), _attr("lakehouseId")]),
]
# (relationship, container type, its end, member type, its end, service type): parent -> children compositions
_COMPOSITIONS: list[tuple[str, str, str, str, str, str]] = [
    ("hive_table_columns", "hive_table", "columns", "hive_column", "table", "Hive"),
    ("azure_sql_table_columns", "azure_sql_table", "columns", "azure_sql_column", "table", "Azure SQL Database"),
    (
        "databricks_metastore_catalogs",
        "databricks_metastore",
        "catalogs",
        "databricks_catalog",
        "metastore",
        _UNITY_CATALOG,
    ),
    ("databricks_catalog_schemas", "databricks_catalog", "schemas", "databricks_schema", "catalog", _UNITY_CATALOG),
    ("databricks_schema_tables", "databricks_schema", "tables", "databricks_table", "schema", _UNITY_CATALOG),
    ("databricks_schema_views", "databricks_schema", "views", "databricks_view", "schema", _UNITY_CATALOG),
    ("databricks_table_columns", "databricks_table", "columns", "databricks_table_column", "table", _UNITY_CATALOG),
    ("databricks_view_columns", "databricks_view", "columns", "databricks_view_column", "view", _UNITY_CATALOG),
    ("fabric_lake_warehouse_tables", "fabric_lake_warehouse", "tables", "fabric_lakehouse_table", "lakehouse", _FABRIC),
    (
        "fabric_lakehouse_table_columns",
        "fabric_lakehouse_table",
        "columns",
        "fabric_lakehouse_table_column",
        "table",
        _FABRIC,
    ),
]


def _glossary_model() -> list[JSON]:
    """The glossary as Atlas keeps it (glossaries and terms are entities; a term is anchored in one glossary and
    assigned to entities by relationships, which carry a term's classifications to them), and Purview's term status
    (the Data Map spec's TermStatus; its example Type_GetByName answers this enum)."""
    relation_status = [
        ("DRAFT", 0, "being written, not yet in use"),
        ("ACTIVE", 1, "checked and in use"),
        ("DEPRECATED", 2, "on its way out"),
        ("OBSOLETE", 3, "no longer to be used"),
        ("OTHER", 99, "some other status"),
    ]
    assignment_status = [
        (value, ordinal, None)
        for ordinal, value in enumerate(
            ("DISCOVERED", "PROPOSED", "IMPORTED", "VALIDATED", "DEPRECATED", "OBSOLETE", "OTHER")
        )
    ]
    described = [_attr("shortDescription"), _attr("longDescription"), _attr("usage")]
    assignment = [
        _attr("description"),
        _attr("expression"),
        _attr("status", "AtlasGlossaryTermAssignmentStatus"),
        _attr("confidence", "int"),
        _attr("createdBy"),
        _attr("steward"),
        _attr("source"),
    ]
    return [
        _enum(
            "AtlasGlossaryTermRelationshipStatus",
            relation_status,
            _CORE,
            "How reliable a relationship between two glossary terms is",
        ),
        _enum("AtlasGlossaryTermAssignmentStatus", assignment_status, _CORE, "Where a term assignment stands"),
        _enum(
            "glossary_term_status_value",
            [("Approved", 0, None), ("Alert", 1, None), ("Expired", 2, None), ("Draft", 3, None)],
            None,
            "glossary_term_status_value",
        ),
        _entity("__internal", [], [], _CORE, "Types the catalog keeps for itself"),
        _entity(
            "AtlasGlossary",
            ["__internal"],
            [
                _attr("qualifiedName", optional=False, unique=True),
                _attr("name", optional=False),
                *described,
                _attr("language"),
            ],
            _CORE,
            "A glossary: a named set of business terms",
        ),
        _entity(
            "AtlasGlossaryTerm",
            ["__internal"],
            [
                _attr("qualifiedName", optional=False, unique=True),
                _attr("name", optional=False),
                *described,
                _attr("examples", "array<string>", cardinality="SET"),
                _attr("abbreviation"),
            ],
            _CORE,
            "A business term of a glossary",
        ),
        _relationship(
            "AtlasGlossaryTermAnchor",
            "COMPOSITION",
            _end("AtlasGlossary", "terms", "SET", container=True),
            _end("AtlasGlossaryTerm", "anchor", "SINGLE"),
            _CORE,
        ),
        _relationship(
            "AtlasGlossarySemanticAssignment",
            "ASSOCIATION",
            _end("AtlasGlossaryTerm", "assignedEntities", "SET"),
            _end("Referenceable", "meanings", "SET"),
            _CORE,
            "ONE_TO_TWO",
            assignment,
        ),
    ]


def builtin_typedefs() -> list[JSON]:
    """Every built-in typedef, dependencies first (a fresh list of fresh dicts on each call)."""
    defs: list[JSON] = [
        _entity(
            "Referenceable",
            [],
            [_attr("qualifiedName", optional=False, unique=True)],
            _CORE,
            "Anything that can be referenced by its unique qualifiedName",
        ),
        _entity(
            "Asset",
            ["Referenceable"],
            [
                _attr("name", optional=False),
                _attr("displayName"),
                _attr("description"),
                _attr("userDescription"),
                _attr("owner"),
            ],
            _CORE,
            "A named asset",
        ),
        _entity("DataSet", ["Asset"], [], _CORE, "Data that a process reads or writes"),
        _entity(
            "Process",
            ["Asset"],
            [
                _attr("inputs", "array<DataSet>", cardinality="SET"),
                _attr("outputs", "array<DataSet>", cardinality="SET"),
            ],
            _CORE,
            "A process that reads datasets and writes datasets",
        ),
        _entity("Infrastructure", ["Asset"], [], _CORE, "Servers, accounts and other infrastructure"),
        # a dataset's classifications flow to the processes that read it, and a process's to what it writes (Atlas's
        # base model: TWO_TO_ONE and ONE_TO_TWO)
        _relationship(
            "dataset_process_inputs",
            "AGGREGATION",
            _end("Process", "inputs", "SET", container=True, legacy=True),
            _end("DataSet", "inputToProcesses", "SET"),
            _CORE,
            "TWO_TO_ONE",
        ),
        _relationship(
            "process_dataset_outputs",
            "AGGREGATION",
            _end("Process", "outputs", "SET", container=True, legacy=True),
            _end("DataSet", "outputFromProcesses", "SET"),
            _CORE,
            "ONE_TO_TWO",
        ),
        # The Data Factory connection's pipeline (qualifiedName `{factory ARM id}/pipelines/{pipeline}`: the example
        # lineage answer in ../shared/atlas/purview_examples); processes the connector writes may reference it
        # (`adfPipeline`, olparser/lineage/adf.py), never write it
        _entity("adf_pipeline", ["Process"], [], "Azure Data Factory", "An Azure Data Factory pipeline"),
        _entity(
            "azure_storage_account",
            ["Infrastructure"],
            [_attr("publicAccessLevel"), _attr("createTime", "long"), _attr("modifiedTime", "long")],
            "Azure Storage",
            "An Azure storage account",
        ),
    ]
    defs += [_entity(name, ["DataSet"], list(attrs), service, name) for name, service, attrs in _DATASET_TYPES]
    defs += [_entity(name, ["Asset"], list(attrs), service, name) for name, service, attrs in _CONTAINER_TYPES]
    # the Hive metastore a Databricks workspace may point at (the model's databricks_workspace_hive_metastore ends
    # on it)
    defs.append(_entity("hive_server", ["Asset"], [], "Hive", "A Hive metastore server"))
    defs += [
        _relationship(
            name,
            "COMPOSITION",
            _end(parent, children, "SET", container=True),
            _end(member, member_end, "SINGLE"),
            service,
        )
        for name, parent, children, member, member_end, service in _COMPOSITIONS
    ]
    defs += _glossary_model()
    databricks = purview_databricks_typedefs()
    defs += databricks["entityDefs"] + databricks["relationshipDefs"]
    return defs
