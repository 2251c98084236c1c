"""Lineage graphs: breadth-first expansion from datasets, jobs, runs or operations."""
