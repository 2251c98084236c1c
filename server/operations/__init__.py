"""Operations: list (a run's Spark SQL jobs...) and detail with inputs, outputs, columns."""
