"""A runtime whose catalog rejects a type it does not know: what goes to the poison queue at once."""

from __future__ import annotations

from olparser.adapters.catalog import CatalogRejected
from olparser.adapters.delivery.queues import SqliteQueueService
from olparser.naming import MappingEngine

RULE_LIST = [
    {
        "name": "kafkaTopic",
        "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "kafka"}],
        "qualifiedName": "kafka://{nameGroups[0]}",
        "purviewDataType": "kafka_topic_made_up",
    },
    {
        "name": "kafkaCompacted",
        "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "kafkac"}],
        "qualifiedName": "kafkac://{nameGroups[0]}",
        "purviewDataType": "kafka_topic_made_up",
    },
    {
        "name": "lake",
        "parserConditions": [{"op1": "prefix", "compare": "=", "op2": "abfss"}],
        "qualifiedName": "https://{nameGroups[0]}",
        "purviewDataType": "azure_datalake_gen2_path",
    },
]


RULES = MappingEngine.from_rules(RULE_LIST)


UNKNOWN = CatalogRejected(400, "ATLAS-400-00-014", "Type ENTITY with name kafka_topic_made_up does not exist")


class Runtime:
    """The two parts poison_at_once uses, real ones: the mapping engine and SQLite queues."""

    def __init__(self, service: SqliteQueueService) -> None:
        self.service = service

    def engine(self) -> MappingEngine:
        return RULES

    def queue_service(self) -> SqliteQueueService:
        return self.service
