"""What several features share: small references to other entities and their loaders."""
