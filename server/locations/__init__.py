"""Locations: catalogue, detail, and the admin writes (addresses, external id, merge)."""
