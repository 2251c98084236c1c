"""Datasets: catalogue list and search, lookup by OpenLineage name, detail view."""
