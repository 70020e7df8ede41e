"""Getting events from the intake to the worker durably: the queue envelope, queues (Azure Storage, or SQLite
with group commit when no emulator runs), claim-check blobs for big events, the poison queue, the event archive."""
