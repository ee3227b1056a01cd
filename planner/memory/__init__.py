"""Memory: the session history (short-term) and long-term memories with their embeddings and background upkeep."""
