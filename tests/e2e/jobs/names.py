"""Names the jobs use and the tests look for, in a module without pyspark imports.

The test modules import these, not the job modules, so collecting the e2e tier never
imports pyspark: without it, the tier fails in its fixtures with a one-line message.
"""

FILES_APP = "e2e_files_job"
HIVE_APP = "e2e_hive_job"
HIVE_DATABASE = "e2e_shop"
JDBC_APP_PREFIX = "e2e_jdbc_"
FAILING_APP = "e2e_failing_job"
FAILING_ERROR = "e2e: row 7 is poisoned"
