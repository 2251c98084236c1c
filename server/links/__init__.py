"""Link search in the manner of Google Data Lineage: dataset -> dataset edges and their makers."""
