"""Ingest: HTTP endpoints for cameras, clocks, arbiters and e-scoresheets, producing to Kafka."""
