"""Threadline read API: FastAPI over the lineage database, read through a read-only role."""
