"""The Avro schemas of the event catalogue, one .avsc per event type (loaded as package data)."""
