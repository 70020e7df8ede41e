"""The run-history stores (adapters): SQLite (one local file) and Azure Table storage. The interface and what they
share are in olparser/history/store.py."""
