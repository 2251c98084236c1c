"""Jobs: catalogue list and search, lookup by OpenLineage name, detail with run history."""
