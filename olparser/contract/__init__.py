"""The OpenLineage event contract: decoding request bodies, validating events, stripping heavy facets.

read_event(body, headers, limits) -> AcceptedEvent            # POST /lineage, raises IngestError
read_batch(body, headers, limits) -> [AcceptedEvent | IngestError]  # POST /lineage/batch
batch_response(outcomes) -> (status, body | None)            # the batch answer of OpenLineage.yml
"""

from olparser.contract.batch import batch_response
from olparser.contract.errors import IngestError
from olparser.contract.limits import IntakeLimits
from olparser.contract.reader import AcceptedEvent, read_batch, read_event

__all__ = ["AcceptedEvent", "IngestError", "IntakeLimits", "batch_response", "read_batch", "read_event"]
