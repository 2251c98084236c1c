"""Namespace and dataset-name normalisation shared by the consumer (writes) and server (reads).

The server must look rows up with exactly the keys the consumer wrote, so every naming rule
lives here and nowhere else. Rules follow the OpenLineage naming spec
(https://openlineage.io/docs/spec/naming); every function is pure, total and memoised.

One rule for dataset and job namespaces alike:

- A namespace with ``://`` (or one of the spec's scheme-only forms ``jdbc:...``,
  ``file:/path``, ``arn:aws:glue:...``) is a URL. Scheme aliases fold into one family
  (``s3a`` -> ``s3``, ``postgresql`` -> ``postgres``, ``thrift`` -> ``hive``); scheme and host
  are lower-cased; credentials, path, query and trailing slashes are dropped; the family's
  default port is added; loopback hosts become ``localhost``; a comma-separated host list is
  one location with several addresses.
- A bare word naming a storage family (``bigquery``, ``file``, ``hive``) is that family.
- Any other bare word (``default``, ``airflow-prod``, ``my-datasource-namespace``) is a
  free-form namespace: type ``namespace``, original case kept.
- Anything else is type ``unknown``, named by the stripped input, so nothing is lost.

Every address is the canonical spelling of a namespace (``postgres://db:5432``, ``bigquery``,
``default``): parsing an address gives back a namespace with exactly that address, so an
address identifies one location.
"""

from shared.naming.datasets import normalize_dataset_name
from shared.naming.families import FREE_FORM, UNKNOWN
from shared.naming.namespaces import Namespace, parse_job_namespace, parse_namespace

__all__ = [
    "FREE_FORM",
    "UNKNOWN",
    "Namespace",
    "normalize_dataset_name",
    "parse_job_namespace",
    "parse_namespace",
]
