"""Runs: catalogue list with filters, and the run detail as a DataHub DataProcessInstance."""
